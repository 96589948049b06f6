/**
 * The KPIs kept as they happen: `changed` hooks of the job, request, bot and event
 * collections, run by the store inside the write that changes those records (on the main
 * thread or the brain's, whichever writes), so the figures commit, or are undone, with the
 * change itself. LMDB runs one write transaction at a time, so a read, add and write here
 * never races another thread's.
 */
import type { CollectionDef, DerivedWrites } from '../../store/collection.js';
import type { BotRecord } from '../bots/records.js';
import type { EventRecord } from '../events/events.js';
import type { JobRecord, RequestRecord } from '../requests/records.js';
import { withValue } from './histogram.js';
import { hourOf, splitByHour } from './hours.js';
import {
  FLEET, balconyHourKey, balconyStateKey, botHourKey, botStateKey, errorHourKey, kpiBotHours, kpiHours, kpiPresented, kpiStates, presentedMarkKey, requestHourKey,
  type BalconyHour, type BalconyState, type BotActivity, type BotHour, type BotState, type ErrorHour, type RequestHour,
} from './records.js';
import { balconyMoves, botMoves, botNews, botRole, errorCounted, newBalconyState, newBotState, picked, presented, requestDone, waitingAt } from './transitions.js';

/** Notes when keeping began, the first time anything is kept (the service notes it at start too). */
function began(store: DerivedWrites, at: number): void {
  const states = store.collection(kpiStates);
  if (!states.has('began')) states.put({ key: 'began', kind: 'began', at });
}

function balconyHour(store: DerivedWrites, hour: number, balconyId: number): BalconyHour {
  const found = store.collection(kpiHours).get(balconyHourKey(hour, balconyId));
  return found?.kind === 'balcony' ? found : { key: balconyHourKey(hour, balconyId), kind: 'balcony', hour, balcony_id: balconyId, carriers_presented: 0, order_lines_picked: 0, pieces_picked: 0, busy_ms: 0 };
}

function addToBalconyHour(store: DerivedWrites, hour: number, balconyId: number, add: Partial<Pick<BalconyHour, 'carriers_presented' | 'order_lines_picked' | 'pieces_picked' | 'busy_ms'>>): void {
  const r = balconyHour(store, hour, balconyId);
  store.collection(kpiHours).put({
    ...r,
    carriers_presented: r.carriers_presented + (add.carriers_presented ?? 0), order_lines_picked: r.order_lines_picked + (add.order_lines_picked ?? 0),
    pieces_picked: r.pieces_picked + (add.pieces_picked ?? 0), busy_ms: r.busy_ms + (add.busy_ms ?? 0),
  });
}

const ACTIVITY_FIELD: Record<Exclude<BotActivity, 'idle'>, keyof Pick<BotHour, 'working_ms' | 'charging_ms' | 'faulted_ms' | 'offline_ms'>> = {
  working: 'working_ms', charging: 'charging_ms', faulted: 'faulted_ms', offline: 'offline_ms',
};

/** Credits [from, to) in `activity` to the bot's hours and the fleet's (idle is what is left, not kept). */
function creditBot(store: DerivedWrites, botId: number, activity: BotActivity, from: number, to: number): void {
  if (activity === 'idle') return;
  const field = ACTIVITY_FIELD[activity];
  const c = store.collection(kpiBotHours);
  for (const { hour, ms } of splitByHour(from, to)) {
    for (const id of [botId, FLEET]) {
      const key = botHourKey(hour, id);
      const r = c.get(key) ?? { key, kind: 'bot', hour, bot_id: id, working_ms: 0, charging_ms: 0, faulted_ms: 0, offline_ms: 0 };
      c.put({ ...r, [field]: r[field] + ms });
    }
  }
}

/** Changes a bot's facts at `at`, crediting the interval its activity closes. */
function moveBot(store: DerivedWrites, botId: number, change: (s: BotState) => Partial<BotState>, at: number): void {
  began(store, at);
  const states = store.collection(kpiStates);
  const found = states.get(botStateKey(botId));
  const state = found?.kind === 'bot' ? found : newBotState(botId, at);
  const { state: next, closed } = botMoves(state, change(state), at);
  if (closed) creditBot(store, botId, closed.activity, closed.from, closed.to);
  states.put(next);
}

function balconyState(store: DerivedWrites, balconyId: number): BalconyState {
  const found = store.collection(kpiStates).get(balconyStateKey(balconyId));
  return found?.kind === 'balcony' ? found : newBalconyState(balconyId);
}

/** A job starts or stops waiting for a person at a balcony at `at`. */
function moveBalcony(store: DerivedWrites, balconyId: number, jobId: string, waiting: boolean, at: number): void {
  began(store, at);
  const { state, closed } = balconyMoves(balconyState(store, balconyId), jobId, waiting, at);
  if (closed) for (const { hour, ms } of splitByHour(closed.from, closed.to)) addToBalconyHour(store, hour, balconyId, { busy_ms: ms });
  store.collection(kpiStates).put(state);
}

