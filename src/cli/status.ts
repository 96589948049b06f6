/**
 * `warehouse-controller status [--json]`: is the daemon up, and how is the site. Exit 0 when
 * it runs and is healthy, 1 when it runs degraded (storage status ERROR, a line down, a disk
 * fault, a stale status file), 3 when it does not run, 4 when this cannot be told.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { STATUS_FILE, STATUS_PERIOD_MS, type DaemonStatus } from '../status-file.js';
import { requests } from '../domain/requests/records.js';
import { eventRecords } from '../domain/events/events.js';
import { SEVERITY } from '../domain/events/catalogue.js';
import { VERSION } from '../version.js';
import { daemonPid, existingStateDir, EXIT, openStoreReadOnly } from './context.js';
import { formatTable } from './table.js';
import type { StorageReport } from '../domain/history/store-usage.js';
import type { PairStatus } from '../replication/pair.js';

/** The daemon's last status.json and whether it is older than three periods. */
export function readDaemonStatus(stateDir: string, now = Date.now()): { status: DaemonStatus; stale: boolean } | undefined {
  try {
    const status = JSON.parse(readFileSync(path.join(stateDir, STATUS_FILE), 'utf8')) as DaemonStatus;
    return { status, stale: now - Date.parse(status.written_at) > 3 * STATUS_PERIOD_MS };
  } catch {
    return undefined;
  }
}

export interface StatusReport {
  running: boolean;
  pid: number | null;
  state_dir: string;
  cli_version: string;
  daemon: DaemonStatus | null;
  stale: boolean;
  problems: string[];
  requests_open: Record<string, number>;
  last_errors: { id: number; at: string; code: string; component: string; description: string }[];
}

/** Gathers the report from the lock, status.json and the store. */
export async function statusReport(config: Config): Promise<StatusReport> {
  const stateDir = existingStateDir(config);
  const pid = daemonPid(stateDir);
  const running = pid !== undefined;
  const file = running ? readDaemonStatus(stateDir) : undefined;
  const store = await openStoreReadOnly(stateDir, config);
  try {
    const requestsOpen: Record<string, number> = {};
    for (const r of store.collection(requests).findBy('open', 1)) requestsOpen[r.status] = (requestsOpen[r.status] ?? 0) + 1;
    const lastErrors: StatusReport['last_errors'] = [];
    let seen = 0;
    for (const e of store.collection(eventRecords).range(undefined, true)) {
      if (++seen > 5000 || lastErrors.length === 5) break;
      if (e.severity >= SEVERITY.error) lastErrors.push({ id: e.id, at: new Date(e.created_at).toISOString(), code: e.hex_value, component: e.component, description: e.description });
    }
    const problems: string[] = [];
    const daemon = file?.status;
    if (running && !daemon) problems.push('the daemon runs but has written no status.json yet (starting?)');
    if (file?.stale) problems.push(staleProblem(file.status));
    if (daemon?.storage_status === 'ERROR') problems.push('storage status ERROR');
    if (daemon?.storage.fault) problems.push(daemon.storage.fault);
    problems.push(...storeProblems(daemon?.store));
    if (daemon?.replication?.role === 'active' && daemon.replication.warning) problems.push(`replicated pair: ${daemon.replication.warning}`);
    for (const line of daemon?.lines ?? []) if (!line.up) problems.push(`radio line of level ${line.level_id} (${line.device}) down since ${new Date(line.since).toISOString()}: ${line.reason ?? 'unknown reason'}`);
    return {
      running, pid: pid ?? null, state_dir: stateDir, cli_version: VERSION, daemon: daemon ?? null, stale: file?.stale ?? false,
      problems, requests_open: requestsOpen, last_errors: lastErrors,
    };
  } finally {
    await store.close();
  }
}

/** The problem of a status.json not written for three periods: the daemon holds its lock but may be hung. */
function staleProblem(status: DaemonStatus): string {
  return `status.json is stale (written ${status.written_at}): the daemon may be hung`;
}

/** Below this many days of room at the present growth, status calls the store a problem. */
export const SHORT_FORECAST_DAYS = 30;

/** What about the store a technician must act on: a short forecast, a budget nearly used, pruning that fails. */
export function storeProblems(store: StorageReport | undefined): string[] {
  if (!store) return [];
  const out: string[] = [];
  if (store.days_until_full !== null && store.days_until_full < SHORT_FORECAST_DAYS) out.push(`the disk under the store is full in ${store.days_until_full} days at the present growth (docs/operations.md, "Keeping history")`);
  if (store.days_until_budget !== null && store.days_until_budget < SHORT_FORECAST_DAYS) out.push(`the store reaches its share of the disk in ${store.days_until_budget} days: then its oldest history is pruned whatever its age`);
  if (store.budget_used_percent !== null && store.budget_used_percent >= 90) out.push(`the store takes ${store.budget_used_percent} % of its share of the disk`);
  if (store.history.last_error) out.push(`history pruning failed: ${store.history.last_error}`);
  return out;
}

const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;

