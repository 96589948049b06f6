/**
 * What the store keeps of the KPIs: figures per hour, keyed hour first so a window is one key
 * range and pruning drops a range; a small state record per balcony and per bot, for the
 * intervals still open (busy since, in a state since); and a mark per carrier presented to a
 * request, so a carrier counts once however many of the request's jobs wait for it.
 * Durations are kept in ms.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { Histogram } from './histogram.js';

/** The key prefix of an hour: fixed width, so string keys sort by time. */
export function hourKey(hour: number): string {
  return String(hour).padStart(15, '0');
}

/** A balcony's figures in one hour. */
export interface BalconyHour {
  key: string;
  kind: 'balcony';
  hour: number;
  balcony_id: number;
  carriers_presented: number;
  order_lines_picked: number;
  pieces_picked: number;
  busy_ms: number;
}

/** Ms in each state but idle, of one bot or (`bot_id` 0) the fleet summed, in one hour. */
export interface BotHour {
  key: string;
  kind: 'bot';
  hour: number;
  bot_id: number;
  working_ms: number;
  charging_ms: number;
  faulted_ms: number;
  offline_ms: number;
}

/** Requests that reached SUCCEEDED in one hour, and their lead times (created to done). */
export interface RequestHour {
  key: string;
  kind: 'requests';
  hour: number;
  done: number;
  lead_times: Histogram;
}

/** Events of warning severity or worse with one code in one hour. */
export interface ErrorHour {
  key: string;
  kind: 'errors';
  hour: number;
  code: string;
  count: number;
}

export type KpiHour = BalconyHour | RequestHour | ErrorHour;

/** The bot id under which the fleet's sums are kept. */
export const FLEET = 0;

export const balconyHourKey = (hour: number, balconyId: number) => `${hourKey(hour)}|balcony|${String(balconyId).padStart(6, '0')}`;
export const requestHourKey = (hour: number) => `${hourKey(hour)}|requests`;
export const errorHourKey = (hour: number, code: string) => `${hourKey(hour)}|errors|${code}`;
export const botHourKey = (hour: number, botId: number) => `${hourKey(hour)}|${String(botId).padStart(9, '0')}`;

/** Figures per hour of balconies, requests and errors. */
export const kpiHours: CollectionDef<KpiHour> = { name: 'kpi_hours', key: (r) => r.key };
/** Figures per hour of each bot and of the fleet: apart, so a window of the site reads no bot but the fleet's. */
export const kpiBotHours: CollectionDef<BotHour> = { name: 'kpi_bot_hours', key: (r) => r.key };

/** A balcony now: the jobs waiting there for a person, since when one has, and every carrier presented there so far. */
export interface BalconyState {
  key: string;
  kind: 'balcony';
  balcony_id: number;
  waiting: string[];
  busy_since: number | null;
  presented_total: number;
}

/** What a bot is doing, by priority: offline (or offboarded), faulted, charging, working, idle. */
export type BotActivity = 'offline' | 'faulted' | 'charging' | 'working' | 'idle';

/** A bot now: the facts its state follows from, its state and since when. */
export interface BotState {
  key: string;
  kind: 'bot';
  bot_id: number;
  /** Its open jobs moving it or its carrier (EXECUTING), and its running CHARGING jobs. */
  working: string[];
  charging: string[];
  /** A fault event (0x7001) not yet followed by new work or a link-up (0x7003). */
  faulted: boolean;
  /** Lost on its radio line (0x7002) until it answers again (0x7003). */
  offline: boolean;
  /** Off its level in the bot table (offboarded). */
  offboarded: boolean;
  activity: BotActivity;
  since: number;
}

/** When keeping began: elapsed time (and so idle time) counts from it. */
export interface KeepingBegan {
  key: 'began';
  kind: 'began';
  at: number;
}

export type KpiState = BalconyState | BotState | KeepingBegan;

export const balconyStateKey = (balconyId: number) => `balcony|${balconyId}`;
export const botStateKey = (botId: number) => `bot|${botId}`;

export const kpiStates: CollectionDef<KpiState> = { name: 'kpi_states', key: (r) => r.key };

/** A carrier presented for a request: `request_id|carrier_id`. */
export interface PresentedMark {
  key: string;
}

export const presentedMarkKey = (requestId: string, carrierId: string) => `${requestId}|${carrierId}`;
export const kpiPresented: CollectionDef<PresentedMark> = { name: 'kpi_presented', key: (r) => r.key };
