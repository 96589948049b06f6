/**
 * Dispatch of one level: on every pass it takes the level's ready jobs (ACCEPTED) in order of
 * priority (above 10 first, spec 3.4), then age, and starts what can start: a person's job
 * waits at its balcony for the trigger, a bot job gets a free target (a balcony port, a
 * storage space, a buffer, a charger) and the nearest idle bot, and runs through the level's
 * motion. A job that cannot start says why in its `details`.
 */
import type { Logger } from '../log/logger.js';
import { carriers, positionKey, type CarrierRecord } from '../domain/inventory/records.js';
import type { Inventory } from '../domain/inventory/inventory.js';
import { carriersInFront } from '../domain/inventory/lane.js';
import { carriersComingInFront } from '../domain/requests/lanes.js';
import { BOT_JOBS, PERSON_JOBS, type JobDetails, type JobRecord } from '../domain/requests/records.js';
import type { Requests } from '../domain/requests/requests.js';
import { CARRIER_PLACES, type Cell, type Site, type SiteLevel } from '../domain/site/load.js';
import type { Store } from '../store/store.js';
import { chargingOn, mayLeaveCharger } from './charging.js';
import type { Arrival, LevelMotion, MotionBot } from './motion.js';

export interface DispatchDeps {
  store: Store;
  site: Site;
  requests: Requests;
  inventory: Inventory;
  logger: Logger;
  paused: () => boolean;
  /** Battery percent under which an idle bot is sent to charge. */
  chargeBelow: () => number;
}

/** Jobs that move a carrier: to the carrier, lift, to the target, lower. */
const CARRIER_JOBS = new Set(['RETRIEVING', 'STORING', 'BUFFERING']);
/**
 * Retrievals a balcony may have on their way beyond its free positions: their bots fetch the
 * carrier and wait with it until a position frees, so the next carrier is near when the
 * person is done (a position reserved for the whole trip leaves people waiting). Two left the
 * large bench site's far balconies waiting for carriers on their way (213 against 234 carriers
 * per balcony-hour with four; the demo 251 against 271); eight filled its one highway row with
 * loaded bots (196): docs/benchmarks-site.md, round 5.
 */
const QUEUE_PER_BALCONY = 4;
/** Cells of travel a carrier going home may add to avoid a space in front of another carrier. */
const SHUT_IN_COST = 8;
/** How often a bot holding a carrier for a full balcony looks for a free position. */
const PORT_POLL_MS = 50;

export class LevelDispatcher {
  private readonly level: SiteLevel;
  /** Bot jobs running now, by job id, with the bot that runs them. */
  private readonly running = new Map<string, number>();
  /** Set when the brain stops: outcomes of motion still under way are left to the next brain. */
  private stopped = false;

  constructor(
    private readonly deps: DispatchDeps,
    levelId: number,
    private readonly motion: LevelMotion | undefined,
  ) {
    this.level = deps.site.level(levelId)!;
  }

  /** Stops recording outcomes: a restarted brain resumes the jobs from the store and the bots. */
  stop(): void {
    this.stopped = true;
  }

  /** One dispatch pass; the caller runs passes one at a time. */
  async pass(): Promise<void> {
    const open = this.deps.requests.openJobs(this.level.id);
    await this.resume(open);
    const ready = this.order(open.filter((j) => j.status === 'ACCEPTED'));
    const changes: (() => void)[] = [];
    const claimed = new Set<string>();
    const botsTaken = new Set<number>(this.running.values());
    // A bot with a job of its own waiting (sent to charge) is kept for it: taken for carriers, it
    // would leave for the charger with one on board once a charger frees.
    const reserved = new Set<number>();
    for (const j of open) if (j.status === 'ACCEPTED' && j.bot_id !== null && !CARRIER_JOBS.has(j.type)) reserved.add(j.bot_id);
    for (const job of ready) {
      if (PERSON_JOBS.has(job.type)) changes.push(() => this.atBalcony(job));
      else if (BOT_JOBS.has(job.type)) {
        const start = this.plan(job, claimed, botsTaken, reserved);
        changes.push(start);
      }
    }
    if (changes.length === 0) return;
    const started = await this.deps.requests.write(() => {
      const out: JobRecord[] = [];
      for (const change of changes) {
        const r = change() as JobRecord | undefined;
        if (r && r.status === 'EXECUTING' && BOT_JOBS.has(r.type)) out.push(r);
      }
      return out;
    });
    for (const job of started) this.run(job);
  }

