/**
 * When bots charge (docs/requests.md, automatic charging). Bots that only charged once under
 * `brain.chargeBelowPercent` drained alike and reached it together: half an hour into a busy
 * hour they queued for the level's chargers, a full charge each, while work waited for bots
 * (docs/benchmarks-site.md, "the simulated hour"). So an idle bot tops up whenever a charger stands free,
 * and a charging bot with enough battery goes back to work when work waits for a bot or a
 * bot under the threshold needs its charger.
 */
import type { JobRecord, RequestRecord } from '../../../domain/requests/records.js';
import type { Cell } from '../../../domain/site/load.js';
import type { MotionBot } from '../motion/motion.js';

/** An idle bot under this battery percent tops up while a charger of its level is free. */
export const TOP_UP_BELOW = 80;
/** Percent points above `brain.chargeBelowPercent` from which a charging bot may be taken off its charger. */
const TAKE_BACK_MARGIN = 20;

/** Whether a charging bot has battery enough to leave its charger for work, or for a bot that needs the charger more. */
export function mayLeaveCharger(bot: MotionBot, chargeBelow: number): boolean {
  return bot.battery >= chargeBelow + TAKE_BACK_MARGIN;
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
