/**
 * What the KPI page shows, shaped from the answers of GET /api/v2/kpi and /kpi/bots: the
 * period's bounds in the site's timezone, the hourly series the plots draw, the tables per
 * balcony and per bot, and their CSV. Pure functions of the answer (no DOM, no fetch), so each is tested on sample answers.
 */

/** One balcony's hour as GET /api/v2/kpi answers it. */
export interface BalconyHour {
  hour: string;
  carriers_presented: number;
  order_lines_picked: number;
  pieces_picked: number;
  busy_seconds: number;
  idle_seconds: number;
}

/** The bots' hour, summed over the site's bots. */
export interface BotsHour {
  hour: string;
  working_seconds: number;
  charging_seconds: number;
  faulted_seconds: number;
  offline_seconds: number;
  idle_seconds: number;
}

/** The answer of GET /api/v2/kpi: every `hours` array is dense and aligned with the top-level one. */
export interface KpiAnswer {
  from: string;
  to: string;
  generated_at: string;
  timezone: string;
  hours: string[];
  balconies: { balcony_id: number; hours: BalconyHour[] }[];
  bots: { count: number; hours: BotsHour[] };
  requests: {
    done: number;
    lead_time_p50_seconds: number | null;
    lead_time_p95_seconds: number | null;
    hours: { hour: string; done: number; lead_time_p50_seconds: number | null; lead_time_p95_seconds: number | null }[];
  };
  errors: { by_code: { code: string; count: number }[]; hours: { hour: string; code: string; count: number }[] };
}

export type Period = 'today' | 'yesterday' | 'week';

/** The periods the page offers, with their labels. */
export const PERIODS: readonly { id: Period; label: string }[] = [
  { id: 'today', label: 'Today' },
  { id: 'yesterday', label: 'Yesterday' },
  { id: 'week', label: 'Last 7 days' },
];

const HOUR_MS = 3_600_000;

/** Milliseconds the zone's wall clock is ahead of UTC at `ms`. */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The instant the zone's day `daysBack` days before the day of `ms` begins (its local midnight). */
export function startOfDay(ms: number, timeZone: string, daysBack = 0): number {
  const local = new Date(ms + zoneOffsetMs(ms, timeZone));
  const midnightWall = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() - daysBack);
  // The offset at midnight may differ from the offset now (a daylight-saving change that day):
  // take the offset at the guess, then once more at the corrected instant.
  let at = midnightWall - zoneOffsetMs(midnightWall, timeZone);
  at = midnightWall - zoneOffsetMs(at, timeZone);
  return at;
}

/**
 * The period's bounds as the API takes them (whole UTC hours): `from` the local midnight that
 * starts it (down to its hour, for zones half an hour off UTC), `to` the end of the hour under
 * way for a period that runs until now.
 */
export function periodRange(period: Period, nowMs: number, timeZone: string): { from: string; to: string } {
  const down = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;
  const up = (ms: number) => Math.ceil(ms / HOUR_MS) * HOUR_MS;
  const today = startOfDay(nowMs, timeZone);
  const end = up(nowMs + 1);
  const [from, to] = period === 'today' ? [today, end]
    : period === 'yesterday' ? [startOfDay(nowMs, timeZone, 1), today]
      : [startOfDay(nowMs, timeZone, 6), end];
  return { from: new Date(down(from)).toISOString(), to: new Date(up(to)).toISOString() };
}

/** busy / (busy + idle); null for an hour with neither (nothing to share). */
export function busyShare(busySeconds: number, idleSeconds: number): number | null {
  const total = busySeconds + idleSeconds;
  return total > 0 ? busySeconds / total : null;
}

/** The share of bot time neither faulted nor offline; null when no bot time was counted. */
export function botAvailability(h: Omit<BotsHour, 'hour'>): number | null {
  const total = h.working_seconds + h.charging_seconds + h.faulted_seconds + h.offline_seconds + h.idle_seconds;
  return total > 0 ? 1 - (h.faulted_seconds + h.offline_seconds) / total : null;
}

