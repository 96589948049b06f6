/**
 * When bots charge (docs/requests.md, automatic charging). Bots that only charged once under
 * `brain.chargeBelowPercent` drained alike and reached it together: half an hour into a busy
 * hour they queued for the level's chargers, a full charge each, while work waited for bots
 * (docs/benchmarks-site.md, "the simulated hour"). So an idle bot tops up whenever a charger
 * stands free, and a charging bot goes back to work once it has charged enough for the trip
 * to have been worth it, or gives its charger up earlier to a bot under the threshold.
 */
import type { JobRecord, RequestRecord } from '../../../domain/requests/records.js';
import type { Cell } from '../../../domain/site/load.js';
import type { MotionBot } from '../motion/motion.js';

/** An idle bot under this battery percent tops up while a charger of its level is free. */
export const TOP_UP_BELOW = 80;
/** Percent points above `brain.chargeBelowPercent` from which a charging bot gives its charger up to a bot under the threshold. */
const TAKE_BACK_MARGIN = 20;

/** Whether a charging bot has battery enough to give its charger up to a bot under the threshold. */
export function mayLeaveCharger(bot: MotionBot, chargeBelow: number): boolean {
  return bot.battery >= chargeBelow + TAKE_BACK_MARGIN;
}

/**
 * Whether a charging bot has charged enough to be taken for work: up to the top-up level.
 * Taken back as soon as it could give its charger up, a bot recharged a fifth of its battery
 * for a trip to the charger and back, and a busy fleet drained faster than its chargers
 * refilled it (docs/benchmarks-site.md, round 14).
 */
export function chargedForWork(bot: MotionBot, chargeBelow: number): boolean {
  return bot.battery >= Math.max(TOP_UP_BELOW, chargeBelow + TAKE_BACK_MARGIN);
}

/** The bot charging on a cell, if any. */
export function chargingOn(bots: readonly MotionBot[], cell: Cell): MotionBot | undefined {
  return bots.find((b) => b.charging && b.x === cell.x && b.y === cell.y);
}

export interface ChargeChoice {
  bot: MotionBot;
  why: 'low' | 'top_up';
}

/**
 * The bots of one level to send to charge now: every idle bot under `chargeBelow`, then, for
 * each charger no bot uses or goes to, the idle bot lowest under TOP_UP_BELOW. Idle means
 * online, without a goal, fault, carrier or charge, and with no open request or job of its own.
 * `held`: bots not to ask for now (their last charging request was refused: each refusal is an
 * aborted request on record, so asking every pass would fill the store).
 */
export function botsToCharge(
  chargers: readonly Cell[],
  bots: readonly MotionBot[],
  jobs: readonly JobRecord[],
  requests: readonly RequestRecord[],
  chargeBelow: number,
  held: ReadonlySet<number> = new Set(),
): ChargeChoice[] {
  if (chargers.length === 0) return [];
  const withWork = new Set<number | null>([...requests.map((r) => r.bot_id), ...jobs.map((j) => j.bot_id)]);
  const idle = bots.filter((b) => b.online && b.idle && !b.charging && !b.faulted && !b.lifted && !withWork.has(b.id) && !held.has(b.id));
  const low = idle.filter((b) => b.battery < chargeBelow);
  let free = chargers.length - low.length - jobs.filter((j) => j.type === 'CHARGING').length;
  for (const c of chargers) if (chargingOn(bots, c)) free--;
  const topUp = free <= 0 ? [] : idle
    .filter((b) => b.battery >= chargeBelow && b.battery < TOP_UP_BELOW)
    .sort((a, b) => a.battery - b.battery)
    .slice(0, free);
  return [...low.map((bot) => ({ bot, why: 'low' as const })), ...topUp.map((bot) => ({ bot, why: 'top_up' as const }))];
}
