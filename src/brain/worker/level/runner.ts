/**
 * Carries out the decisions of a level's dispatch and records their outcomes: the waits and
 * starts of a pass in one write, then for each started bot job its motion (to the carrier,
 * lift, to the target or a balcony position when one frees, lower or hold) with the store
 * following each step, and after a failed try what the recovery policy says. A decision made
 * on a snapshot that a commit overtook (a cancel between the pass and its write) is dropped
 * alone; the next pass decides again. Faults are outcomes it records, never exceptions that
 * end a pass.
 */
import type { CarrierPlaces } from '../../../domain/inventory/carrier-places.js';
import type { Inventory } from '../../../domain/inventory/inventory.js';
import { CARRIER_JOBS, type JobProgress, type JobRecord, type JobWait } from '../../../domain/requests/records.js';
import type { Requests } from '../../../domain/requests/requests.js';
import type { Cell, SiteLevel } from '../../../domain/site/load.js';
import type { Logger } from '../../../log/logger.js';
import type { Arrival, LevelMotion, Standing } from '../motion/motion.js';
import { chargingOn } from '../policy/charging.js';
import { dispatchOrder, notFoundAt, type Decision } from '../policy/dispatch.js';
import { freeFor, freePort, key, nextForPort, stagePlace, stagedAt, started } from '../policy/places.js';
import { recover, type Failure } from '../policy/recovery.js';
import { PortPoll } from './port-poll.js';
import type { LevelSnapshot, RunnerState } from './snapshot.js';

/** How often a bot holding a carrier for a full balcony looks for a free position. */
const PORT_POLL_MS = 50;

export interface RunnerDeps {
  level: SiteLevel;
  requests: Requests;
  inventory: Inventory;
  carriers: CarrierPlaces;
  motion: LevelMotion;
  logger: Logger;
  now(): number;
  /** A snapshot of the level now (this runner's state included). */
  snapshot(): LevelSnapshot;
}

export class LevelRunner implements RunnerState {
  readonly running = new Set<string>();
  /** Carrier id -> cells its bot found out of reach, while the level's carriers stay as they were. */
  private readonly outOfReach = new Map<string, { version: number; cells: Set<string> }>();
  /** Carrier id -> its record's updated_at when a bot found nothing to lift where the store had it. */
  private readonly notFound = new Map<string, number>();
  /** Bot id -> the carrier it held when a job failed as it went off the radio line. */
  private readonly heldOffLine = new Map<number, string>();
  /** Buffers chosen for a bot to wait at whose choice is not written yet. */
  private readonly staging = new Set<string>();
  private readonly stopListening: () => void;
  private readonly portPoll: PortPoll;
  private stopped = false;

  constructor(private readonly deps: RunnerDeps) {
    this.portPoll = new PortPoll(() => deps.snapshot(), PORT_POLL_MS);
    this.stopListening = deps.motion.onBackOnLine((botId, standing) => {
      // Nobody awaits it: a failed write (storage full) is logged, not an unhandled rejection in the brain thread.
      this.backOnLine(botId, standing).catch((err: unknown) => deps.logger.error({ err, bot_id: botId }, 'could not follow a carrier set down off the radio line'));
    });
  }

  unreachable(carrierId: string): ReadonlySet<string> {
    const known = this.outOfReach.get(carrierId);
    return known && known.version === this.deps.carriers.version(this.deps.level.id) ? known.cells : EMPTY;
  }

  missing(carrierId: string): boolean {
    const seen = this.notFound.get(carrierId);
    return seen !== undefined && seen === this.deps.carriers.of(carrierId)?.updated_at;
  }

  /** Stops recording outcomes: motion still under way is left to the next brain, which takes it up from the store. */
  stop(): void {
    this.stopped = true;
    this.stopListening();
  }