  /** Cancelled bot jobs whose motion never started, and jobs a restart left EXECUTING without a runner. */
  private async resume(open: JobRecord[]): Promise<void> {
    for (const job of open) {
      if (job.status !== 'EXECUTING' && job.status !== 'CANCELLING') continue;
      if (!BOT_JOBS.has(job.type) || this.running.has(job.id)) continue;
      if (job.bot_id === null) continue;
      // After a restart, wait until the bot has reported to this brain's planner.
      if (!this.motion?.bots().some((b) => b.id === job.bot_id && b.online)) continue;
      this.run(job);
    }
  }

  /**
   * Carriers leaving a balcony first (they free a port for the next), then priority (higher
   * first), then the request's arrival, then the job's own order.
   */
  private order(list: JobRecord[]): JobRecord[] {
    const priority = new Map<string, { p: number; c: number }>();
    const of = (j: JobRecord) => {
      let v = priority.get(j.request_id);
      if (!v) {
        const r = this.deps.requests.request(j.request_id);
        v = { p: r.priority, c: r.counter };
        priority.set(j.request_id, v);
      }
      return v;
    };
    const leaving = (j: JobRecord) => (j.type === 'STORING' && this.balconyOfCarrier(j) !== undefined ? 0 : 1);
    return list.sort((a, b) => leaving(a) - leaving(b) || of(b).p - of(a).p || of(a).c - of(b).c || a.seq - b.seq);
  }

  /** A person's job starts waiting for its trigger at the balcony where its carrier stands. */
  private atBalcony(job: JobRecord): JobRecord {
    const balcony = job.balcony_id ?? this.balconyOfCarrier(job) ?? this.lastBalcony(job) ?? job.balcony_ids[0] ?? null;
    return this.deps.requests.moveJob(job, 'EXECUTING', {
      balcony_id: balcony,
      details: { ...job.details, waiting_for: 'trigger', reason: `waiting for a person at balcony ${balcony ?? '(any)'}: POST /api/v2/trigger/${job.id}` },
    });
  }

  private balconyOfCarrier(job: JobRecord): number | undefined {
    if (!job.carrier_id) return undefined;
    const c = this.deps.store.collection(carriers).get(job.carrier_id);
    if (!c) return undefined;
    return this.level.balconies.find((b) => b.ports.some((p) => p.x === c.x && p.y === c.y))?.id;
  }

  /** PACKING: the balcony of its request's last worked job. */
  private lastBalcony(job: JobRecord): number | undefined {
    const parents = job.parent_job_ids.map((id) => this.deps.requests.findJob(id)).filter((j): j is JobRecord => j !== undefined);
    return parents.map((p) => p.balcony_id).filter((b): b is number => b !== null).at(-1);
  }