/** The plots' series: x in Unix seconds (uPlot's time axis), one value (or null, a gap) per hour. */
export interface KpiSeries {
  x: number[];
  carriersPresented: number[];
  piecesPicked: number[];
  /** Busy share of each balcony, in the order of `balconyIds`. */
  busyShare: (number | null)[][];
  balconyIds: number[];
  botAvailability: (number | null)[];
  leadTimeP50: (number | null)[];
  leadTimeP95: (number | null)[];
}

/** The answer's hourly arrays as the plots draw them (throughput summed over the balconies). */
export function kpiSeries(answer: KpiAnswer): KpiSeries {
  const x = answer.hours.map((h) => Date.parse(h) / 1000);
  const sum = (field: 'carriers_presented' | 'pieces_picked') => answer.hours.map((_, i) => answer.balconies.reduce((n, b) => n + (b.hours[i]?.[field] ?? 0), 0));
  return {
    x,
    carriersPresented: sum('carriers_presented'),
    piecesPicked: sum('pieces_picked'),
    balconyIds: answer.balconies.map((b) => b.balcony_id),
    busyShare: answer.balconies.map((b) => answer.hours.map((_, i) => (b.hours[i] ? busyShare(b.hours[i].busy_seconds, b.hours[i].idle_seconds) : null))),
    botAvailability: answer.hours.map((_, i) => (answer.bots.hours[i] ? botAvailability(answer.bots.hours[i]) : null)),
    leadTimeP50: answer.hours.map((_, i) => answer.requests.hours[i]?.lead_time_p50_seconds ?? null),
    leadTimeP95: answer.hours.map((_, i) => answer.requests.hours[i]?.lead_time_p95_seconds ?? null),
  };
}

/** Indices of values with no value either side: a line cannot join them, so they are drawn as points. */
export function loneValues(values: readonly (number | null)[]): number[] {
  const out: number[] = [];
  values.forEach((v, i) => {
    if (v !== null && (values[i - 1] ?? null) === null && (values[i + 1] ?? null) === null) out.push(i);
  });
  return out;
}

/** One balcony's figures over the period. */
export interface BalconyRow {
  balcony_id: number;
  carriers_presented: number;
  order_lines_picked: number;
  pieces_picked: number;
  busy_seconds: number;
  idle_seconds: number;
  /** busy / (busy + idle) over the whole period; null when neither was counted. */
  busy_share: number | null;
}

/** The table per balcony: its hours summed, by balcony id. */
export function balconyTable(answer: KpiAnswer): BalconyRow[] {
  return answer.balconies.map((b) => {
    const row = { balcony_id: b.balcony_id, carriers_presented: 0, order_lines_picked: 0, pieces_picked: 0, busy_seconds: 0, idle_seconds: 0 };
    for (const h of b.hours) {
      row.carriers_presented += h.carriers_presented;
      row.order_lines_picked += h.order_lines_picked;
      row.pieces_picked += h.pieces_picked;
      row.busy_seconds += h.busy_seconds;
      row.idle_seconds += h.idle_seconds;
    }
    return { ...row, busy_share: busyShare(row.busy_seconds, row.idle_seconds) };
  }).sort((a, b) => a.balcony_id - b.balcony_id);
}

/** A share as the page and the CSV print it: percent with one decimal, empty for none. */
export function percent(share: number | null): string {
  return share === null ? '' : (share * 100).toFixed(1);
}

/** Seconds as the page and the CSV print them: whole seconds, empty for none. */
export function seconds(value: number | null): string {
  return value === null ? '' : String(Math.round(value));
}