  /** Writes a pass's waits and starts in one transaction, then drives what started. */
  async apply(decisions: readonly Decision[]): Promise<void> {
    if (decisions.length === 0 || this.stopped) return;
    const { requests } = this.deps;
    for (const d of decisions) {
      if (d.kind === 'abandon' && this.deps.motion.abandon(d.job.bot_id!)) this.deps.logger.info({ job_id: d.job.id, bot_id: d.job.bot_id }, 'cancelled before its bot lifted anything: the bot stops');
    }
    // A wait the job says already changes nothing: left out before the transaction, since a
    // pass over 900 waiting jobs read each back from the store twice to write nothing, and
    // committed (with its fsync) even when no decision changed anything.
    const changing = decisions.filter((d) => d.kind !== 'wait' || !sameWait(d.job.wait, d.wait));
    if (changing.length === 0) return;
    const drive = await requests.write(() => {
      const out: JobRecord[] = [];
      for (const d of changing) {
        const current = requests.findJob(d.job.id);
        // A commit overtook the snapshot (a cancel, a trigger): this decision is void.
        if (!current || current.status !== d.job.status) continue;
        switch (d.kind) {
          case 'wait':
            requests.explain(current, d.wait);
            break;
          case 'await_person':
            requests.moveJob(current, 'EXECUTING', { balcony_id: d.balcony, wait: d.wait });
            break;
          case 'start':
            out.push(requests.moveJob(current, 'EXECUTING', {
              bot_id: d.bot, balcony_id: d.balcony, target: d.target, retry_at: null,
              wait: { waiting_for: 'bot_motion', reason: `bot ${d.bot} is on its way` }, progress: withPhase(current.progress, d.phase),
            }, `bot ${d.bot}, target ${d.target ? `${d.target.x},${d.target.y}` : 'the first free balcony position'}`));
            break;
          case 'move_aside':
            requests.explain(current, d.wait);
            requests.addJob(current.request_id, 'MOVING_BOT', { bot_id: d.bot, level_id: current.level_id, target: d.to, quantity: 1 });
            break;
          case 'set_aside': {
            requests.explain(current, d.wait);
            let before: JobRecord | undefined;
            for (const carrierId of d.carriers) {
              const fields = { carrier_id: carrierId, level_id: current.level_id };
              before = requests.addJob(current.request_id, 'BUFFERING', { ...fields, parent_job_ids: before ? [before.id] : [] }, { in_front_of: current.carrier_id! });
              requests.addJob(current.request_id, 'STORING', { ...fields, parent_job_ids: [before.id] });
            }
            this.deps.logger.info({ job_id: current.id, carrier_id: current.carrier_id, in_front: d.carriers }, 'carriers in front that no job moves: set aside for this retrieval');
            break;
          }
          case 'drive':
            if (!this.running.has(current.id)) out.push(current);
            break;
          case 'give_up':
            requests.abortJob(current, d.reason, null);
            requests.settle(current.request_id);
            this.deps.logger.warn({ job_id: current.id, job_type: current.type, carrier_id: current.carrier_id, reason: d.reason }, 'bot job given up');
            break;
          case 'finish': {
            const running = requests.moveJob(current, 'EXECUTING', { wait: null });
            requests.moveJob(running, 'SUCCEEDED', { ended_because: d.note }, d.note);
            requests.settle(current.request_id);
            break;
          }
        }
      }
      return out;
    });
    for (const job of drive) this.run(job);
  }

  private run(job: JobRecord): void {
    if (this.running.has(job.id)) return;
    this.running.add(job.id);
    void this.drive(job)
      .catch((err: unknown) => {
        this.deps.logger.error({ err, job_id: job.id }, 'bot job failed unexpectedly');
        // Counted as a failed try: left EXECUTING, every pass would drive it into the same error again.
        if (!this.stopped) return this.failed(job, { cause: 'fault', reason: `failed unexpectedly: ${err instanceof Error ? err.message : String(err)}` });
      })
      .catch((err: unknown) => this.deps.logger.error({ err, job_id: job.id }, 'could not record the unexpected failure of a bot job'))
      .finally(() => this.running.delete(job.id));
  }

