/**
 * Dispatch of one level as a pure function: from a snapshot to the decisions of one pass.
 * Ready jobs (ACCEPTED) are taken in order of priority (above 10 first, spec 3.4), then the
 * request's arrival, then the job's own order; a person's job waits at its balcony for the
 * trigger; a bot job gets a free target (a balcony position, a storage space, a buffer, a
 * charger) and a bot, or the reason it waits. Started jobs that nobody drives (after a brain
 * restart) are handed to the runner again. docs/requests.md, "The brain".
 */
import { BOT_JOBS, CARRIER_JOBS, PERSON_JOBS, type JobRecord, type JobWait } from '../../../domain/requests/records.js';
import type { Cell } from '../../../domain/site/load.js';
import { perSnapshot, type LevelSnapshot } from '../level/snapshot.js';
import type { MotionBot } from '../motion/motion.js';
import { botFor, carrierBot, heldByLastTry, heldOnItsCell, onBoard, reservedBots } from './bots.js';
import { QueueSeats, queuedFor } from './balcony-queue.js';
import {
  balconyAt, carriersComingInFront, carriersInFront, dist, freeBuffer, freeCharger, freeFor, freePort, freeSpace, key, started,
} from './places.js';
import { retryDue } from './recovery.js';

export type Decision =
  /** The job cannot start: say why (written only when the reason changed). */
  | { kind: 'wait'; job: JobRecord; wait: JobWait }
  /** A person's job starts waiting for its trigger at this balcony. */
  | { kind: 'await_person'; job: JobRecord; balcony: number | null; wait: JobWait }
  /** A bot job starts: this bot, to this target (null: a balcony position found once the carrier is lifted). */
  | { kind: 'start'; job: JobRecord; bot: number; target: Cell | null; balcony: number | null; phase: 'to_carrier' | 'to_target' }
  /** An idle bot stands where the job must go: a MOVING_BOT takes it to `to`. */
  | { kind: 'move_aside'; job: JobRecord; bot: number; to: Cell; wait: JobWait }
  /**
   * Carriers stand in front of a retrieval's carrier that no job moves (stored there, or this
   * one moved behind them, after the request was planned): its request sets them aside, front
   * first, and puts each back into storage once it is out of the way.
   */
  | { kind: 'set_aside'; job: JobRecord; carriers: string[]; wait: JobWait }
  /** A started job nobody drives (the brain restarted): the runner takes it up again. */
  | { kind: 'drive'; job: JobRecord }
  /** A cancelled job whose bot has not lifted anything yet: its bot stops, nothing more moves. */
  | { kind: 'abandon'; job: JobRecord }
  /** Nothing to do (a bot to take off a charger it is not on): the job succeeds at once. */
  | { kind: 'finish'; job: JobRecord; note: string }
  /** It cannot go on without a person (a carrier in front is not where the store has it): ABORTED for good, the reason says what to do. */
  | { kind: 'give_up'; job: JobRecord; reason: string };

/** What a person reads when a bot found nothing to lift where the store has a carrier. */
export function notFoundAt(place: { x: number; y: number }): string {
  return `was not found at ${place.x},${place.y}, where the store has it: put it back there by hand, then post the request again`;
}

/**
 * Carriers leaving a balcony first (they free a position for the next), then priority (higher
 * first), then the request's arrival, then the job's own order.
 */
export function dispatchOrder(s: LevelSnapshot, list: readonly JobRecord[]): JobRecord[] {
  const leaving = (j: JobRecord) => {
    if (j.type !== 'STORING' || !j.carrier_id) return 1;
    const c = s.carrier(j.carrier_id);
    return c && c.level_id === s.level.id && balconyAt(s, c) !== undefined ? 0 : 1;
  };
  // Each job's keys read once, not at every comparison (n log n lookups of its request and carrier).
  const keyed = list.map((job) => ({ job, leaving: leaving(job), ...s.order(job.request_id) }));
  keyed.sort((a, b) => a.leaving - b.leaving || b.priority - a.priority || a.counter - b.counter || a.job.seq - b.job.seq);
  return keyed.map((k) => k.job);
}

