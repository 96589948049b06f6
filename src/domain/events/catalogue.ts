/**
 * Every kind of event the controller emits: component, severity and a stable hex code, so a
 * monitoring system can alert on codes without parsing text. docs/events.md lists them.
 */

/** Severity scale (larger is worse), spaced like syslog's so levels can be added between. */
export const SEVERITY = {
  debug: 10,
  info: 20,
  notice: 30,
  warning: 40,
  error: 50,
  critical: 60,
} as const;

export interface EventKind {
  component: string;
  severity: number;
  hex: string;
  title: string;
}

const kind = (component: string, severity: number, hex: string, title: string): EventKind => ({ component, severity, hex, title });

/** The catalogue; codes are never reused for another meaning. 0x1xxx system, 0x2xxx auth, 0x3xxx settings, 0x4xxx inventory, 0x6xxx requests and jobs, 0x7xxx bots and the brain. */
export const EVENT = {
  started: kind('system', SEVERITY.notice, '0x1001', 'Controller started'),
  stopping: kind('system', SEVERITY.notice, '0x1002', 'Controller stopping'),
  reportCreated: kind('system', SEVERITY.info, '0x1003', 'Diagnostics report created'),
  supportIssue: kind('system', SEVERITY.info, '0x1004', 'Support issue created'),
  certificateExpiring: kind('system', SEVERITY.warning, '0x1005', 'TLS certificate expires soon'),
  reloaded: kind('system', SEVERITY.notice, '0x1006', 'Configuration reloaded'),
  reloadRefused: kind('system', SEVERITY.error, '0x1007', 'Configuration reload refused'),
  storageFull: kind('system', SEVERITY.error, '0x1008', 'Storage full: writes refused'),
  storageWritable: kind('system', SEVERITY.notice, '0x1009', 'Storage writable again'),
  diskSpaceLow: kind('system', SEVERITY.warning, '0x100A', 'Disk space low'),
  historyPruned: kind('system', SEVERITY.info, '0x100B', 'History pruned into the archive'),
  historyUnarchived: kind('system', SEVERITY.error, '0x100C', 'History pruned without its archive: the store was over its share of the disk'),
  historyArchiveDropped: kind('system', SEVERITY.warning, '0x100D', 'History archive over its quota: oldest files removed'),
  storeBudgetHigh: kind('system', SEVERITY.warning, '0x100E', 'Store at 80 % of its share of the disk'),
  storeBudgetCritical: kind('system', SEVERITY.error, '0x100F', 'Store at 90 % of its share of the disk'),
  certificateNotYetValid: kind('system', SEVERITY.warning, '0x1010', 'TLS certificate not yet valid by the box\'s clock'),
  pairTookOver: kind('system', SEVERITY.warning, '0x1011', 'This box took over as the active one of the pair'),
  pairUnprotected: kind('system', SEVERITY.error, '0x1012', 'Pair unprotected: the standby or the witness does not answer'),
  pairProtected: kind('system', SEVERITY.notice, '0x1013', 'Pair protected again'),
  loginFailed: kind('auth', SEVERITY.warning, '0x2001', 'Login failed'),
  lockedOut: kind('auth', SEVERITY.error, '0x2002', 'Too many failed attempts: temporarily locked'),
  apiKeyCreated: kind('auth', SEVERITY.notice, '0x2003', 'API key created'),
  apiKeyDeleted: kind('auth', SEVERITY.notice, '0x2004', 'API key deleted'),
  apiKeyPermissions: kind('auth', SEVERITY.notice, '0x2005', 'API key permissions changed'),
  roleCreated: kind('auth', SEVERITY.notice, '0x2006', 'Role created'),
  roleUpdated: kind('auth', SEVERITY.notice, '0x2007', 'Role changed'),
  roleDeleted: kind('auth', SEVERITY.notice, '0x2008', 'Role deleted'),
  userCreated: kind('auth', SEVERITY.info, '0x2009', 'User account created'),
  userUpdated: kind('auth', SEVERITY.info, '0x200A', 'User account changed'),
  passwordReset: kind('auth', SEVERITY.info, '0x200B', 'Password changed with a reset'),
  settingChanged: kind('settings', SEVERITY.notice, '0x3001', 'Setting changed'),
  settingReset: kind('settings', SEVERITY.notice, '0x3002', 'Setting restored to its default'),
  skuDeleted: kind('inventory', SEVERITY.info, '0x4001', 'SKU deleted'),
  requestCreated: kind('requests', SEVERITY.info, '0x6001', 'Request accepted'),
  requestRefused: kind('requests', SEVERITY.warning, '0x6002', 'Request aborted by validation'),
  requestStatus: kind('requests', SEVERITY.info, '0x6003', 'Request status changed'),
  jobStatus: kind('jobs', SEVERITY.debug, '0x6004', 'Job status changed'),
  jobAborted: kind('jobs', SEVERITY.error, '0x6005', 'Job aborted'),
  cancelRequested: kind('requests', SEVERITY.notice, '0x6006', 'Request cancellation asked'),
  jobTriggered: kind('jobs', SEVERITY.info, '0x6007', 'Work at a balcony confirmed'),
  jobError: kind('jobs', SEVERITY.error, '0x6008', 'Job failed too often: it waits for a person'),
  botFault: kind('bots', SEVERITY.error, '0x7001', 'Bot fault'),
  botOffline: kind('bots', SEVERITY.warning, '0x7002', 'Bot link lost'),
  botOnline: kind('bots', SEVERITY.info, '0x7003', 'Bot link up'),
  storageStatus: kind('system', SEVERITY.notice, '0x7004', 'Storage status changed'),
  brainRestarted: kind('system', SEVERITY.notice, '0x7005', 'Brain restarted'),
  botOnboarded: kind('bots', SEVERITY.notice, '0x7006', 'Bot onboarded'),
  botOffboarded: kind('bots', SEVERITY.notice, '0x7007', 'Bot offboarded'),
  botsDeleted: kind('bots', SEVERITY.warning, '0x7008', 'Bots removed from the database'),
  lineDown: kind('lines', SEVERITY.error, '0x7009', 'Radio line down'),
  lineUp: kind('lines', SEVERITY.notice, '0x700A', 'Radio line up'),
  simulatorRestarted: kind('lines', SEVERITY.error, '0x700B', 'Simulated site ended and was started again'),
} as const;

/** Every kind, for documentation and tests. */
export const EVENT_KINDS: readonly EventKind[] = Object.values(EVENT);