  /** A started bot job to its end: SUCCEEDED (CANCELLED if cancelled meanwhile), or a failed try handed to the recovery policy. */
  private async drive(job: JobRecord): Promise<void> {
    const { motion, level, requests, inventory } = this.deps;
    const bot = job.bot_id!;
    // The bot's own lift state decides, not the phase on record: after a restart the bot may
    // hold the carrier already, or (the site restarted too) not any more.
    const holding = motion.bots().find((b) => b.id === bot)?.lifted === true;
    if (job.carrier_id && CARRIER_JOBS.has(job.type)) {
      const carrier = this.deps.carriers.of(job.carrier_id);
      if (!carrier) return this.failed(job, { cause: 'no_carrier', reason: `carrier ${job.carrier_id} is not in the store any more` });
      if (!holding) {
        const lifted = await motion.go(bot, { x: carrier.x, y: carrier.y, then: 'lift' });
        if (this.stopped) return;
        if (!lifted.ok && lifted.cause === 'cancelled') return this.cancelled(job);
        if (!lifted.ok) {
          if (lifted.cause === 'no_carrier') this.notFound.set(carrier.id, carrier.updated_at);
          return this.failed(job, lifted.cause === 'no_carrier'
            ? { cause: 'no_carrier', reason: `carrier ${carrier.id} ${notFoundAt(carrier)}` }
            : lifted);
        }
      }
      // A carrier leaving a balcony position (lifted now, or held up there since it came) is
      // booked to the space it goes to at once: the position is free for the next carrier
      // while this one travels (the store holds one carrier per cell).
      const leaving = job.type === 'STORING' && job.target !== null && level.kindAt(carrier.x, carrier.y) === 'port' ? job.target : undefined;
      if (!holding || leaving || job.progress.kind !== 'carrier' || job.progress.phase !== 'carrying') {
        job = await requests.write(() => {
          if (leaving) inventory.placeCarrierInWrite(job.carrier_id!, level.id, leaving.x, leaving.y);
          return requests.updateJob(job, { progress: withPhase(job.progress, 'carrying'), wait: { waiting_for: 'bot_motion', reason: `bot ${bot} carries ${job.carrier_id}` } });
        });
        // Lifted before this brain started (the last one stopped before it could record it):
        // this planner was given the cell as holding a carrier, barred to loaded bots.
        if (holding) motion.refreshCell(carrier.x, carrier.y);
      }
    }
    if (!job.target) {
      const placed = await this.waitForPort(job);
      if (!placed) return;
      job = placed;
    }
    const target = job.target!;
    const then = arrivalFor(job, target, level);
    // A bot with battery enough charges on the charger this one needs: it leaves it.
    const occupant = then === 'charge' ? chargingOn(motion.bots(), target) : undefined;
    if (occupant && occupant.id !== bot) await motion.stopCharging(occupant.id);
    const arrived = await motion.go(bot, { x: target.x, y: target.y, then });
    if (this.stopped) return;
    if (!arrived.ok && arrived.cause === 'cancelled') return this.cancelled(job);
    if (!arrived.ok) return this.failed(job, arrived, target);
    const other = await requests.write(() => {
      const current = requests.job(job.id);
      if (job.carrier_id && CARRIER_JOBS.has(job.type)) {
        // The bot stands there with this carrier, so the other record is stale; which of the
        // two the store should keep is a person's call, and putting this one there would
        // break the store's one-carrier-a-cell rule (before, it threw on every pass, forever).
        const there = inventory.placeCarrierUnlessTakenInWrite(job.carrier_id, level.id, target.x, target.y);
        if (there !== undefined) return there;
      }
      if (current.status !== 'EXECUTING' && current.status !== 'CANCELLING') return undefined;
      const end = { wait: null, progress: withPhase(current.progress, 'done') };
      if (current.status === 'CANCELLING') requests.moveJob(current, 'CANCELLED', { ...end, ended_because: 'request cancelled' });
      else requests.moveJob(current, 'SUCCEEDED', end);
      requests.settle(current.request_id);
      return undefined;
    });
    if (other !== undefined) {
      const reason = `it stands with carrier ${job.carrier_id} at ${target.x},${target.y}, where the store has carrier ${other}: carrier ${other} is not there`;
      await this.failed(job, { cause: 'misplaced', reason }, target);
    }
  }

  /** Cancelled before its bot lifted anything: nothing moved, the job ends CANCELLED. */
  private async cancelled(job: JobRecord): Promise<void> {
    await this.deps.requests.write(() => {
      const current = this.deps.requests.job(job.id);
      if (current.status !== 'CANCELLING') return;
      this.deps.requests.moveJob(current, 'CANCELLED', { wait: null, ended_because: 'request cancelled before its bot lifted anything' });
      this.deps.requests.settle(current.request_id);
    });
  }