  /** Decides how a bot job starts; returns the change to run in the pass's write. */
  private plan(job: JobRecord, claimed: Set<string>, botsTaken: Set<number>, reserved: ReadonlySet<number>): () => JobRecord {
    const wait = (details: JobDetails) => () => this.deps.requests.explain(job, details);
    if (this.deps.paused()) return wait({ waiting_for: 'system_paused', reason: 'the system is paused (POST a RESUME request)' });
    if (!this.motion) return wait({ waiting_for: 'bot', reason: 'no bots: the radio lines of this level are not running' });
    let carrier: CarrierRecord | undefined;
    if (job.carrier_id && CARRIER_JOBS.has(job.type)) {
      carrier = this.deps.store.collection(carriers).get(job.carrier_id);
      if (!carrier) return wait({ waiting_for: 'parents', reason: `carrier ${job.carrier_id} is not placed yet` });
      if (claimed.has(`c:${carrier.id}`) || this.carrierInMotion(carrier.id, job.id)) return wait({ waiting_for: 'bot_motion', reason: `carrier ${carrier.id} is being moved by another job` });
      // Set aside from in front of another, it was taken to a balcony meanwhile (another request
      // wanted it): people work on it there; it is set aside once it is back in storage.
      if (job.type === 'BUFFERING' && this.level.kindAt(carrier.x, carrier.y) === 'port') return wait({ waiting_for: 'carriers_in_front', reason: `carrier ${carrier.id} is at a balcony for another request` });
      const blocked = carriersInFront(this.deps.store, this.level, carrier).map((c) => c.id);
      if (job.type === 'RETRIEVING' && blocked.length > 0) return wait({ waiting_for: 'carriers_in_front', reason: `carriers in front in its lane: ${blocked.join(', ')}` });
      // Fetching it now would shut the bot in once that carrier is down.
      const inbound = carriersComingInFront(this.deps.store, this.level, carrier, this.deps.requests.openJobs(this.level.id))[0];
      if (inbound) return wait({ waiting_for: 'carriers_in_front', reason: `carrier ${inbound.id} is being set down in front of it in its lane` });
    }
    const target = this.target(job, carrier, claimed);
    if ('wait' in target) return wait(target.wait);
    const held = carrier !== undefined && (this.onBoard(carrier) || this.heldOnItsCell(carrier));
    const found = held ? this.carrierBot(carrier!, botsTaken) : this.bot(job, carrier ?? null, botsTaken, reserved);
    if ('wait' in found) return wait(found.wait);
    // A bot stopped on the carrier's cell keeps any other out (the planner refuses the goal):
    // wait for it rather than start and abort again at once.
    const blocker = carrier && !held ? this.motion.bots().find((b) => b.id !== found.bot.id && b.x === carrier.x && b.y === carrier.y) : undefined;
    if (blocker) return wait({ waiting_for: 'bot', reason: `bot ${blocker.id} stands on the cell of carrier ${carrier!.id}` });
    const bot = found.bot;
    if (target.cell) claimed.add(`t:${target.cell.x}:${target.cell.y}`);
    if (carrier) claimed.add(`c:${carrier.id}`);
    botsTaken.add(bot.id);
    return () => this.deps.requests.moveJob(job, 'EXECUTING', {
      bot_id: bot.id, balcony_id: target.balcony ?? job.balcony_id, target: target.cell,
      details: { ...job.details, waiting_for: 'bot_motion', reason: `bot ${bot.id} is on its way`, phase: carrier ? 'to_carrier' : 'to_target' },
    }, `bot ${bot.id}, target ${target.cell ? `${target.cell.x},${target.cell.y}` : 'the first free balcony position'}`);
  }

  /**
   * The free position at one of the job's balconies nearest `from` (the carrier, or the bot
   * holding it): with the first free one instead, the balconies first in the site's order took
   * most carriers and the far ones stood idle.
   */
  private freePort(job: JobRecord, free: (c: Cell) => boolean, from: Cell | undefined): { cell: Cell; balcony: number } | undefined {
    let best: { cell: Cell; balcony: number } | undefined;
    for (const b of this.level.balconies) {
      if (!job.balcony_ids.includes(b.id)) continue;
      for (const port of b.ports) {
        if (!free(port)) continue;
        if (!best || (from && dist(port, from) < dist(best.cell, from))) best = { cell: port, balcony: b.id };
      }
    }
    return best;
  }

  /**
   * Whether a retrieval may start without a position: fewer than QUEUE_PER_BALCONY per balcony
   * of this level it may go to are queued for them, and queues leave a bot per balcony of the
   * level for the carriers going home (a bot holding a carrier cannot store another).
   */
  private mayQueue(job: JobRecord): boolean {
    const here = this.level.balconies.filter((b) => job.balcony_ids.includes(b.id)).map((b) => b.id);
    let queued = 0;
    let holding = 0;
    for (const j of this.deps.requests.openJobs(this.level.id)) {
      if (j.type !== 'RETRIEVING' || j.status !== 'EXECUTING' || j.target !== null) continue;
      holding++;
      if (j.balcony_ids.some((b) => here.includes(b))) queued++;
    }
    const bots = this.motion!.bots().filter((b) => b.online && !b.faulted).length;
    return queued < QUEUE_PER_BALCONY * here.length && holding < bots - this.level.balconies.length;
  }

