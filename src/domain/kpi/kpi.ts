/**
 * The KPI service: windows of whole UTC hours read from the hourly records by key range, the
 * intervals still open (a balcony busy now, a bot charging now) credited up to `now`, idle time
 * derived as what is left of the elapsed time. Elapsed time is clipped to `now` and to when
 * keeping began, so hours before it show no idle time either.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import { botRecords } from '../bots/records.js';
import { mergeInto, quantile, type Histogram } from './histogram.js';
import { HOUR_MS, elapsedIn, hourOf, hoursOf, splitByHour } from './hours.js';
import {
  FLEET, balconyStateKey, botHourKey, hourKey, kpiBotHours, kpiHours, kpiStates, type BotActivity, type BotHour, type BotState, type KpiHour,
} from './records.js';

/** KPI records deleted per write while pruning: a few ms of a commit. */
const PRUNE_CHUNK = 500;

export interface KpiDeps {
  store: Store;
  /** The site's balconies, every one listed in a window. */
  balconyIds: readonly number[];
}

export interface BalconyHourView {
  hour: number;
  carriers_presented: number;
  order_lines_picked: number;
  pieces_picked: number;
  busy_seconds: number;
  idle_seconds: number;
}

export interface BotSeconds {
  working_seconds: number;
  charging_seconds: number;
  faulted_seconds: number;
  offline_seconds: number;
  idle_seconds: number;
}

export interface RequestHourView {
  hour: number;
  done: number;
  lead_time_p50_seconds: number | null;
  lead_time_p95_seconds: number | null;
}

/** What the site did in a window of whole hours: `hours` and every per-hour list have one entry per hour, but the errors. */
export interface KpiWindow {
  from: number;
  to: number;
  hours: number[];
  balconies: { balcony_id: number; hours: BalconyHourView[] }[];
  bots: { count: number; hours: (BotSeconds & { hour: number })[] };
  requests: { done: number; lead_time_p50_seconds: number | null; lead_time_p95_seconds: number | null; hours: RequestHourView[] };
  errors: { by_code: { code: string; count: number }[]; hours: { hour: number; code: string; count: number }[] };
}

type Ms = Pick<BotHour, 'working_ms' | 'charging_ms' | 'faulted_ms' | 'offline_ms'>;
const noMs = (): Ms => ({ working_ms: 0, charging_ms: 0, faulted_ms: 0, offline_ms: 0 });
const FIELD: Record<Exclude<BotActivity, 'idle'>, keyof Ms> = { working: 'working_ms', charging: 'charging_ms', faulted: 'faulted_ms', offline: 'offline_ms' };
const seconds = (ms: number) => Math.round(ms) / 1000;

/** Seconds in each state, idle being what `elapsedMs` leaves. */
function botSeconds(ms: Ms, elapsedMs: number): BotSeconds {
  const busy = ms.working_ms + ms.charging_ms + ms.faulted_ms + ms.offline_ms;
  return {
    working_seconds: seconds(ms.working_ms), charging_seconds: seconds(ms.charging_ms), faulted_seconds: seconds(ms.faulted_ms),
    offline_seconds: seconds(ms.offline_ms), idle_seconds: seconds(Math.max(0, elapsedMs - busy)),
  };
}

export class Kpi {
  constructor(private readonly deps: KpiDeps) {}

  /** Notes that keeping begins now, unless it began before (at start, so elapsed time counts from the first start with KPIs). */
  async begin(now: number): Promise<void> {
    const states = this.deps.store.collection(kpiStates);
    if (states.has('began')) return;
    await this.deps.store.write(() => {
      if (!states.has('began')) states.put({ key: 'began', kind: 'began', at: now });
    });
  }

  /** When keeping began (`now` if it has not). */
  began(now: number): number {
    const b = this.deps.store.collection(kpiStates).get('began');
    return b?.kind === 'began' ? b.at : now;
  }