  /**
   * A bot holding a carrier for a full balcony waits until a position frees; higher priority,
   * then the nearer, then the older request, goes first. Returns the job with its target, or
   * undefined when the brain stopped or the wait failed.
   */
  private async waitForPort(job: JobRecord): Promise<JobRecord | undefined> {
    const { requests } = this.deps;
    await requests.write(() => requests.explain(job, { waiting_for: 'balcony', reason: `bot ${job.bot_id} holds ${job.carrier_id} until a position at balcony ${job.balcony_ids.join(', ')} frees` }));
    for (;;) {
      if (this.stopped) return undefined;
      const current = requests.job(job.id);
      if (current.status === 'CANCELLING') {
        // Cancelled while holding: set the carrier down where it was taken from.
        const from = this.deps.carriers.of(current.carrier_id!)!;
        return requests.write(() => requests.updateJob(current, { target: { x: from.x, y: from.y } }));
      }
      const s = this.portPoll.snapshot();
      const bot = s.bots?.find((b) => b.id === current.bot_id);
      const port = freePort(s, current, freeFor(s, current.id), bot);
      if (port && nextForPort(s, port, (list) => dispatchOrder(s, list)) === current.id) {
        return requests.write(() => requests.updateJob(current, {
          target: port.cell, balcony_id: port.balcony, progress: withStage(current.progress, null),
          wait: { waiting_for: 'bot_motion', reason: `bot ${current.bot_id} brings ${current.carrier_id} to balcony ${port.balcony}` },
        }));
      }
      if (!(await this.stage(current, s))) return undefined;
      await this.portPoll.next();
    }
  }

  /**
   * Takes a bot waiting for a position to a free buffer beside its balcony, or back to the one
   * it was given (after a restart it may have stopped on the way); a bot waiting at a buffer
   * moves on to one beside a balcony shorter of carriers (stagePlace). False when the bot
   * failed on the way (recorded) or the brain stopped.
   */
  private async stage(job: JobRecord, s: LevelSnapshot): Promise<boolean> {
    const staged = stagedAt(job);
    const bot = s.bots?.find((b) => b.id === job.bot_id);
    if (!bot) return true;
    let at: Cell | undefined = staged;
    if (!at || (bot.x === at.x && bot.y === at.y)) {
      const cell = stagePlace(s, job, bot, this.staging);
      if (!cell || (staged && key(cell) === key(staged))) return true;
      at = cell;
      // Claimed until written: the snapshots of other bots' waits show it only once committed,
      // and two bots sent to one buffer left the second with no way there once the first held it.
      this.staging.add(key(cell));
      try {
        job = await this.deps.requests.write(() => this.deps.requests.updateJob(job, {
          progress: withStage(job.progress, cell),
          wait: { waiting_for: 'balcony', reason: `bot ${job.bot_id} holds ${job.carrier_id} at the buffer ${cell.x},${cell.y} until a position at balcony ${job.balcony_ids.join(', ')} frees` },
        }));
      } finally {
        this.staging.delete(key(cell));
      }
    }
    const arrived = await this.deps.motion.go(bot.id, { x: at.x, y: at.y, then: 'hold' });
    if (this.stopped) return false;
    if (!arrived.ok) {
      await this.failed(job, arrived.cause === 'cancelled' ? { cause: 'refused', reason: 'stopped on its way to a buffer' } : arrived, at);
      return false;
    }
    return true;
  }

  /** Records a failed try as the recovery policy says (a copy later, a person, or given up). */
  private async failed(job: JobRecord, failure: Failure, target?: Cell): Promise<void> {
    const { requests, inventory, motion, level, logger } = this.deps;
    const current = requests.findJob(job.id) ?? job;
    const recovery = recover(current, failure, this.deps.now());
    logger.warn({ job_id: job.id, job_type: job.type, carrier_id: job.carrier_id, progress: current.progress, target, bot_id: job.bot_id, attempt: current.attempt, reason: failure.reason, clearing_in_ms: failure.clearingInMs, recovery: recovery.kind },
      'bot job failed');
    if (recovery.kind === 'leave') return;
    // A bot that stopped holding the carrier has it on board: the store says where it is now
    // (from its telemetry: a bot the planner lost track of still carries it).
    const bot = job.bot_id === null ? undefined : motion.lastSeen(job.bot_id);
    const onBoard = job.carrier_id !== null && CARRIER_JOBS.has(job.type) && bot?.lifted === true;
    // A lost bot finishes the segment it was on (protocol section 11): its last report may be a
    // balcony position it left, given since to the next carrier. The brain's reconcile follows
    // the carrier by its tag once the bot reports again.
    const staleReport = failure.cause === 'lost' && onBoard && this.goingTo(bot!, job.id);
    const reason = `bot ${job.bot_id}: ${failure.reason}`;
    if (failure.cause === 'lost' && onBoard) this.heldOffLine.set(job.bot_id!, job.carrier_id!);
    await requests.write(() => {
      if (onBoard && !staleReport) {
        const there = inventory.placeCarrierUnlessTakenInWrite(job.carrier_id!, level.id, bot!.x, bot!.y);
        if (there !== undefined) logger.warn({ job_id: job.id, carrier_id: job.carrier_id, bot_id: job.bot_id, at: bot, store_has: there }, 'bot holds its carrier where the store has another: the store keeps both as they were');
      }
      const now = requests.job(job.id);
      if (now.status !== 'EXECUTING' && now.status !== 'CANCELLING') return;
      if (recovery.kind === 'retry') requests.abortJob(now, reason, { at: recovery.at, counts: recovery.counts });
      else if (recovery.kind === 'person') requests.failJob(now, reason);
      else requests.abortJob(now, reason, null);
      requests.settle(now.request_id);
    });
    // Remembered against the carriers as they stand after this failure (it may have put the carrier on its bot's cell).
    if (failure.cause === 'unreachable' && target && job.carrier_id) this.markUnreachable(job.carrier_id, target);
  }

