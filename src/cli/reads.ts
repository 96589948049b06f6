/**
 * The few reads a technician needs at the box, in columns: `bots`, `requests`, `events
 * [--follow]`. They read the store (read-only, beside the daemon) and the daemon's status.json.
 */
import type { Config } from '../config/config.js';
import { botRecords } from '../domain/bots/records.js';
import { requests } from '../domain/requests/records.js';
import { eventRecords, type EventRecord } from '../domain/events/events.js';
import { SEVERITY } from '../domain/events/catalogue.js';
import { daemonPid, existingStateDir, openStoreReadOnly } from './context.js';
import { readDaemonStatus } from './status.js';
import { formatTable } from './table.js';

/** `bots`: each registered bot with what its line last heard (when the daemon runs). */
export async function botsTable(config: Config): Promise<string> {
  const stateDir = existingStateDir(config);
  const live = daemonPid(stateDir) !== undefined ? readDaemonStatus(stateDir)?.status : undefined;
  const heard = new Map((live?.bots ?? []).map((b) => [b.id, b]));
  const lineUp = new Map((live?.lines ?? []).map((l) => [l.level_id, l.up]));
  const store = await openStoreReadOnly(stateDir, config);
  try {
    const rows = [...store.collection(botRecords).scan()].map((b) => {
      const h = heard.get(b.id);
      const line = b.level_id === null ? null : lineUp.get(b.level_id);
      const state = !live ? 'daemon not running' : line === false ? 'line down' : !h ? 'not heard' : h.online ? 'online' : 'offline';
      return [b.id, b.level_id ?? 'offboarded', state, h ? `${h.battery_level}%` : null, h?.is_charging ? 'yes' : h ? 'no' : null, h ? (h.carrier_held ? 'yes' : 'no') : null, h ? `${h.x},${h.y}` : null];
    });
    return `${formatTable(['BOT', 'LEVEL', 'STATE', 'BATTERY', 'CHARGING', 'CARRIER', 'AT'], rows)}\n`;
  } finally {
    await store.close();
  }
}

/**
 * `requests [--all] [--limit N]`: the newest N open requests (or of all), listed oldest first,
 * and how many older ones were left out: a table that stops at N must not look complete.
 */
export async function requestsTable(config: Config, options: { all: boolean; limit: number }): Promise<string> {
  const stateDir = existingStateDir(config);
  const store = await openStoreReadOnly(stateDir, config);
  try {
    const c = store.collection(requests);
    const chosen = options.all ? [...c.scan()] : [...c.findBy('open', 1)];
    chosen.sort((a, b) => a.counter - b.counter);
    const rows = chosen.slice(-options.limit).map((r) => [r.id, r.type, r.status, r.priority, r.level_id, r.bot_id, new Date(r.created_at).toISOString(), r.cancel_requested ? 'cancel asked' : '']);
    const table = `${formatTable(['REQUEST', 'TYPE', 'STATUS', 'PRIORITY', 'LEVEL', 'BOT', 'CREATED', 'NOTE'], rows)}\n`;
    const older = chosen.length - rows.length;
    if (older === 0) return table;
    const which = options.all ? '' : ' open';
    return `${table}(${older} older${which} request${older === 1 ? '' : 's'} not shown: requests${options.all ? ' --all' : ''} --limit ${chosen.length} shows them all)\n`;
  } finally {
    await store.close();
  }
}

/** Severity names by number, from the event catalogue; a number it does not name is shown as it is. */
const SEVERITY_NAMES = new Map<number, string>(Object.entries(SEVERITY).map(([name, value]) => [value, name]));
const severityName = (severity: number) => SEVERITY_NAMES.get(severity) ?? String(severity);

const eventRow = (e: EventRecord) => [e.id, new Date(e.created_at).toISOString(), e.hex_value, severityName(e.severity), e.component, e.description];
const EVENT_HEADERS = ['ID', 'TIME', 'CODE', 'SEVERITY', 'COMPONENT', 'DESCRIPTION'];

/**
 * `events [--limit N] [--follow]`: the latest events, oldest first; with --follow, new ones as
 * they are committed until `signal` aborts (Ctrl-C).
 */
export async function events(config: Config, options: { limit: number; follow: boolean; write: (text: string) => void; signal?: AbortSignal; pollMs?: number }): Promise<void> {
  const stateDir = existingStateDir(config);
  const store = await openStoreReadOnly(stateDir, config);
  try {
    const c = store.collection(eventRecords);
    const latest: EventRecord[] = [];
    for (const e of c.range(undefined, true)) {
      if (latest.length === options.limit) break;
      latest.push(e);
    }
    latest.reverse();
    options.write(`${formatTable(EVENT_HEADERS, latest.map(eventRow))}\n`);
    if (!options.follow) return;
    let last = latest.at(-1)?.id ?? 0;
    while (!options.signal?.aborted) {
      await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
      store.refresh();
      for (const e of c.range(last + 1)) {
        options.write(`${eventRow(e).join('  ')}\n`);
        last = e.id;
      }
    }
  } finally {
    await store.close();
  }
}