/** Everything one pass of the level decides. */
export function decide(s: LevelSnapshot): Decision[] {
  const out: Decision[] = [];
  const taken = new Set<number>();
  for (const j of s.jobs) if (started(j) && j.bot_id !== null && BOT_JOBS.has(j.type)) taken.add(j.bot_id);
  for (const job of s.jobs) {
    if (job.status === 'CANCELLING' && s.running.has(job.id) && beforeLift(job)) out.push({ kind: 'abandon', job });
    if (!started(job) || !BOT_JOBS.has(job.type) || s.running.has(job.id) || job.bot_id === null) continue;
    const bot = s.bots?.find((b) => b.id === job.bot_id);
    // After a restart, wait until the bot has reported to this brain's planner.
    if (bot?.online) out.push({ kind: 'drive', job });
    else out.push({ kind: 'wait', job, wait: lineWait(s) ?? { waiting_for: 'bot', reason: `bot ${job.bot_id} has not reported since the brain started` } });
  }
  const pass: Pass = { claimedCells: new Set(), claimedCarriers: new Set(), taken, reserved: reservedBots(s), queue: new QueueSeats(s) };
  for (const job of dispatchOrder(s, s.jobs.filter((j) => j.status === 'ACCEPTED'))) {
    if (!retryDue(job, s.now)) continue; // its wait says when
    if (PERSON_JOBS.has(job.type)) out.push(atBalcony(s, job));
    else if (BOT_JOBS.has(job.type)) out.push(startBotJob(s, job, pass));
  }
  return out;
}

/** A bot job on its way that has not lifted a carrier: stopping it leaves everything where it was. */
function beforeLift(job: JobRecord): boolean {
  return (job.progress.kind === 'carrier' && job.progress.phase === 'to_carrier') || (job.progress.kind === 'bot' && job.progress.phase === 'to_target');
}

/** What the decisions of one pass have taken so far. */
interface Pass {
  claimedCells: Set<string>;
  claimedCarriers: Set<string>;
  taken: Set<number>;
  reserved: ReadonlySet<number>;
  queue: QueueSeats;
}

function lineWait(s: LevelSnapshot): JobWait | undefined {
  return s.line.up ? undefined : { waiting_for: 'line', reason: `the radio line of level ${s.level.id} is down: ${s.line.reason}` };
}

/** A person's job waits for its trigger at the balcony where its carrier (or its bot) stands. */
function atBalcony(s: LevelSnapshot, job: JobRecord): Decision {
  const balcony = job.balcony_id ?? carrierBalcony(s, job) ?? botBalcony(s, job) ?? lastBalcony(s, job) ?? job.balcony_ids[0] ?? null;
  return { kind: 'await_person', job, balcony, wait: { waiting_for: 'trigger', reason: `waiting for a person at balcony ${balcony ?? '(any)'}: POST /api/v2/trigger/${job.id}` } };
}

function carrierBalcony(s: LevelSnapshot, job: JobRecord): number | undefined {
  const c = job.carrier_id ? s.carrier(job.carrier_id) : undefined;
  return c && c.level_id === s.level.id ? balconyAt(s, c) : undefined;
}

function botBalcony(s: LevelSnapshot, job: JobRecord): number | undefined {
  const b = job.bot_id === null ? undefined : s.bots?.find((m) => m.id === job.bot_id);
  return b ? balconyAt(s, b) : undefined;
}

/** PACKING: the balcony of its request's last worked job. */
function lastBalcony(s: LevelSnapshot, job: JobRecord): number | undefined {
  return job.parent_job_ids.map((id) => s.job(id)?.balcony_id).filter((b): b is number => b !== null && b !== undefined).at(-1);
}

/** Whether a job takes its carrier out of its lane: a retrieval or a setting aside, or any carrier job under way. */
function movesAway(j: JobRecord): boolean {
  return j.type === 'RETRIEVING' || j.type === 'BUFFERING' || (CARRIER_JOBS.has(j.type) && started(j));
}

/** Whether another started job moves this carrier now. */
function carrierInMotion(s: LevelSnapshot, carrierId: string, self: string): boolean {
  return (carrierJobs(s).moving.get(carrierId) ?? []).some((id) => id !== self);
}

/** Per carrier: the started carrier jobs that move it; the carriers some job takes out of their lane. */
const carrierJobs = perSnapshot((s) => {
  const moving = new Map<string, string[]>();
  const leaving = new Set<string>();
  for (const j of s.jobs) {
    if (!j.carrier_id) continue;
    if (movesAway(j)) leaving.add(j.carrier_id);
    if (!CARRIER_JOBS.has(j.type) || !started(j)) continue;
    const list = moving.get(j.carrier_id);
    if (list) list.push(j.id);
    else moving.set(j.carrier_id, [j.id]);
  }
  return { moving, leaving };
});

