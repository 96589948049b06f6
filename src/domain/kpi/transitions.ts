/**
 * The KPI rules, as pure functions of a record before and after a change: which balcony a job
 * keeps busy, when a carrier counts as presented, what a confirmed pick adds, what a bot is
 * doing, and how a state's interval is closed. `keeping.ts` applies them inside the write.
 */
import { EVENT, SEVERITY } from '../events/catalogue.js';
import type { EventRecord } from '../events/events.js';
import type { BotRecord } from '../bots/records.js';
import { BOT_JOBS, CARRIER_JOBS, type JobRecord, type RequestRecord } from '../requests/records.js';
import type { BalconyState, BotActivity, BotState } from './records.js';

/** The balcony a job keeps busy: it waits there for a person's trigger (null: none). */
export function waitingAt(job: JobRecord | undefined): number | null {
  if (!job || job.status !== 'EXECUTING' || job.wait?.waiting_for !== 'trigger' || job.balcony_id === null) return null;
  return job.balcony_id;
}

/**
 * A carrier presented: a job with a carrier starts waiting for a person's trigger at a
 * balcony. The caller counts it once per request and carrier (a mark), as bench/site.ts does.
 */
export function presented(before: JobRecord | undefined, after: JobRecord | undefined): { balcony_id: number; request_id: string; carrier_id: string } | null {
  const at = waitingAt(after);
  if (at === null || !after!.carrier_id || waitingAt(before) === at) return null;
  return { balcony_id: at, request_id: after!.request_id, carrier_id: after!.carrier_id };
}

/** A pick confirmed: a PICKING job reaches SUCCEEDED by a person's trigger; one order line, its booked quantity in pieces. */
export function picked(before: JobRecord | undefined, after: JobRecord | undefined): { balcony_id: number; pieces: number } | null {
  if (!after || after.type !== 'PICKING' || after.status !== 'SUCCEEDED' || before?.status === 'SUCCEEDED') return null;
  if (after.progress.kind !== 'person' || after.progress.trigger_status === null || after.balcony_id === null) return null;
  return { balcony_id: after.balcony_id, pieces: after.progress.booked_quantity ?? after.quantity ?? 0 };
}

/** What a job has its bot do while it runs: charge, or work (moving itself or a carrier); null when it has no bot or does not run. */
export function botRole(job: JobRecord | undefined): { bot_id: number; role: 'working' | 'charging' } | null {
  if (!job || job.bot_id === null || (job.status !== 'EXECUTING' && job.status !== 'CANCELLING')) return null;
  if (job.type === 'CHARGING') return { bot_id: job.bot_id, role: 'charging' };
  if (CARRIER_JOBS.has(job.type) || BOT_JOBS.has(job.type)) return { bot_id: job.bot_id, role: 'working' };
  return null;
}

/** A request done: it reaches SUCCEEDED; its lead time runs from its creation. */
export function requestDone(before: RequestRecord | undefined, after: RequestRecord | undefined): { at: number; lead_seconds: number } | null {
  if (!after || after.status !== 'SUCCEEDED' || before?.status === 'SUCCEEDED') return null;
  return { at: after.updated_at, lead_seconds: Math.max(0, after.updated_at - after.created_at) / 1000 };
}

/** An error counted: a new event of warning severity or worse, by its code. */
export function errorCounted(before: EventRecord | undefined, after: EventRecord | undefined): { at: number; code: string } | null {
  if (before || !after || after.severity < SEVERITY.warning) return null;
  return { at: after.created_at, code: after.hex_value };
}

/** What a bot event says of the bot's state. */
export type BotNews = 'fault' | 'offline' | 'online';

/** The bot and what a new event says of it, if anything. */
export function botNews(before: EventRecord | undefined, after: EventRecord | undefined): { bot_id: number; news: BotNews } | null {
  if (before || !after || after.bot_id === null) return null;
  const news: BotNews | null = after.hex_value === EVENT.botFault.hex ? 'fault' : after.hex_value === EVENT.botOffline.hex ? 'offline' : after.hex_value === EVENT.botOnline.hex ? 'online' : null;
  const id = Number(after.bot_id);
  return news && Number.isInteger(id) ? { bot_id: id, news } : null;
}

/** Whether a bot record says the bot is off its level (offboarded); undefined: the record is gone. */
export function offboarded(bot: BotRecord | undefined): boolean | undefined {
  return bot === undefined ? undefined : bot.level_id === null;
}

/** A bot's activity from its facts, the worst first. */
export function activityOf(s: Pick<BotState, 'working' | 'charging' | 'faulted' | 'offline' | 'offboarded'>): BotActivity {
  if (s.offline || s.offboarded) return 'offline';
  if (s.faulted) return 'faulted';
  if (s.charging.length > 0) return 'charging';
  if (s.working.length > 0) return 'working';
  return 'idle';
}

/** A state's interval that a change closes: [from, to) spent in `activity`. */
export interface Closed<A> {
  activity: A;
  from: number;
  to: number;
}

/** A bot that nothing is known of yet: idle since `at`. */
export function newBotState(botId: number, at: number): BotState {
  return { key: `bot|${botId}`, kind: 'bot', bot_id: botId, working: [], charging: [], faulted: false, offline: false, offboarded: false, activity: 'idle', since: at };
}

/**
 * A bot's state after its facts change at `at`: when its activity changes, the interval of the
 * last one is closed (the caller credits it to the hours it spans). A clock stepped back does
 * not make an interval negative.
 */
export function botMoves(state: BotState, change: Partial<Pick<BotState, 'working' | 'charging' | 'faulted' | 'offline' | 'offboarded'>>, at: number): { state: BotState; closed: Closed<BotActivity> | null } {
  const next = { ...state, ...change };
  const activity = activityOf(next);
  if (activity === state.activity) return { state: next, closed: null };
  const to = Math.max(at, state.since);
  return { state: { ...next, activity, since: to }, closed: { activity: state.activity, from: state.since, to } };
}

/** A balcony nothing waits at yet. */
export function newBalconyState(balconyId: number): BalconyState {
  return { key: `balcony|${balconyId}`, kind: 'balcony', balcony_id: balconyId, waiting: [], busy_since: null, presented_total: 0 };
}

/**
 * A balcony's state after job `jobId` starts (`waiting`) or stops waiting there at `at`: busy
 * from the first job waiting until the last one leaves, that interval closed then.
 */
export function balconyMoves(state: BalconyState, jobId: string, waiting: boolean, at: number): { state: BalconyState; closed: Closed<'busy'> | null } {
  const has = state.waiting.includes(jobId);
  if (has === waiting) return { state, closed: null };
  if (waiting) {
    return { state: { ...state, waiting: [...state.waiting, jobId], busy_since: state.waiting.length === 0 ? at : state.busy_since }, closed: null };
  }
  const rest = state.waiting.filter((id) => id !== jobId);
  if (rest.length > 0 || state.busy_since === null) return { state: { ...state, waiting: rest }, closed: null };
  const to = Math.max(at, state.busy_since);
  return { state: { ...state, waiting: rest, busy_since: null }, closed: { activity: 'busy', from: state.busy_since, to } };
}