  /** The figures of the hours from `from` to `to` (whole UTC hours, `to` excluded), open intervals credited up to `now`. */
  window(from: number, to: number, now: number): KpiWindow {
    const { store, balconyIds } = this.deps;
    const hours = hoursOf(from, to);
    const index = new Map(hours.map((h, i) => [h, i]));
    const began = this.began(now);
    const elapsed = hours.map((h) => elapsedIn(h, began, now));

    const balconies = new Map<number, BalconyHourView[]>();
    const balcony = (id: number) => {
      let rows = balconies.get(id);
      if (!rows) balconies.set(id, (rows = hours.map((hour) => ({ hour, carriers_presented: 0, order_lines_picked: 0, pieces_picked: 0, busy_seconds: 0, idle_seconds: 0 }))));
      return rows;
    };
    for (const id of balconyIds) balcony(id);
    const busyMs = new Map<number, number[]>();
    const addBusy = (id: number, i: number, ms: number) => {
      let row = busyMs.get(id);
      if (!row) busyMs.set(id, (row = hours.map(() => 0)));
      row[i]! += ms;
    };
    const requestHours = hours.map(() => ({ done: 0, lead_times: {} as Histogram }));
    const errorHours: { hour: number; code: string; count: number }[] = [];
    const byCode = new Map<string, number>();

    for (const r of this.hourRecords(from, to)) {
      const i = index.get(r.hour)!;
      if (r.kind === 'balcony') {
        const row = balcony(r.balcony_id)[i]!;
        row.carriers_presented += r.carriers_presented;
        row.order_lines_picked += r.order_lines_picked;
        row.pieces_picked += r.pieces_picked;
        addBusy(r.balcony_id, i, r.busy_ms);
      } else if (r.kind === 'requests') {
        requestHours[i]!.done += r.done;
        mergeInto(requestHours[i]!.lead_times, r.lead_times);
      } else if (r.count > 0) {
        errorHours.push({ hour: r.hour, code: r.code, count: r.count });
        byCode.set(r.code, (byCode.get(r.code) ?? 0) + r.count);
      }
    }
    // A balcony busy now: its open interval, up to now.
    for (const id of balconies.keys()) {
      const state = store.collection(kpiStates).get(balconyStateKey(id));
      if (state?.kind !== 'balcony' || state.busy_since === null) continue;
      for (const { hour, ms } of splitByHour(Math.max(state.busy_since, from), Math.min(now, to))) addBusy(id, index.get(hour)!, ms);
    }
    for (const [id, rows] of balconies) {
      const busy = busyMs.get(id);
      rows.forEach((row, i) => {
        const ms = Math.min(busy?.[i] ?? 0, elapsed[i]!);
        row.busy_seconds = seconds(ms);
        row.idle_seconds = seconds(elapsed[i]! - ms);
      });
    }

    const count = store.collection(botRecords).count();
    const fleet = hours.map((h) => {
      const r = store.collection(kpiBotHours).get(botHourKey(h, FLEET));
      return r ? { working_ms: r.working_ms, charging_ms: r.charging_ms, faulted_ms: r.faulted_ms, offline_ms: r.offline_ms } : noMs();
    });
    for (const state of this.botStates()) this.creditOpen(state, from, to, now, (i, field, ms) => (fleet[i]![field] += ms), index);

    const total: Histogram = {};
    for (const h of requestHours) mergeInto(total, h.lead_times);
    return {
      from, to, hours,
      balconies: [...balconies].sort((a, b) => a[0] - b[0]).map(([balcony_id, rows]) => ({ balcony_id, hours: rows })),
      bots: { count, hours: hours.map((hour, i) => ({ hour, ...botSeconds(fleet[i]!, elapsed[i]! * count) })) },
      requests: {
        done: requestHours.reduce((n, h) => n + h.done, 0), lead_time_p50_seconds: quantile(total, 0.5), lead_time_p95_seconds: quantile(total, 0.95),
        hours: requestHours.map((h, i) => ({ hour: hours[i]!, done: h.done, lead_time_p50_seconds: quantile(h.lead_times, 0.5), lead_time_p95_seconds: quantile(h.lead_times, 0.95) })),
      },
      errors: {
        by_code: [...byCode].map(([code, n]) => ({ code, count: n })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
        hours: errorHours,
      },
    };
  }

  /** Each bot of the bot table's seconds in each state over the window, open intervals credited up to `now`. */
  bots(from: number, to: number, now: number): { bot_id: number; seconds: BotSeconds }[] {
    const { store } = this.deps;
    const hours = hoursOf(from, to);
    const index = new Map(hours.map((h, i) => [h, i]));
    const began = this.began(now);
    const elapsed = hours.reduce((n, h) => n + elapsedIn(h, began, now), 0);
    const byBot = new Map<number, Ms>();
    const of = (id: number) => {
      let ms = byBot.get(id);
      if (!ms) byBot.set(id, (ms = noMs()));
      return ms;
    };
    for (const bot of store.collection(botRecords).scan()) of(bot.id);
    // One hour's records at a time, from the first hour's key to the window's end.
    for (const r of store.collection(kpiBotHours).range(hourKey(hourOf(from)))) {
      if (r.hour >= to) break;
      if (r.bot_id === FLEET || !byBot.has(r.bot_id)) continue;
      const ms = of(r.bot_id);
      ms.working_ms += r.working_ms;
      ms.charging_ms += r.charging_ms;
      ms.faulted_ms += r.faulted_ms;
      ms.offline_ms += r.offline_ms;
    }
    for (const state of this.botStates()) {
      if (!byBot.has(state.bot_id)) continue;
      this.creditOpen(state, from, to, now, (_i, field, ms) => (of(state.bot_id)[field] += ms), index);
    }
    return [...byBot].sort((a, b) => a[0] - b[0]).map(([bot_id, ms]) => ({ bot_id, seconds: botSeconds(ms, elapsed) }));
  }

  /**
   * Per balcony: carriers presented since KPIs began, and the share (0 to 1) of the current
   * hour's elapsed time it has been busy; for a monitoring system's gauges and counters.
   */
  balconyTotals(now: number): { balcony_id: number; carriers_presented_total: number; busy_share_this_hour: number }[] {
    const hour = hourOf(now);
    const window = this.window(hour, hour + HOUR_MS, now);
    return window.balconies.map((b) => {
      const state = this.deps.store.collection(kpiStates).get(balconyStateKey(b.balcony_id));
      const row = b.hours[0]!;
      const elapsed = row.busy_seconds + row.idle_seconds;
      return {
        balcony_id: b.balcony_id,
        carriers_presented_total: state?.kind === 'balcony' ? state.presented_total : 0,
        busy_share_this_hour: elapsed > 0 ? row.busy_seconds / elapsed : 0,
      };
    });
  }

  /** The state records of the bots (a key range: one a bot). */
  private *botStates(): Iterable<BotState> {
    for (const s of this.deps.store.collection(kpiStates).range('bot|')) {
      if (s.kind !== 'bot') break;
      yield s;
    }
  }

  /** Credits a bot's open interval, clipped to the window and to `now`, through `add`. */
  private creditOpen(state: BotState, from: number, to: number, now: number, add: (i: number, field: keyof Ms, ms: number) => void, index: Map<number, number>): void {
    if (state.activity === 'idle') return;
    for (const { hour, ms } of splitByHour(Math.max(state.since, from), Math.min(now, to))) add(index.get(hour)!, FIELD[state.activity], ms);
  }

  /** The hourly records of balconies, requests and errors in the window, by key range. */
  private *hourRecords(from: number, to: number): Iterable<KpiHour> {
    for (const r of this.deps.store.collection(kpiHours).range(hourKey(hourOf(from)))) {
      if (r.hour >= to) break;
      yield r;
    }
  }
}

/**
 * Deletes the hourly KPI records of the hours before `before` (the history pruner's cutoff), a
 * chunk a write, by key range from the oldest; resolves with how many went.
 */
export async function pruneKpiHours(store: Store, before: number): Promise<number> {
  const end = hourKey(hourOf(before));
  let n = 0;
  for (const def of [kpiHours, kpiBotHours] as CollectionDef<{ key: string }>[]) {
    for (;;) {
      const keys: string[] = [];
      for (const r of store.collection(def).range()) {
        if (r.key >= end || keys.length >= PRUNE_CHUNK) break;
        keys.push(r.key);
      }
      if (keys.length === 0) break;
      await store.write(() => {
        for (const key of keys) store.collection(def).remove(key);
      });
      n += keys.length;
      if (keys.length < PRUNE_CHUNK) break;
    }
  }
  return n;
}
