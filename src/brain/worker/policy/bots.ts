/** Which bot runs a job, as pure functions of a snapshot; or why none can now. */
import { CARRIER_JOBS, type JobRecord, type JobWait } from '../../../domain/requests/records.js';
import { CARRIER_PLACES, type Cell } from '../../../domain/site/load.js';
import type { LevelSnapshot } from '../level/snapshot.js';
import type { MotionBot } from '../motion/motion.js';
import { chargedForWork } from './charging.js';
import { dist } from './places.js';

export type BotChoice = { bot: MotionBot } | { wait: JobWait };

/**
 * Bots kept for work of their own: a bot named by an open job that is not a carrier job
 * (sent to charge, offboarding, tags), whatever that job's state. Taken for carriers, it would
 * leave for the charger with one on board, or drive off the balcony it is being taken off.
 */
export function reservedBots(s: LevelSnapshot): Set<number> {
  const out = new Set<number>();
  for (const j of s.jobs) if (j.bot_id !== null && !CARRIER_JOBS.has(j.type) && j.status !== 'CREATED') out.add(j.bot_id);
  return out;
}

/** The carrier stands on no place for carriers: it is on the bot that stopped with it. */
export function onBoard(s: LevelSnapshot, carrier: Cell): boolean {
  return !CARRIER_PLACES.has(s.level.kindAt(carrier.x, carrier.y));
}

/** A bot with its lift up stands on the carrier's cell: it holds that carrier (a loaded bot enters no cell with another). */
export function heldOnItsCell(s: LevelSnapshot, carrier: Cell): boolean {
  return (s.bots ?? []).some((b) => b.lifted && b.x === carrier.x && b.y === carrier.y);
}

/**
 * The bot a job runs on: its own for bot jobs, else the nearest idle one with battery to
 * spare; failing that, the charging one with the most battery that has charged enough for work.
 */
export function botFor(s: LevelSnapshot, job: JobRecord, carrier: Cell | null, taken: ReadonlySet<number>, reserved: ReadonlySet<number>): BotChoice {
  const bots = s.bots ?? [];
  if (job.bot_id !== null && !CARRIER_JOBS.has(job.type)) {
    const own = bots.find((b) => b.id === job.bot_id);
    if (!own) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is not on the level` } };
    if (!own.online) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} does not answer on the radio line` } };
    if (own.faulted) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} has a fault; it goes on once the fault is cleared` } };
    if (taken.has(own.id) || !own.idle) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is busy` } };
    if (own.lifted) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} holds a carrier` } };
    return { bot: own };
  }
  const from = carrier ?? { x: 0, y: 0 };
  let best: MotionBot | undefined;
  for (const b of bots) {
    if (!b.online || !b.idle || b.faulted || b.lifted || taken.has(b.id) || reserved.has(b.id)) continue;
    if (b.charging ? !chargedForWork(b, s.chargeBelow) : b.battery < s.chargeBelow) continue;
    const better = !best || (b.charging === best.charging
      ? (b.charging ? b.battery > best.battery : dist(b, from) < dist(best, from))
      : !b.charging);
    if (better) best = b;
  }
  if (best) return { bot: best };
  if (bots.length > 0 && !bots.some((b) => b.online)) return { wait: { waiting_for: 'line', reason: `no bot of level ${s.level.id} answers on its radio line` } };
  return { wait: { waiting_for: 'bot', reason: 'no idle bot with enough battery on the level' } };
}

/**
 * The bot a retry's carrier is on: its last try's bot, when that try had lifted it and the bot's
 * lift is still up. Only a job lowers a lift, and a bot holding one is given no other carrier,
 * so the carrier is still on it; with no job, traffic may have pushed it anywhere, while the
 * store books the carrier where the try ended until a reconcile reads the bot's tag.
 */
export function heldByLastTry(s: LevelSnapshot, job: JobRecord): MotionBot | undefined {
  const last = job.recovers === null ? undefined : s.job(job.recovers);
  if (!last || last.bot_id === null || last.carrier_id !== job.carrier_id) return undefined;
  if (last.progress.kind !== 'carrier' || last.progress.phase !== 'carrying') return undefined;
  return s.bots?.find((b) => b.id === last.bot_id && b.lifted);
}

/**
 * The bot that holds a carrier on board: `holder` when known (heldByLastTry), else the one on the
 * carrier's cell, else (a bot stopped may be the next cell on from where its fault was reported)
 * one beside it. Never a neighbour while a carrier stands on it: bots holding carriers at two
 * positions of a balcony stand side by side, and a lifted bot on the cell of a carrier the store
 * places there holds that one.
 */
export function carrierBot(s: LevelSnapshot, carrierId: string, at: Cell, taken: ReadonlySet<number>, holder?: MotionBot): BotChoice {
  const b = holder ?? liftedAt(s, at);
  if (!b) return { wait: { waiting_for: 'bot', reason: `carrier ${carrierId} is on a bot at ${at.x},${at.y} that does not report: set it down by hand, then onboard the carrier again` } };
  if (!b.online) return { wait: { waiting_for: 'line', reason: `carrier ${carrierId} is on bot ${b.id}, which does not answer on the radio line; it goes on once the bot is back` } };
  if (b.faulted) return { wait: { waiting_for: 'bot', reason: `carrier ${carrierId} is on bot ${b.id}, which has a fault; it goes on once the bot is cleared` } };
  if (taken.has(b.id) || !b.idle) return { wait: { waiting_for: 'bot', reason: `carrier ${carrierId} is on bot ${b.id}, which is busy` } };
  return { bot: b };
}

/** A bot with its lift up on the cell, else beside it on a cell where no carrier stands. */
function liftedAt(s: LevelSnapshot, at: Cell): MotionBot | undefined {
  const lifted = (s.bots ?? []).filter((m) => m.lifted);
  return lifted.find((m) => m.x === at.x && m.y === at.y) ?? lifted.find((m) => dist(m, at) === 1 && s.carrierAt(m) === undefined);
}