/** The store's lines of the report: size, free pages, share, growth, forecast, history kept and pruned. */
function storeLines(s: StorageReport): string[] {
  const share = s.budget_bytes === null ? '' : `; ${s.budget_used_percent} % of its share of the disk (${gib(s.budget_bytes)})`;
  const growth = s.growth_bytes_per_day === null
    ? 'growth: not known yet (under an hour of samples)'
    : `growth: ${mib(s.growth_bytes_per_day)} a day${s.days_until_full === null ? ', not filling the disk' : `, the disk full in ${s.days_until_full} days`}${s.days_until_budget === null ? '' : `, the share used in ${s.days_until_budget} days`}`;
  const h = s.history;
  const pruned = h.last_pass_at === null ? 'no pass yet' : `last pass ${new Date(h.last_pass_at).toISOString()}, since start ${h.pruned_requests} requests, ${h.pruned_jobs} jobs, ${h.pruned_events} events, ${h.pruned_support_issues} support issues pruned`;
  return [
    `store: ${mib(s.used_bytes)} used in a ${mib(s.file_bytes)} file (${mib(s.free_bytes)} free pages)${share}`,
    growth,
    `history: kept ${h.retention_days} days (events ${h.event_retention_days}); ${pruned}; archive ${s.archive.dir}: ${s.archive.files} files, ${mib(s.archive.bytes)} of ${gib(s.archive.quota_bytes)}`,
  ];
}

/** The pair's line of the report: this box's role, its peer, how far behind, the etcd members. */
function pairLine(p: PairStatus): string {
  const role = p.role === 'active' ? `ACTIVE (term ${p.term})` : p.role;
  const lag = p.lag_entries === null ? '' : `, ${p.lag_entries} entries behind`;
  const peer = p.role === 'active'
    ? (p.peer ? `; standby "${p.peer.name}" at entry ${p.peer.seq}${lag}` : '; NO STANDBY follows')
    : `; active box: ${p.leader ?? 'none'}${lag}`;
  const members = p.members ? `; etcd ${p.members.healthy}/${p.members.total} members answer` : '';
  return `pair: this box "${p.name}" is ${role} since ${p.since}, at log entry ${p.seq}${peer}${members}${p.warning ? ` (${p.warning})` : ''}`;
}

/** The exit status of a report. */
export function statusExit(report: StatusReport): number {
  if (!report.running) return EXIT.notRunning;
  return report.problems.length > 0 ? EXIT.failure : EXIT.ok;
}

const gib = (n: number | null) => (n === null ? 'unknown' : `${(n / 1024 ** 3).toFixed(1)} GiB`);

/** The report for a person. */
export function formatStatus(r: StatusReport): string {
  const out: string[] = [];
  const d = r.daemon;
  // Stale, the daemon's figures below are from before it stopped writing: said before any of
  // them, where a technician starts reading, not at the end of the report.
  const stale = r.stale && d ? staleProblem(d) : undefined;
  if (stale) out.push(`STALE: ${stale}; its storage, lines and bots below are from then`, '');
  if (!r.running) out.push(`warehouse-controller: not running (state ${r.state_dir})`);
  else out.push(`warehouse-controller ${d?.version ?? '?'}: running, pid ${r.pid}${d ? `, since ${d.started_at}, port ${d.port}` : ''}`);
  if (d) {
    out.push(`storage status: ${d.storage_status}; disk: ${gib(d.storage.free_bytes)} free${d.storage.full ? ' (FULL)' : ''}`);
    if (d.store) out.push(...storeLines(d.store));
    out.push(`certificate: ${d.certificate.file}, valid to ${d.certificate.valid_to}`);
    if (d.replication) out.push(pairLine(d.replication));
    const byLevel = new Map<number, { online: number; offline: number; charging: number }>();
    for (const b of d.bots) {
      const c = byLevel.get(b.level_id) ?? { online: 0, offline: 0, charging: 0 };
      if (b.online) c.online++;
      else c.offline++;
      if (b.is_charging) c.charging++;
      byLevel.set(b.level_id, c);
    }
    out.push('', formatTable(['LEVEL', 'LINE', 'DEVICE', 'BOTS ONLINE', 'OFFLINE', 'CHARGING', 'REASON'], d.lines.map((l) => {
      const c = byLevel.get(l.level_id);
      return [l.level_id, l.up ? 'up' : 'DOWN', l.device, c?.online ?? 0, c?.offline ?? 0, c?.charging ?? 0, l.up ? '' : l.reason];
    })));
  }
  const open = Object.entries(r.requests_open);
  out.push('', `open requests: ${open.length === 0 ? 'none' : open.map(([s, n]) => `${s} ${n}`).join(', ')}`);
  if (r.last_errors.length > 0) {
    out.push('', 'last errors:', formatTable(['TIME', 'CODE', 'COMPONENT', 'DESCRIPTION'], r.last_errors.map((e) => [e.at, e.code, e.component, e.description])));
  }
  const problems = r.problems.filter((p) => p !== stale);
  if (problems.length > 0) out.push('', 'problems:', ...problems.map((p) => `  - ${p}`));
  return `${out.join('\n')}\n`;
}
