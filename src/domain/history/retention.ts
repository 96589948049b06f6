/**
 * What the history pruner does next, as pure functions of what it sees: which history leaves
 * the store (by age, and while the store is over its share of the disk, by size, oldest
 * first), when the budget is worth an event, and how many days are left at the present growth.
 */

export const DAY_MS = 86_400_000;

/** The history kinds the store holds, each leaving in its own slices. */
export type HistoryKind = 'requests' | 'events';

/** What the pruner sees before a slice. */
export interface HistorySnapshot {
  now: number;
  /** Days ended requests (with their jobs) are kept. */
  requestDays: number;
  /** Days events are kept. */
  eventDays: number;
  /** When the oldest ended request ended, and when the oldest event was made (undefined: none held). */
  oldestEnded: number | undefined;
  oldestEvent: number | undefined;
}

/** A slice to prune: the history of `kind` from before `before` (ms), for a reason a technician reads. */
export interface SliceChoice {
  kind: HistoryKind;
  before: number;
  reason: 'age' | 'size';
}

/**
 * Once over its budget, the store is pruned down to this share of it, so that one freed slice
 * does not leave it at the line to cross again with the next write.
 */
export const BUDGET_LOW_WATER = 0.9;

/** The next slice to prune, or undefined when nothing is due. Age first; then, with the store over its budget (`overBudget`), whichever history is older. */
export function nextSlice(s: HistorySnapshot, overBudget: boolean): SliceChoice | undefined {
  const requestCutoff = s.now - s.requestDays * DAY_MS;
  const eventCutoff = s.now - s.eventDays * DAY_MS;
  if (s.oldestEnded !== undefined && s.oldestEnded < requestCutoff) return { kind: 'requests', before: requestCutoff, reason: 'age' };
  if (s.oldestEvent !== undefined && s.oldestEvent < eventCutoff) return { kind: 'events', before: eventCutoff, reason: 'age' };
  if (!overBudget) return undefined;
  // Over the budget the oldest history goes first, whatever its kind: this kind's up to the
  // other's oldest (at least its own oldest instant, so the slice is never empty), a slice at a time.
  const requestsFirst = s.oldestEnded !== undefined && (s.oldestEvent === undefined || s.oldestEnded <= s.oldestEvent);
  if (requestsFirst) return { kind: 'requests', before: Math.max(s.oldestEvent ?? s.now + 1, s.oldestEnded! + 1), reason: 'size' };
  if (s.oldestEvent !== undefined) return { kind: 'events', before: Math.max(s.oldestEnded ?? s.now + 1, s.oldestEvent + 1), reason: 'size' };
  return undefined;
}

/** Whether size pruning starts (over the budget) or goes on (still above the low water), with hysteresis. */
export function overBudget(usedBytes: number, budgetBytes: number, pruning: boolean): boolean {
  return pruning ? usedBytes > budgetBytes * BUDGET_LOW_WATER : usedBytes > budgetBytes;
}

/** Shares of the budget at which an event warns: the technician hears of it well before writes fail. */
export const BUDGET_ALARMS = [80, 90] as const;
/** A raised alarm is cleared once the share is this many points below its line. */
const ALARM_HYSTERESIS = 5;

/** The highest alarm line crossed and said (0: none). */
export type BudgetAlarm = 0 | (typeof BUDGET_ALARMS)[number];

/** Whether the budget's share now raises an alarm (a higher line than the one said), and the state after. */
export function decideBudgetAlarm(said: BudgetAlarm, sharePercent: number): { raise?: BudgetAlarm; next: BudgetAlarm } {
  let reached: BudgetAlarm = 0;
  for (const line of BUDGET_ALARMS) if (sharePercent >= line) reached = line;
  if (reached > said) return { raise: reached, next: reached };
  if (said !== 0 && sharePercent < said - ALARM_HYSTERESIS) return { next: reached };
  return { next: said };
}

/** One reading of the store's size, kept to forecast its growth. */
export interface UsageSample {
  at: number;
  usedBytes: number;
}

/** Samples younger than this do not make a growth figure: an hour's noise is not a trend. */
export const MIN_FORECAST_SPAN_MS = 3_600_000;

/** Growth of the store (bytes a day) over the last day of samples, and the days until `roomBytes` are used at that rate. */
export function forecast(samples: readonly UsageSample[], now: number, roomBytes: number): { growthPerDay: number | null; daysLeft: number | null } {
  // A sample from the future is a clock that was ahead: it says nothing about growth.
  const past = samples.filter((s) => s.at <= now);
  const latest = past.at(-1);
  if (!latest) return { growthPerDay: null, daysLeft: null };
  const since = past.find((s) => s.at >= latest.at - DAY_MS)!;
  const span = latest.at - since.at;
  if (span < MIN_FORECAST_SPAN_MS) return { growthPerDay: null, daysLeft: null };
  const growthPerDay = ((latest.usedBytes - since.usedBytes) / span) * DAY_MS;
  const daysLeft = growthPerDay > 0 ? Math.max(0, roomBytes) / growthPerDay : null;
  return { growthPerDay: Math.round(growthPerDay), daysLeft: daysLeft === null ? null : Math.round(daysLeft * 10) / 10 };
}

/** The instant a request or job id of version 7 was made (its first 48 bits), or undefined for another kind of id. */
export function idInstant(id: string): number | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/**
 * Why an id is not found, when it may have been pruned: its own instant (a version 7 id) is no
 * later than the newest creation instant of anything pruned (`prunedThrough`, 0 before the first).
 */
export function prunedReason(what: 'request' | 'job', id: string, prunedThrough: number): string | undefined {
  const at = idInstant(id);
  if (at === undefined || prunedThrough === 0 || at > prunedThrough) return undefined;
  return `${what} ${id} does not exist: it was made ${new Date(at).toISOString()}, and ended ${what}s made up to ${new Date(prunedThrough).toISOString()} have been pruned (history.retentionDays) into the history archive`;
}

/**
 * How many records the next delete transaction takes: scaled from the last one's so that its
 * work on the event loop comes near `budgetMs` (halving at most, doubling at most, between
 * `least` and `most`), since what a record costs to delete depends on the load and the disk.
 */
export function nextDeleteSize(last: number, lastMs: number, budgetMs: number, least: number, most: number): number {
  const scaled = lastMs <= 0 ? last * 2 : (last * budgetMs) / lastMs;
  return Math.max(least, Math.min(most, Math.round(Math.max(last / 2, Math.min(last * 2, scaled)))));
}

/** The least share of the event loop the pruner takes however busy the rest keeps it: enough to keep up with the busiest site measured. */
export const PRUNER_SHARE_LEAST = 0.2;
/** The most it takes of an idle loop: a call that arrives still finds the loop within a hold (a few ms). */
export const PRUNER_SHARE_MOST = 0.8;

/**
 * The share of the event loop the pruner takes next, from the share the rest of the thread's
 * work (`othersBusy`, 0..1, measured while the pruner rested) kept it busy: what that work
 * leaves, within PRUNER_SHARE_LEAST and PRUNER_SHARE_MOST. A fixed share was either slow at
 * night or costly in the day.
 */
export function prunerShare(othersBusy: number): number {
  const left = 1 - (Number.isFinite(othersBusy) ? othersBusy : 1);
  return Math.max(PRUNER_SHARE_LEAST, Math.min(PRUNER_SHARE_MOST, left));
}

/** How long the pruner rests after holding the loop `heldMs`, so that its holds are `share` of the time. */
export function restAfter(heldMs: number, share: number): number {
  return (Math.max(0, heldMs) * (1 - share)) / share;
}