function startBotJob(s: LevelSnapshot, job: JobRecord, pass: Pass): Decision {
  const wait = (w: JobWait): Decision => ({ kind: 'wait', job, wait: w });
  if (s.paused) return wait({ waiting_for: 'system_paused', reason: 'the system is paused (POST a RESUME request)' });
  if (!s.bots) return wait({ waiting_for: 'bot', reason: 'no bots: the radio lines of this level are not running' });
  const down = lineWait(s);
  if (down) return wait(down);
  if (job.type === 'UNCHARGING') {
    const own = s.bots.find((b) => b.id === job.bot_id);
    if (own && own.online && !own.charging) return { kind: 'finish', job, note: `bot ${own.id} is not on a charger` };
  }
  let carrier: { id: string; at: Cell } | undefined;
  let holder: MotionBot | undefined;
  if (job.carrier_id && CARRIER_JOBS.has(job.type)) {
    const booked = s.carrier(job.carrier_id);
    if (!booked) return wait({ waiting_for: 'parents', reason: `carrier ${job.carrier_id} is not placed yet` });
    // On a bot, the carrier is where the bot is, whatever cell the store still books.
    holder = heldByLastTry(s, job);
    const c = holder ? { ...booked, x: holder.x, y: holder.y } : booked;
    if (pass.claimedCarriers.has(c.id) || carrierInMotion(s, c.id, job.id)) return wait({ waiting_for: 'bot_motion', reason: `carrier ${c.id} is being moved by another job` });
    // Set aside from in front of another, it was taken to a balcony meanwhile (another request
    // wanted it): people work on it there; it is set aside once it is back in storage.
    if (job.type === 'BUFFERING' && s.level.kindAt(c.x, c.y) === 'port') return wait({ waiting_for: 'carriers_in_front', reason: `carrier ${c.id} is at a balcony for another request` });
    const blocked = carriersInFront(s, c);
    if (job.type === 'RETRIEVING' && blocked.length > 0) {
      // Set aside again, it would be looked for where it is not, again and again.
      const lost = blocked.find((id) => s.missing(id));
      const at = lost === undefined ? undefined : s.carrier(lost);
      if (at) return { kind: 'give_up', job, reason: `carrier ${lost} in front of ${c.id} ${notFoundAt(at)}` };
      const reason = `carriers in front in its lane: ${blocked.join(', ')}`;
      const still = blocked.filter((id) => !pass.claimedCarriers.has(id) && !carrierJobs(s).leaving.has(id));
      if (still.length === 0) return wait({ waiting_for: 'carriers_in_front', reason });
      for (const id of still) pass.claimedCarriers.add(id);
      return { kind: 'set_aside', job, carriers: still, wait: { waiting_for: 'carriers_in_front', reason: `${reason}: ${still.join(', ')} set aside first` } };
    }
    // Fetching it now would shut the bot in once that carrier is down.
    const inbound = carriersComingInFront(s, c)[0];
    if (inbound) return wait({ waiting_for: 'carriers_in_front', reason: `carrier ${inbound} is being set down in front of it in its lane` });
    carrier = { id: c.id, at: c };
  }
  const free = freeFor(s, job.id, pass.claimedCells);
  const target = targetOf(s, job, carrier, free, pass);
  if ('wait' in target) return wait(target.wait);
  const held = carrier !== undefined && (holder !== undefined || onBoard(s, carrier.at) || heldOnItsCell(s, carrier.at));
  const found = held ? carrierBot(s, carrier!.id, carrier!.at, pass.taken, holder) : botFor(s, job, carrier?.at ?? null, pass.taken, pass.reserved);
  if ('wait' in found) return wait(found.wait);
  const bot = found.bot;
  // A bot stopped on the carrier's cell keeps any other out (the planner refuses a goal on a
  // cell it holds): an idle one is moved aside, and the job waits for it rather than start and
  // fail at once.
  const blocker = carrier && !held ? s.bots.find((b) => b.id !== bot.id && b.x === carrier!.at.x && b.y === carrier!.at.y) : undefined;
  if (blocker) {
    const reason = `bot ${blocker.id} stands on the cell of carrier ${carrier!.id}`;
    const aside = asideFor(s, blocker, pass);
    if (!aside) return wait({ waiting_for: 'bot', reason });
    pass.taken.add(blocker.id);
    pass.claimedCells.add(key(aside));
    return { kind: 'move_aside', job, bot: blocker.id, to: aside, wait: { waiting_for: 'bot', reason: `${reason}: it is moved aside to ${aside.x},${aside.y}` } };
  }
  if (target.cell) pass.claimedCells.add(key(target.cell));
  else if (job.type === 'RETRIEVING') pass.queue.take(job);
  if (carrier) pass.claimedCarriers.add(carrier.id);
  pass.taken.add(bot.id);
  return { kind: 'start', job, bot: bot.id, target: target.cell, balcony: target.balcony ?? job.balcony_id, phase: carrier ? 'to_carrier' : 'to_target' };
}