  /** Whether a retrieval that may go to one of the job's balconies holds its carrier and waits for a position. */
  private queuedFor(job: JobRecord): boolean {
    return this.deps.requests.openJobs(this.level.id).some((j) => waitsForPort(j) && j.balcony_ids.some((b) => job.balcony_ids.includes(b)));
  }

  /** Where a job takes its carrier or bot (null: a balcony position, found once the carrier is lifted), or why there is no such place now. */
  private target(job: JobRecord, carrier: CarrierRecord | undefined, claimed: Set<string>): { cell: Cell | null; balcony?: number } | { wait: JobDetails } {
    const unclaimed = this.freeFor(job.id);
    const free = (c: Cell) => !claimed.has(`t:${c.x}:${c.y}`) && unclaimed(c);
    switch (job.type) {
      case 'RETRIEVING':
      case 'OFFBOARDING_BC': {
        // Carriers already fetched and waiting (beside the balcony, mostly) take free
        // positions first: a new retrieval's carrier is a whole trip away.
        const port = this.queuedFor(job) ? undefined : this.freePort(job, free, carrier);
        if (port) return port;
        if (job.type === 'RETRIEVING' && this.mayQueue(job)) return { cell: null };
        return { wait: { waiting_for: 'balcony', reason: `no free position at balcony ${job.balcony_ids.join(', ')}` } };
      }
      case 'STORING': {
        const space = this.freeSpace(carrier, free);
        return space ? { cell: space } : { wait: { waiting_for: 'storage_space', reason: 'no free storage space on the level' } };
      }
      case 'BUFFERING': {
        const buffer = this.level.buffers.find(free);
        return buffer ? { cell: buffer } : { wait: { waiting_for: 'storage_space', reason: 'no free buffer space on the level' } };
      }
      case 'CHARGING': {
        // A charging job ends once the bot charges; the bot stays there until its charge is
        // done, or until a bot under the threshold needs the charger and it may leave it.
        const bots = this.motion!.bots();
        const below = this.deps.chargeBelow();
        const self = bots.find((b) => b.id === job.bot_id);
        const charger = this.level.chargers.find((c) => free(c) && !chargingOn(bots, c))
          ?? (self && self.battery < below ? this.level.chargers.find((c) => {
            const on = chargingOn(bots, c);
            return free(c) && on !== undefined && mayLeaveCharger(on, below);
          }) : undefined);
        return charger ? { cell: charger } : { wait: { waiting_for: 'bot', reason: 'every charger is taken' } };
      }
      default: {
        if (job.target) return { cell: job.target };
        const bot = this.motion!.bots().find((b) => b.id === job.bot_id);
        return bot ? { cell: { x: bot.x, y: bot.y } } : { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is not on the level` } };
      }
    }
  }

  /**
   * The deepest free space of a lane whose spaces in front are free too, nearest the carrier
   * first, counting SHUT_IN_COST cells more per carrier it would stand in front of. A lane with
   * work under way in it is left alone (a carrier being fetched from it, or one on its way into
   * it): a carrier set down in front of a bot that lifts another, or goes deeper, would shut it
   * in (loaded bots pass under no carrier).
   */
  private freeSpace(carrier: CarrierRecord | undefined, free: (c: Cell) => boolean): Cell | undefined {
    const { running, pending } = this.laneWork();
    // Lanes a waiting job will still take a carrier out of come last: a carrier stored in
    // front of it would leave that retrieval waiting for a carrier no job moves.
    return this.spaceIn(carrier, free, (cell) => running.has(cell) || pending.has(cell)) ?? this.spaceIn(carrier, free, (cell) => running.has(cell));
  }

  private spaceIn(carrier: CarrierRecord | undefined, free: (c: Cell) => boolean, busy: (cell: string) => boolean): Cell | undefined {
    let best: { cell: Cell; cost: number } | undefined;
    for (const lane of this.level.lanes) {
      if (lane.spaces.some((s) => busy(`${s.x}:${s.y}`))) continue;
      let depth = 0;
      while (depth < lane.spaces.length && free(lane.spaces[depth]!)) depth++;
      if (depth === 0) continue;
      const pick = lane.spaces[depth - 1]!;
      // Each carrier it shuts in costs a buffering (two trips) should that one be wanted.
      let shutIn = 0;
      for (let d = depth; d < lane.spaces.length; d++) if (this.occupied(lane.spaces[d]!)) shutIn++;
      const cost = (carrier ? dist(pick, carrier) : 0) + SHUT_IN_COST * shutIn;
      if (!best || cost < best.cost) best = { cell: pick, cost };
    }
    return best?.cell;
  }

  /**
   * Cells with work: `running`, the carriers that running carrier jobs move and where running
   * jobs go; `pending`, the carriers of carrier jobs not started yet.
   */
  private laneWork(): { running: Set<string>; pending: Set<string> } {
    const running = new Set<string>();
    const pending = new Set<string>();
    for (const j of this.deps.requests.openJobs(this.level.id)) {
      const started = j.status === 'EXECUTING' || j.status === 'CANCELLING';
      if (started && j.target) running.add(`${j.target.x}:${j.target.y}`);
      if (!j.carrier_id || !CARRIER_JOBS.has(j.type)) continue;
      const c = this.deps.store.collection(carriers).get(j.carrier_id);
      if (c && c.level_id === this.level.id) (started ? running : pending).add(`${c.x}:${c.y}`);
    }
    return { running, pending };
  }

  /**
   * The bot a job runs on: its own for bot jobs, else the nearest idle one with battery to
   * spare; failing that, the charging one with the most battery that may leave its charger.
   */
  private bot(job: JobRecord, carrier: CarrierRecord | null, taken: Set<number>, reserved: ReadonlySet<number>): { bot: MotionBot } | { wait: JobDetails } {
    const bots = this.motion!.bots();
    if (job.bot_id !== null && !CARRIER_JOBS.has(job.type)) {
      const own = bots.find((b) => b.id === job.bot_id);
      if (!own) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is not on the level` } };
      if (!own.online) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} does not answer on the radio line` } };
      if (taken.has(own.id) || !own.idle) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} is busy` } };
      if (own.lifted) return { wait: { waiting_for: 'bot', reason: `bot ${job.bot_id} holds a carrier` } };
      return { bot: own };
    }
    const from = carrier ?? { x: 0, y: 0 };
    const below = this.deps.chargeBelow();
    let best: MotionBot | undefined;
    for (const b of bots) {
      if (!b.online || !b.idle || b.faulted || b.lifted || taken.has(b.id) || reserved.has(b.id)) continue;
      if (b.charging ? !mayLeaveCharger(b, below) : b.battery < below) continue;
      const better = !best || (b.charging === best.charging
        ? (b.charging ? b.battery > best.battery : dist(b, from) < dist(best, from))
        : !b.charging);
      if (better) best = b;
    }
    return best ? { bot: best } : { wait: { waiting_for: 'bot', reason: 'no idle bot with enough battery on the level' } };
  }

  /** The carrier stands on no place for carriers: it is on the bot that stopped with it. */
  private onBoard(carrier: CarrierRecord): boolean {
    return !CARRIER_PLACES.has(this.level.kindAt(carrier.x, carrier.y));
  }

  /** A bot with its lift up stands on the carrier's cell: it holds that carrier (a loaded bot enters no cell with another). */
  private heldOnItsCell(carrier: CarrierRecord): boolean {
    return this.motion!.bots().some((b) => b.lifted && b.x === carrier.x && b.y === carrier.y);
  }

  /** The bot that holds a carrier on board is the one to take it on, once it can. */
  private carrierBot(carrier: CarrierRecord, taken: Set<number>): { bot: MotionBot } | { wait: JobDetails } {
    // The bot on the carrier's cell, else (where a bot stopped may be the next cell on from
    // where its fault was reported) one beside it. Never a neighbour while one stands on it:
    // bots holding carriers at two positions of a balcony stand side by side.
    const lifted = this.motion!.bots().filter((m) => m.lifted);
    // A lifted bot on the cell of a carrier the store places there holds that carrier, not this one.
    const b = lifted.find((m) => m.x === carrier.x && m.y === carrier.y) ?? lifted.find((m) => dist(m, carrier) === 1 && !this.occupied(m));
    if (!b) return { wait: { waiting_for: 'bot', reason: `carrier ${carrier.id} is on a bot at ${carrier.x},${carrier.y} that does not report: set it down by hand, then onboard the carrier again` } };
    if (b.faulted || !b.online) return { wait: { waiting_for: 'bot', reason: `carrier ${carrier.id} is on bot ${b.id}, which has a fault or no link; it goes on once the bot is cleared` } };
    if (taken.has(b.id) || !b.idle) return { wait: { waiting_for: 'bot', reason: `carrier ${carrier.id} is on bot ${b.id}, which is busy` } };
    return { bot: b };
  }

  private occupied(c: Cell): boolean {
    return this.deps.store.collection(carriers).countBy('position', positionKey(this.level.id, c.x, c.y)) > 0;
  }

  /**
   * Whether a cell is free for job `self`: no carrier stands there, and no other running job
   * goes there or waits there for a balcony position. The jobs are read once per call.
   */
  private freeFor(self: string): (c: Cell) => boolean {
    const targeted = new Set<string>();
    for (const j of this.deps.requests.openJobs(this.level.id)) {
      if (j.id === self || (j.status !== 'EXECUTING' && j.status !== 'CANCELLING')) continue;
      const at = j.target ?? stagedAt(j);
      if (at) targeted.add(`${at.x}:${at.y}`);
    }
    return (c) => !targeted.has(`${c.x}:${c.y}`) && !this.occupied(c);
  }

  /**
   * A buffer beside one of the job's balconies where its bot can wait with the carrier for a
   * position, a few moves from it rather than back in the lanes; none while a carrier waits to
   * be set aside in a buffer (the buffers are for those first).
   */
  private stagePlace(job: JobRecord, from: Cell): Cell | undefined {
    const open = this.deps.requests.openJobs(this.level.id);
    if (open.some((j) => j.type === 'BUFFERING' && j.status === 'ACCEPTED')) return undefined;
    const ports = this.level.balconies.filter((b) => job.balcony_ids.includes(b.id)).flatMap((b) => b.ports);
    // the nearest: a far one sends loaded bots along the highway past the others
    const free = this.freeFor(job.id);
    let best: Cell | undefined;
    for (const c of this.level.buffers) {
      if (!ports.some((p) => dist(p, c) <= 2) || !free(c)) continue;
      if (!best || dist(c, from) < dist(best, from)) best = c;
    }
    return best;
  }

  private carrierInMotion(carrierId: string, self: string): boolean {
    for (const j of this.deps.requests.openJobs(this.level.id)) {
      if (j.id !== self && j.carrier_id === carrierId && CARRIER_JOBS.has(j.type) && (j.status === 'EXECUTING' || j.status === 'CANCELLING')) return true;
    }
    return false;
  }

  /** Runs a started bot job to its end; the job ends SUCCEEDED (CANCELLED if cancelled meanwhile) or ABORTED and replaced. */
  private run(job: JobRecord): void {
    this.running.set(job.id, job.bot_id!);
    void this.drive(job)
      .catch((err: unknown) => this.deps.logger.error({ err, job_id: job.id }, 'bot job failed unexpectedly'))
      .finally(() => this.running.delete(job.id));
  }

  private async drive(job: JobRecord): Promise<void> {
    const motion = this.motion!;
    const bot = job.bot_id!;
    // The bot's own lift state decides, not the phase on record: after a restart the bot may
    // hold the carrier already, or (the site restarted too) not any more.
    const holding = motion.bots().find((b) => b.id === bot)?.lifted === true;
    if (job.carrier_id && CARRIER_JOBS.has(job.type)) {
      const carrier = this.deps.store.collection(carriers).get(job.carrier_id)!;
      if (!holding) {
        const lifted = await motion.go(bot, { x: carrier.x, y: carrier.y, then: 'lift' });
        if (this.stopped) return;
        // Another try would find nothing there again, and again: a person must find it.
        if (!lifted.ok && lifted.refused === 'NO_CARRIER') return this.fail(job, `carrier ${carrier.id} was not found at ${carrier.x},${carrier.y}, where the store has it: put it back there by hand, then post the request again`, false);
        if (!lifted.ok) return this.fail(job, lifted.reason);
      }
      // A carrier leaving a balcony position (lifted now, or held up there since it came) is
      // booked to the storage space it goes to at once: the position is free for the next
      // carrier while this one travels (the store holds one carrier per cell).
      const leaving = job.type === 'STORING' && job.target !== null && this.level.kindAt(carrier.x, carrier.y) === 'port' ? job.target : undefined;
      if (!holding || leaving) {
        job = await this.deps.requests.write(() => {
          if (leaving) this.deps.inventory.placeCarrierInWrite(job.carrier_id!, this.level.id, leaving.x, leaving.y);
          return this.deps.requests.updateJob(job, { details: { ...job.details, phase: 'carrying', reason: `bot ${bot} carries ${job.carrier_id}` } });
        });
      }
    }
    if (!job.target) {
      const placed = await this.waitForPort(job);
      if (!placed) return;
      job = placed;
    }
    const target = job.target!;
    // A retrieved carrier stays up on its bot at the balcony position: the same bot takes it
    // home once the person is done (no lowering, no second bot coming to lift it again).
    const then: Arrival = job.type === 'RETRIEVING' && this.level.kindAt(target.x, target.y) === 'port' ? 'hold'
      : job.carrier_id && CARRIER_JOBS.has(job.type) ? 'lower'
      : job.type === 'CHARGING' ? 'charge' : job.type === 'UNCHARGING' ? 'uncharge'
        : job.type === 'WRITE_RFID_TAG' ? 'rfid_write' : job.type === 'CHECK_RFID_TAG' ? 'rfid_check' : 'none';
    // A bot with battery enough charges on the charger this one needs: it leaves it.
    const occupant = then === 'charge' ? chargingOn(motion.bots(), target) : undefined;
    if (occupant && occupant.id !== bot) await motion.stopCharging(occupant.id);
    const arrived = await motion.go(bot, { x: target.x, y: target.y, then });
    if (this.stopped) return;
    if (!arrived.ok) return this.fail(job, arrived.reason);
    await this.deps.requests.write(() => {
      const current = this.deps.requests.job(job.id);
      if (job.carrier_id && CARRIER_JOBS.has(job.type)) this.deps.inventory.placeCarrierInWrite(job.carrier_id, this.level.id, target.x, target.y);
      const details = { ...current.details, waiting_for: undefined, reason: undefined, phase: 'done' };
      if (current.status === 'CANCELLING') this.deps.requests.moveJob(current, 'CANCELLED', { details });
      else this.deps.requests.moveJob(current, 'SUCCEEDED', { details });
      this.deps.requests.settle(current.request_id);
    });
  }

  /**
   * A bot holding a carrier for a full balcony waits until a position frees; higher priority,
   * then the older request, goes first. Returns the job with its target, or undefined when the
   * brain stopped or the job was cancelled meanwhile.
   */
  private async waitForPort(job: JobRecord): Promise<JobRecord | undefined> {
    await this.deps.requests.write(() => this.deps.requests.explain(job, { waiting_for: 'balcony', reason: `bot ${job.bot_id} holds ${job.carrier_id} until a position at balcony ${job.balcony_ids.join(', ')} frees` }));
    for (;;) {
      if (this.stopped) return undefined;
      const current = this.deps.requests.job(job.id);
      if (current.status === 'CANCELLING') {
        // Cancelled while holding: set the carrier down where it was taken from.
        const from = this.deps.store.collection(carriers).get(current.carrier_id!)!;
        return this.deps.requests.write(() => this.deps.requests.updateJob(current, { target: { x: from.x, y: from.y } }));
      }
      const bot = this.motion!.bots().find((b) => b.id === current.bot_id);
      const port = this.freePort(current, this.freeFor(current.id), bot);
      if (port && this.nextForPort(port) === current.id) {
        return this.deps.requests.write(() => this.deps.requests.updateJob(current, {
          target: port.cell, balcony_id: port.balcony,
          details: { ...current.details, staged_at: undefined, waiting_for: 'bot_motion', reason: `bot ${current.bot_id} brings ${current.carrier_id} to balcony ${port.balcony}` },
        }));
      }
      if (!(await this.stage(current))) return undefined;
      await new Promise((r) => setTimeout(r, PORT_POLL_MS));
    }
  }

  /**
   * Which of the bots holding carriers for a balcony takes its free position `port`: of the
   * highest priority waiting, the nearest (mostly one waiting beside the balcony), then the
   * oldest request.
   */
  private nextForPort(port: { cell: Cell; balcony: number }): string | undefined {
    const waiting = this.order(this.deps.requests.openJobs(this.level.id).filter((j) => waitsForPort(j) && j.balcony_ids.includes(port.balcony)));
    if (waiting.length === 0) return undefined;
    const top = this.deps.requests.request(waiting[0]!.request_id).priority;
    const bots = this.motion!.bots();
    let best: { id: string; d: number } | undefined;
    for (const j of waiting) {
      if (this.deps.requests.request(j.request_id).priority !== top) break;
      const bot = bots.find((b) => b.id === j.bot_id);
      const d = bot ? dist(bot, port.cell) : Infinity;
      if (!best || d < best.d) best = { id: j.id, d };
    }
    return best?.id;
  }

  /**
   * Takes a bot waiting for a position to a free buffer beside its balcony (stagePlace), or
   * back to the one it was given (after a restart it may have stopped on the way). False when
   * the bot failed on the way (the job is then aborted) or the brain stopped.
   */
  private async stage(job: JobRecord): Promise<boolean> {
    let at = stagedAt(job);
    const bot = this.motion!.bots().find((b) => b.id === job.bot_id);
    if (!bot || (at && bot.x === at.x && bot.y === at.y)) return true;
    if (!at) {
      at = this.stagePlace(job, bot);
      if (!at) return true;
      const cell = at;
      job = await this.deps.requests.write(() => this.deps.requests.updateJob(job, {
        details: { ...job.details, staged_at: cell, reason: `bot ${job.bot_id} holds ${job.carrier_id} at the buffer ${cell.x},${cell.y} until a position at balcony ${job.balcony_ids.join(', ')} frees` },
      }));
    }
    const arrived = await this.motion!.go(bot.id, { x: at.x, y: at.y, then: 'hold' });
    if (this.stopped) return false;
    if (!arrived.ok) {
      await this.fail(job, arrived.reason);
      return false;
    }
    return true;
  }

  private async fail(job: JobRecord, reason: string, retry = CARRIER_JOBS.has(job.type)): Promise<void> {
    this.deps.logger.warn({ job_id: job.id, job_type: job.type, carrier_id: job.carrier_id, phase: job.details['phase'], target: job.target, bot_id: job.bot_id, reason },
      retry ? 'bot job aborted; recovering the work' : 'bot job aborted');
    // A bot that stopped holding the carrier has it on board: the store says where it is now.
    const bot = this.motion!.bots().find((b) => b.id === job.bot_id);
    const onBoard = job.carrier_id !== null && CARRIER_JOBS.has(job.type) && bot?.lifted === true;
    await this.deps.requests.write(() => {
      if (onBoard) this.deps.inventory.placeCarrierInWrite(job.carrier_id!, this.level.id, bot!.x, bot!.y);
      const current = this.deps.requests.job(job.id);
      if (current.status === 'CANCELLING') this.deps.requests.moveJob(current, 'ABORTED', { details: { ...current.details, reason } }, reason);
      else this.deps.requests.abortJob(current, `bot ${job.bot_id}: ${reason}`, retry);
      this.deps.requests.settle(current.request_id);
    });
  }
}

/** A retrieval whose bot holds its carrier and waits for a balcony position (waitForPort). */
function waitsForPort(j: JobRecord): boolean {
  return j.type === 'RETRIEVING' && j.status === 'EXECUTING' && j.target === null && j.details['phase'] === 'carrying';
}

/** Where a retrieval waits with its carrier for a balcony position (waitForPort), if it does. */
function stagedAt(job: JobRecord): Cell | undefined {
  return job.target === null ? (job.details['staged_at'] as Cell | undefined) : undefined;
}

function dist(a: { x: number; y: number }, b: { x: number; y: number }): number {
  return Math.abs(a.x - b.x) + Math.abs(a.y - b.y);
}