/** Jobs: balconies busy, carriers presented, picks confirmed, bots working and charging. */
export function keepJobKpi(before: JobRecord | undefined, after: JobRecord | undefined, store: DerivedWrites): void {
  const job = (after ?? before)!;
  const at = after?.updated_at ?? Date.now();
  const from = waitingAt(before);
  const to = waitingAt(after);
  if (from !== to) {
    if (from !== null) moveBalcony(store, from, job.id, false, at);
    if (to !== null) moveBalcony(store, to, job.id, true, at);
  }
  const shown = presented(before, after);
  if (shown) {
    const marks = store.collection(kpiPresented);
    const key = presentedMarkKey(shown.request_id, shown.carrier_id);
    if (!marks.has(key)) {
      marks.put({ key });
      addToBalconyHour(store, hourOf(at), shown.balcony_id, { carriers_presented: 1 });
      const state = balconyState(store, shown.balcony_id);
      store.collection(kpiStates).put({ ...state, presented_total: state.presented_total + 1 });
    }
  }
  const pick = picked(before, after);
  if (pick) {
    began(store, at);
    addToBalconyHour(store, hourOf(at), pick.balcony_id, { order_lines_picked: 1, pieces_picked: pick.pieces });
  }
  const was = botRole(before);
  const is = botRole(after);
  if (was?.bot_id !== is?.bot_id || was?.role !== is?.role) {
    if (was) moveBot(store, was.bot_id, (s) => ({ [was.role]: s[was.role].filter((id) => id !== job.id) }), at);
    // New work for a bot: whatever fault it reported last was cleared, or it could not take work.
    if (is) moveBot(store, is.bot_id, (s) => ({ [is.role]: s[is.role].includes(job.id) ? s[is.role] : [...s[is.role], job.id], faulted: false }), at);
  }
}

/** Requests: done, with their lead times; a request pruned takes its presented marks with it. */
export function keepRequestKpi(before: RequestRecord | undefined, after: RequestRecord | undefined, store: DerivedWrites): void {
  const done = requestDone(before, after);
  if (done) {
    began(store, done.at);
    const hour = hourOf(done.at);
    const key = requestHourKey(hour);
    const found = store.collection(kpiHours).get(key);
    const r: RequestHour = found?.kind === 'requests' ? found : { key, kind: 'requests', hour, done: 0, lead_times: {} };
    store.collection(kpiHours).put({ ...r, done: r.done + 1, lead_times: withValue(r.lead_times, done.lead_seconds) });
  }
  if (before && !after) {
    const marks = store.collection(kpiPresented);
    const prefix = `${before.id}|`;
    const keys: string[] = [];
    for (const mark of marks.range(prefix)) {
      if (!mark.key.startsWith(prefix)) break;
      keys.push(mark.key);
    }
    for (const key of keys) marks.remove(key);
  }
}

/** Events: errors and warnings by code; a bot's fault, loss and return. */
export function keepEventKpi(before: EventRecord | undefined, after: EventRecord | undefined, store: DerivedWrites): void {
  const error = errorCounted(before, after);
  if (error) {
    began(store, error.at);
    const hour = hourOf(error.at);
    const key = errorHourKey(hour, error.code);
    const found = store.collection(kpiHours).get(key);
    const r: ErrorHour = found?.kind === 'errors' ? found : { key, kind: 'errors', hour, code: error.code, count: 0 };
    store.collection(kpiHours).put({ ...r, count: r.count + 1 });
  }
  const news = botNews(before, after);
  if (news) {
    const change = news.news === 'fault' ? { faulted: true } : news.news === 'offline' ? { offline: true } : { offline: false, faulted: false };
    moveBot(store, news.bot_id, () => change, after!.created_at);
  }
}

/** The bot table: a bot offboarded counts as offline until it is onboarded again; a bot removed is forgotten, its last interval credited. */
export function keepBotKpi(before: BotRecord | undefined, after: BotRecord | undefined, store: DerivedWrites): void {
  if (!after) {
    const states = store.collection(kpiStates);
    const state = states.get(botStateKey(before!.id));
    if (state?.kind === 'bot') {
      creditBot(store, state.bot_id, state.activity, state.since, Math.max(Date.now(), state.since));
      states.remove(state.key);
    }
    return;
  }
  const off = after.level_id === null;
  if (before && (before.level_id === null) === off) return;
  if (!before && !off) return;
  moveBot(store, after.id, () => ({ offboarded: off }), after.updated_at);
}

/** `def` with its KPI hook, for the collections KPIs are kept from; the others as they are. */
export function keepingKpi<T>(def: CollectionDef<T>): CollectionDef<T> {
  const hook = HOOKS[def.name] as CollectionDef<T>['changed'] | undefined;
  return hook ? { ...def, changed: hook } : def;
}

const HOOKS: Record<string, CollectionDef<never>['changed']> = {
  jobs: keepJobKpi as CollectionDef<never>['changed'],
  requests: keepRequestKpi as CollectionDef<never>['changed'],
  bots: keepBotKpi as CollectionDef<never>['changed'],
  events: keepEventKpi as CollectionDef<never>['changed'],
};

export const KPI_COLLECTIONS = [kpiHours, kpiBotHours, kpiStates, kpiPresented] as const;
