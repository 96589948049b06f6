/**
 * The permission catalogue: one key per action an administrator would grant separately,
 * grouped as the spec's ApiKeyPermissionResponse shows (`group`, `key`). A `:manage` key
 * composes the other keys of its group, so a role can be given a whole area at once.
 * Every route names one of these keys (or is public / needs only a valid identity).
 */

export interface PermissionDef {
  key: string;
  group: string;
  description: string;
  /** Keys this one grants as well. */
  composes?: readonly string[];
}

const defs: PermissionDef[] = [];

/**
 * A group of keys, and its `:manage` key composing them all but `apart`: actions that must be
 * granted by name, never with a whole area (removing bots behind the brain's back).
 */
function group(name: string, actions: Record<string, string>, manage?: string, apart: readonly string[] = []): void {
  const keys: string[] = [];
  for (const [action, description] of Object.entries(actions)) {
    const key = `${name}:${action}`;
    if (!apart.includes(action)) keys.push(key);
    defs.push({ key, group: name, description });
  }
  if (manage) defs.push({ key: `${name}:manage`, group: name, description: manage, composes: keys });
}

group('users', {
  view: 'List users',
  create: 'Create user accounts',
  update: 'Change users\' names, emails and roles',
}, 'Everything about users');
group('roles', {
  view: 'List roles and the roles one may assign',
  create: 'Create roles below one\'s own authority level',
  update: 'Edit roles below one\'s own authority level',
  delete: 'Delete custom roles below one\'s own authority level',
}, 'Everything about roles');
group('permissions', { view: 'List permission keys and who holds them' });
group('api_keys', {
  view: 'List API keys, with the values of those within one\'s own permissions',
  create: 'Create API keys (with permissions one holds)',
  update: 'Replace the permissions of API keys',
  delete: 'Delete API keys',
}, 'Everything about API keys');
group('settings', {
  view: 'Read settings',
  update: 'Change system settings',
  update_users: 'Change other users\' settings',
}, 'Everything about settings');
group('skus', {
  view: 'List SKUs',
  create: 'Create SKUs',
  update: 'Edit SKUs and upload their images',
  delete: 'Delete SKUs',
}, 'Everything about SKU master data');
group('inventory', {
  view: 'Read the inventory view',
  boxes: 'Create, change, swap and delete boxes',
  loads: 'Add, change and remove loads',
}, 'Everything about inventory');
group('requests', {
  view: 'List requests and their job graphs',
  fulfillment: 'Create fulfillment requests',
  replenishment: 'Create replenishment requests',
  fetch: 'Create fetch requests',
  putaway: 'Create putaway requests',
  system_control: 'Create system control requests (pause, resume, charging, on/offboarding, RFID)',
  carrier_onboarding: 'Create carrier onboarding requests',
  cancel_all: 'Cancel all open requests',
}, 'Everything about requests');
group('jobs', {
  view: 'List jobs',
  trigger: 'Confirm work at a balcony (trigger waiting jobs)',
}, 'Everything about jobs');
group('events', { view: 'Read the event log and its live stream' });
group('system', {
  view: 'Read levels, balconies, bots and the storage status',
  report: 'Create diagnostics reports',
  restart_brain: 'Restart the orchestration brain',
  charge_bots: 'Send all bots to charge',
  balcony_leds: 'Set balcony LED sequences',
  delete_bots: 'Remove bots from the database (maintenance; granted by name only, not by system:manage)',
}, 'Everything about the system but removing bots', ['delete_bots']);
group('workflows', {
  view: 'Read scanner workflows',
  create: 'Create scanner workflows',
  delete: 'Delete scanner workflows',
}, 'Everything about workflows');
group('support', { create_issue: 'Send support issues', view: 'Read support issues and their files (they hold reporters\' contact details)' });
group('kpi', { view: 'Read what the site did: carriers, picks and busy time per balcony and hour, bot time by state, lead times, errors' });
group('metrics', { view: 'Scrape /metrics, the Prometheus text format of the controller\'s figures (for a monitoring system\'s API key)' });

/** Every permission, in catalogue order. */
export const PERMISSIONS: readonly PermissionDef[] = defs;

const byKey = new Map(defs.map((d) => [d.key, d]));

/** Whether a key is in the catalogue. */
export function isPermission(key: string): boolean {
  return byKey.has(key);
}

/** The keys a set of granted keys amounts to, composites expanded. */
export function expandPermissions(granted: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const key of granted) {
    const def = byKey.get(key);
    if (!def) continue; // a key removed from the catalogue grants nothing
    out.add(key);
    for (const part of def.composes ?? []) out.add(part);
  }
  return out;
}

/** Every key in the catalogue. */
export const ALL_PERMISSION_KEYS: readonly string[] = defs.map((d) => d.key);