/** One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
function field(value: string | number): string {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The site's wall-clock time of an instant, `YYYY-MM-DD HH:mm`, for people reading the CSV. */
export function localTime(iso: string, timeZone: string): string {
  const ms = Date.parse(iso);
  return new Date(ms + zoneOffsetMs(ms, timeZone)).toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * What the page shows as CSV (RFC 4180, CRLF): one row per hour (the plots' figures, then each
 * balcony's), and a last row `total` whose balcony columns are the table's and whose site
 * columns are the period's (requests done, the period's lead times).
 */
export function kpiCsv(answer: KpiAnswer): string {
  const s = kpiSeries(answer);
  const table = balconyTable(answer);
  const byId = new Map(answer.balconies.map((b) => [b.balcony_id, b]));
  const balconyColumns = table.flatMap((r) => ['carriers_presented', 'order_lines_picked', 'pieces_picked', 'busy_share_percent'].map((c) => `balcony_${r.balcony_id}_${c}`));
  const header = ['hour_utc', 'hour_local', 'carriers_presented', 'pieces_picked', 'bot_availability_percent', 'requests_done', 'lead_time_p50_seconds', 'lead_time_p95_seconds', ...balconyColumns];
  const rows: (string | number)[][] = answer.hours.map((hour, i) => [
    hour, localTime(hour, answer.timezone), s.carriersPresented[i]!, s.piecesPicked[i]!, percent(s.botAvailability[i]!),
    answer.requests.hours[i]?.done ?? 0, seconds(s.leadTimeP50[i]!), seconds(s.leadTimeP95[i]!),
    ...table.flatMap((r) => {
      const h = byId.get(r.balcony_id)!.hours[i];
      return h ? [h.carriers_presented, h.order_lines_picked, h.pieces_picked, percent(busyShare(h.busy_seconds, h.idle_seconds))] : [0, 0, 0, ''];
    }),
  ]);
  const bots = answer.bots.hours.reduce((t, h) => ({
    working_seconds: t.working_seconds + h.working_seconds, charging_seconds: t.charging_seconds + h.charging_seconds, faulted_seconds: t.faulted_seconds + h.faulted_seconds,
    offline_seconds: t.offline_seconds + h.offline_seconds, idle_seconds: t.idle_seconds + h.idle_seconds,
  }), { working_seconds: 0, charging_seconds: 0, faulted_seconds: 0, offline_seconds: 0, idle_seconds: 0 });
  rows.push([
    'total', '', s.carriersPresented.reduce((a, b) => a + b, 0), s.piecesPicked.reduce((a, b) => a + b, 0), percent(botAvailability(bots)),
    answer.requests.done, seconds(answer.requests.lead_time_p50_seconds), seconds(answer.requests.lead_time_p95_seconds),
    ...table.flatMap((r) => [r.carriers_presented, r.order_lines_picked, r.pieces_picked, percent(r.busy_share)]),
  ]);
  return [header, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}

/** The answer of GET /api/v2/kpi/bots: each bot's seconds in each state over the window. */
export interface KpiBotsAnswer {
  from: string;
  to: string;
  bots: ({ bot_id: number } & Omit<BotsHour, 'hour'>)[];
}

/** One bot's row: its seconds and its availability. */
export type BotRow = KpiBotsAnswer['bots'][number] & { availability: number | null };

/** The table per bot, the least available first (a bot with no time counted last), then by id. */
export function botTable(answer: KpiBotsAnswer): BotRow[] {
  return answer.bots.map((b) => ({ ...b, availability: botAvailability(b) }))
    .sort((a, b) => (a.availability ?? 2) - (b.availability ?? 2) || a.bot_id - b.bot_id);
}

/** The table per bot as CSV (RFC 4180, CRLF), in the table's order. */
export function botsCsv(answer: KpiBotsAnswer): string {
  const header = ['bot_id', 'availability_percent', 'working_seconds', 'charging_seconds', 'faulted_seconds', 'offline_seconds', 'idle_seconds'];
  const rows = botTable(answer).map((b) => [b.bot_id, percent(b.availability), seconds(b.working_seconds), seconds(b.charging_seconds), seconds(b.faulted_seconds), seconds(b.offline_seconds), seconds(b.idle_seconds)]);
  return [header, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}
