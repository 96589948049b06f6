/**
 * Beyond the spec: what the site did, per hour (`GET /kpi`, `GET /kpi/bots`), read from the
 * KPIs the domain keeps as work happens. Windows are whole UTC hours, at most 31 days.
 */
import Type from 'typebox';
import { ValidationError } from '../../domain/errors.js';
import { HOUR_MS, hourCeil, hourOf } from '../../domain/kpi/hours.js';
import type { BotSeconds, Kpi } from '../../domain/kpi/kpi.js';
import { route, type AnyRoute } from '../route.js';

/** The longest window a KPI read takes. */
export const MAX_SPAN_DAYS = 31;
const DAY_MS = 24 * HOUR_MS;

const Iso = Type.String({ format: 'date-time' });
const Seconds = Type.Number({ minimum: 0 });
const Quantile = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);

const Window = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the window (ISO 8601 with offset), rounded down to a whole UTC hour; default: `to` minus 24 h' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End of the window (ISO 8601 with offset), rounded up to a whole UTC hour; default: now' })),
});

const BotStates = {
  working_seconds: Seconds, charging_seconds: Seconds, faulted_seconds: Seconds, offline_seconds: Seconds,
  idle_seconds: Type.Number({ minimum: 0, description: 'Elapsed time less the other states' }),
};

const KpiResponse = Type.Object({
  from: Iso, to: Iso, generated_at: Iso,
  timezone: Type.String({ description: 'The site\'s time zone (hours are UTC; a client shows them in this zone)' }),
  hours: Type.Array(Iso, { description: 'The start of every hour of the window, ascending' }),
  balconies: Type.Array(Type.Object({
    balcony_id: Type.Integer(),
    hours: Type.Array(Type.Object({
      hour: Iso,
      carriers_presented: Type.Integer({ minimum: 0, description: 'Carriers a person was asked to work on (once per request and carrier)' }),
      order_lines_picked: Type.Integer({ minimum: 0, description: 'PICKING jobs confirmed by a person' }),
      pieces_picked: Type.Integer({ minimum: 0, description: 'Their booked quantities' }),
      busy_seconds: Type.Number({ minimum: 0, description: 'Time at least one job waited there for a person' }),
      idle_seconds: Type.Number({ minimum: 0, description: 'Elapsed time less busy time' }),
    })),
  })),
  bots: Type.Object({
    count: Type.Integer({ minimum: 0, description: 'Bots in the bot table now' }),
    hours: Type.Array(Type.Object({ hour: Iso, ...BotStates }), { description: 'Seconds summed over the fleet' }),
  }),
  requests: Type.Object({
    done: Type.Integer({ minimum: 0 }),
    lead_time_p50_seconds: Quantile,
    lead_time_p95_seconds: Quantile,
    hours: Type.Array(Type.Object({ hour: Iso, done: Type.Integer({ minimum: 0 }), lead_time_p50_seconds: Quantile, lead_time_p95_seconds: Quantile })),
  }, { description: 'Requests that reached SUCCEEDED, and their lead time from creation (within about 5 %)' }),
  errors: Type.Object({
    by_code: Type.Array(Type.Object({ code: Type.String(), count: Type.Integer({ minimum: 1 }) })),
    hours: Type.Array(Type.Object({ hour: Iso, code: Type.String(), count: Type.Integer({ minimum: 1 }) }), { description: 'Non-zero entries only' }),
  }, { description: 'Events of warning severity or worse, by code' }),
});

const KpiBotsResponse = Type.Object({
  from: Iso, to: Iso,
  bots: Type.Array(Type.Object({ bot_id: Type.Integer(), ...BotStates })),
});

const iso = (ms: number) => new Date(ms).toISOString();

/** The window a query asks for, in whole UTC hours, or a validation error. */
export function windowOf(query: { from?: string; to?: string }, now: number): { from: number; to: number } {
  const parse = (name: 'from' | 'to'): number | undefined => {
    const text = query[name];
    if (text === undefined) return undefined;
    const ms = Date.parse(text);
    if (!Number.isFinite(ms)) throw ValidationError.of(['query', name], `Input should be a valid date-time: ${JSON.stringify(text)}`);
    return ms;
  };
  const toAsked = parse('to') ?? now;
  const to = hourCeil(toAsked);
  const from = hourOf(parse('from') ?? toAsked - DAY_MS);
  if (from >= to) throw ValidationError.of(['query', 'from'], 'from must be before to');
  if (to - from > MAX_SPAN_DAYS * DAY_MS) throw ValidationError.of(['query', 'to'], `the window spans more than ${MAX_SPAN_DAYS} days`);
  return { from, to };
}

const botView = (s: BotSeconds) => ({
  working_seconds: s.working_seconds, charging_seconds: s.charging_seconds, faulted_seconds: s.faulted_seconds, offline_seconds: s.offline_seconds, idle_seconds: s.idle_seconds,
});

/** GET /kpi and GET /kpi/bots. */
export function kpiRoutes(kpi: Kpi, timeZone: string, now: () => number = Date.now): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/kpi', tag: 'System', permission: 'kpi:view',
      summary: 'What the site did per hour: balconies, the bots, requests done and their lead times, errors (beyond the spec)',
      description: `Whole UTC hours from \`from\` (rounded down) to \`to\` (rounded up), at most ${MAX_SPAN_DAYS} days. Every list of hours has one entry per hour of the window, zeros included; the current hour counts up to now. Elapsed time, and so idle time, counts from when the controller began keeping KPIs.`,
      query: Window,
      responses: { 200: KpiResponse },
      handler: ({ query }) => {
        const at = now();
        const { from, to } = windowOf(query, at);
        const w = kpi.window(from, to, at);
        return {
          from: iso(w.from), to: iso(w.to), generated_at: iso(at), timezone: timeZone,
          hours: w.hours.map(iso),
          balconies: w.balconies.map((b) => ({ balcony_id: b.balcony_id, hours: b.hours.map((h) => ({ ...h, hour: iso(h.hour) })) })),
          bots: { count: w.bots.count, hours: w.bots.hours.map((h) => ({ hour: iso(h.hour), ...botView(h) })) },
          requests: { ...w.requests, hours: w.requests.hours.map((h) => ({ ...h, hour: iso(h.hour) })) },
          errors: { by_code: w.errors.by_code, hours: w.errors.hours.map((h) => ({ ...h, hour: iso(h.hour) })) },
        };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/kpi/bots', tag: 'System', permission: 'kpi:view',
      summary: 'Each bot\'s seconds working, charging, faulted, offline and idle over a window (beyond the spec)',
      description: `The window as for \`GET /api/v2/kpi\`. Bots of the bot table now; an offboarded bot counts as offline.`,
      query: Window,
      responses: { 200: KpiBotsResponse },
      handler: ({ query }) => {
        const at = now();
        const { from, to } = windowOf(query, at);
        return { from: iso(from), to: iso(to), bots: kpi.bots(from, to, at).map((b) => ({ bot_id: b.bot_id, ...botView(b.seconds) })) };
      },
    }),
  ];
}