  /**
   * A bot that went off the line holding its job's carrier answers again with its lift down: a
   * LOWER under way completed off the line (protocol section 11), so the carrier stands on the
   * cell the bot answers from, and the store follows it there. Left where the bot's last report
   * put it, the retry looked for it there, found nothing and gave the request up, the carrier
   * booked on the highway (chaos seed 1070072424). Still up, the brain's reconcile follows it.
   */
  private async backOnLine(botId: number, standing: Standing): Promise<void> {
    const carrierId = this.heldOffLine.get(botId);
    this.heldOffLine.delete(botId);
    if (carrierId === undefined || standing.lifted || this.stopped) return;
    const { requests, inventory, level, logger, motion } = this.deps;
    const booked = this.deps.carriers.of(carrierId);
    if (!booked || (booked.x === standing.x && booked.y === standing.y)) return;
    const other = await requests.write(() => inventory.placeCarrierUnlessTakenInWrite(carrierId, level.id, standing.x, standing.y));
    if (other !== undefined) {
      logger.warn({ bot_id: botId, carrier_id: carrierId, store: booked, at: standing, store_has: other }, 'bot set its carrier down off the radio line where the store has another: the store keeps both as they were');
      return;
    }
    logger.warn({ bot_id: botId, carrier_id: carrierId, store: booked, at: standing }, 'bot set its carrier down off the radio line: the store follows it');
    motion.refreshCell(booked.x, booked.y);
    motion.refreshCell(standing.x, standing.y);
  }

  /** Whether another running job of the level goes to the cell (or waits there for a position). */
  private goingTo(cell: Cell, self: string): boolean {
    return this.deps.snapshot().jobs.some((j) => {
      const at = j.id === self || !started(j) ? undefined : j.target ?? stagedAt(j);
      return at !== undefined && at.x === cell.x && at.y === cell.y;
    });
  }

  private markUnreachable(carrierId: string, cell: Cell): void {
    const version = this.deps.carriers.version(this.deps.level.id);
    let known = this.outOfReach.get(carrierId);
    if (!known || known.version !== version) this.outOfReach.set(carrierId, (known = { version, cells: new Set() }));
    known.cells.add(key(cell));
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** Whether two waits say the same (Requests.explain writes only when they do not). */
function sameWait(a: JobWait | null, b: JobWait): boolean {
  return a?.waiting_for === b.waiting_for && a.reason === b.reason;
}

/** What the bot does once on the job's target. */
function arrivalFor(job: JobRecord, target: Cell, level: SiteLevel): Arrival {
  // A retrieved carrier stays up on its bot at the balcony position: the same bot takes it
  // home once the person is done (no lowering, no second bot coming to lift it again).
  if (job.type === 'RETRIEVING' && level.kindAt(target.x, target.y) === 'port') return 'hold';
  if (job.carrier_id && CARRIER_JOBS.has(job.type)) return 'lower';
  switch (job.type) {
    case 'CHARGING': return 'charge';
    case 'UNCHARGING': return 'uncharge';
    case 'WRITE_RFID_TAG': return 'rfid_write';
    case 'CHECK_RFID_TAG': return 'rfid_check';
    // It stays on the balcony position until the bot coordinator parks it there.
    case 'OFFBOARDING': return 'hold';
    default: return 'none';
  }
}

function withPhase(p: JobProgress, phase: 'to_carrier' | 'to_target' | 'carrying' | 'done'): JobProgress {
  if (p.kind === 'carrier') return { ...p, phase: phase === 'to_target' ? 'carrying' : phase };
  if (p.kind === 'bot') return { kind: 'bot', phase: phase === 'done' ? 'done' : 'to_target' };
  return p;
}

function withStage(p: JobProgress, cell: Cell | null): JobProgress {
  return p.kind === 'carrier' ? { ...p, staged_at: cell } : p;
}