/**
 * Where an idle bot in the way goes: the nearest free highway cell no job goes to. None for a
 * bot that cannot move now (busy, holding a carrier, charging, faulted, lost) or that is moved
 * aside already.
 */
function asideFor(s: LevelSnapshot, bot: MotionBot, pass: Pass): Cell | undefined {
  if (!bot.online || !bot.idle || bot.faulted || bot.lifted || bot.charging || pass.taken.has(bot.id)) return undefined;
  if (s.jobs.some((j) => j.type === 'MOVING_BOT' && j.bot_id === bot.id)) return undefined;
  const occupied = new Set((s.bots ?? []).map((b) => key(b)));
  let best: Cell | undefined;
  for (const c of s.level.highway) {
    if (occupied.has(key(c)) || pass.claimedCells.has(key(c))) continue;
    if (!best || dist(c, bot) < dist(best, bot)) best = c;
  }
  return best;
}

type Target = { cell: Cell | null; balcony?: number } | { wait: JobWait };

/** Where a job takes its carrier or bot (null: a balcony position, found once the carrier is lifted), or why there is no such place now. */
function targetOf(s: LevelSnapshot, job: JobRecord, carrier: { id: string; at: Cell } | undefined, free: (c: Cell) => boolean, pass: Pass): Target {
  switch (job.type) {
    case 'RETRIEVING':
    case 'OFFBOARDING': {
      // Carriers already fetched and waiting (beside the balcony, mostly) take free
      // positions first: a new retrieval's carrier is a whole trip away.
      const from = carrier?.at ?? s.bots?.find((b) => b.id === job.bot_id);
      const port = job.type === 'RETRIEVING' && queuedFor(s, job) ? undefined : freePort(s, job, free, from);
      if (port) return port;
      if (job.type === 'RETRIEVING' && pass.queue.mayQueue(job)) return { cell: null };
      return { wait: { waiting_for: 'balcony', reason: `no free position at balcony ${job.balcony_ids.join(', ')}` } };
    }
    case 'STORING':
    case 'CLEAR_AUTOBAHN': {
      // Left on a bot over a space or buffer it may stand on: it is set down right there.
      const kind = carrier && s.level.kindAt(carrier.at.x, carrier.at.y);
      if (job.type === 'CLEAR_AUTOBAHN' && (kind === 'storage' || kind === 'buffer')) return { cell: carrier!.at };
      // Home to a space; after a failed try, or with every space out of reach, a buffer will do.
      const space = freeSpace(s, carrier?.id ?? null, carrier?.at, free)
        ?? (job.attempt > 1 || job.type === 'CLEAR_AUTOBAHN' ? freeBuffer(s, carrier?.id ?? null, carrier?.at, free) : undefined);
      return space ? { cell: space } : { wait: { waiting_for: 'storage_space', reason: 'no free storage space on the level its bot can reach' } };
    }
    case 'BUFFERING': {
      const buffer = freeBuffer(s, carrier?.id ?? null, undefined, free);
      return buffer ? { cell: buffer } : { wait: { waiting_for: 'storage_space', reason: 'no free buffer space on the level' } };
    }
    case 'CHARGING': {
      // A charging job ends once the bot charges; the bot stays there until its charge is
      // done, or until a bot under the threshold needs the charger and it may leave it.
      const charger = freeCharger(s, s.bots?.find((b) => b.id === job.bot_id), free);
      return charger ? { cell: charger } : { wait: { waiting_for: 'bot', reason: 'every charger is taken' } };
    }
    default: {
      if (job.target) return { cell: job.target };
      const bot = s.bots?.find((b) => b.id === job.bot_id);
      return bot ? { cell: { x: bot.x, y: bot.y } } : { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is not on the level` } };
    }
  }
}
