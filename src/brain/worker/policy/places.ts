/**
 * Where work goes on a level, as pure functions of a snapshot: free balcony positions, storage
 * spaces, buffers and chargers; which cells other jobs have taken; which carriers stand (or are
 * being set down) in front of another in its lane. docs/requests.md, "The brain".
 */
import { cellAt, cellIndex } from '../../../domain/inventory/carrier-places.js';
import { inFront, LaneSpaces, type LaneView } from '../../../domain/inventory/lane.js';
import { CARRIER_JOBS, comingTo, type JobRecord } from '../../../domain/requests/records.js';
import type { Cell, SiteLevel, StorageSpace } from '../../../domain/site/load.js';
import { perSnapshot, type CarrierPlace, type LevelSnapshot } from '../level/snapshot.js';
import type { MotionBot } from '../motion/motion.js';
import { chargingOn, mayLeaveCharger } from './charging.js';

/** Cells from a port within which a buffer is a place to wait for it (stagePlace). */
export const STAGE_REACH = 2;
/**
 * Cells farther than the nearest buffer a bot may go to wait beside a balcony shorter of
 * carriers: about one balcony along on the generated sites (33 cells apart on the 400-bot
 * bench site).
 */
const RESTAGE_REACH = 40;
/** Carriers waiting or coming under which a balcony draws a bot from a balcony with more. */
const SHORT_OF = 2;
/** Cells of travel a carrier going home may add to avoid a space in front of another carrier. */
const SHUT_IN_COST = 8;

export const key = (c: Cell): string => `${c.x}:${c.y}`;

export function dist(a: Cell, b: Cell): number {
  return Math.abs(a.x - b.x) + Math.abs(a.y - b.y);
}

/** Whether a job has a bot under way (or a person working) now. */
export function started(j: JobRecord): boolean {
  return j.status === 'EXECUTING' || j.status === 'CANCELLING';
}

/**
 * Whether a carrier stands on the cell the store books it to: not while a running job's bot
 * holds it up (the carrying phase), booked still where it was lifted or already where it goes.
 * The planner's cell flags follow this, so a brain started while a carrier was carried does not
 * bar its old cell to loaded bots (that shut a bot holding the carrier behind it in its lane).
 */
export function standsOnItsCell(jobs: readonly JobRecord[], carrierId: string): boolean {
  for (const j of jobs) {
    if (j.carrier_id === carrierId && CARRIER_JOBS.has(j.type) && started(j) && j.progress.kind === 'carrier' && j.progress.phase === 'carrying') return false;
  }
  return true;
}

/** A retrieval whose bot holds its carrier and waits for a balcony position. */
export function waitsForPort(j: JobRecord): boolean {
  return j.type === 'RETRIEVING' && j.status === 'EXECUTING' && j.target === null && j.progress.kind === 'carrier' && j.progress.phase === 'carrying';
}

/** Where a retrieval waits with its carrier for a balcony position, if it does. */
export function stagedAt(j: JobRecord): Cell | undefined {
  return j.target === null && j.progress.kind === 'carrier' ? (j.progress.staged_at ?? undefined) : undefined;
}

/** The carriers standing between a carrier and the highway in its lane, nearest the highway first (the lane-blocking rule). */
export function carriersInFront(s: LevelSnapshot, carrier: CarrierPlace): string[] {
  const space = s.level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  return inFront(standingIn(s, space.lane), space.depth, carrier.id);
}

/**
 * Carriers that running jobs are setting down on spaces in front of `carrier` in its lane, in
 * the jobs' order: a carrier is booked to its space only as it is lifted, and until it is down
 * there, fetching the deeper one would shut its bot in (the lane-blocking rule).
 */
export function carriersComingInFront(s: LevelSnapshot, carrier: CarrierPlace): string[] {
  const space = s.level.spaceAt(carrier.x, carrier.y);
  if (!space) return [];
  const coming = settingDown(s).get(space.lane);
  return coming ? inFront(coming, space.depth, carrier.id) : [];
}

/** A lane's spaces as a snapshot shows them, for the lane-blocking rule. */
class StandingInLane extends LaneSpaces {
  constructor(private readonly s: LevelSnapshot, spaces: readonly StorageSpace[]) {
    super(spaces);
  }

  carrier(entry: number): string | undefined {
    return this.s.carrierAt(this.spaces[entry]!);
  }
}

/** Each lane's view, made once a snapshot: the policy asks it for every carrier job of a pass. */
const standingLanes = perSnapshot(() => new Map<number, StandingInLane>());

function standingIn(s: LevelSnapshot, lane: number): StandingInLane {
  const views = standingLanes(s);
  let view = views.get(lane);
  if (!view) views.set(lane, (view = new StandingInLane(s, s.level.lanes[lane]!.spaces)));
  return view;
}

/** The carriers running jobs of a lane set down, in the jobs' order, each with its space's depth. */
class ComingToLane implements LaneView {
  readonly carriers: string[] = [];
  readonly depths: number[] = [];

  get length(): number {
    return this.carriers.length;
  }

  depth(entry: number): number {
    return this.depths[entry]!;
  }

  carrier(entry: number): string {
    return this.carriers[entry]!;
  }
}

/** Carriers that started jobs set down on storage spaces, by lane, in the jobs' order. */
const settingDown = perSnapshot((s) => {
  const byLane = new Map<number, ComingToLane>();
  for (const j of s.jobs) {
    if (!comingTo(j)) continue;
    const there = s.level.spaceAt(j.target!.x, j.target!.y);
    if (!there) continue;
    let lane = byLane.get(there.lane);
    if (!lane) byLane.set(there.lane, (lane = new ComingToLane()));
    lane.carriers.push(j.carrier_id!);
    lane.depths.push(there.depth);
  }
  return byLane;
});

/**
 * Whether a cell is free for job `self`: no carrier stands there, no bot that cannot be pushed
 * aside (stuck, parked, lost, or not placed by the planner yet) stands there, no other running
 * job goes there or waits there for a balcony position, and this pass has not given it to
 * another job.
 */
export function freeFor(s: LevelSnapshot, self: string, claimed: ReadonlySet<string> = new Set()): (c: Cell) => boolean {
  const taken = takenCells(s);
  return (c) => {
    if (claimed.size > 0 && claimed.has(key(c))) return false;
    const by = taken.get(cellIndex(c.x, c.y));
    return (by === undefined || (by.size === 1 && by.has(self))) && s.carrierAt(c) === undefined;
  };
}

/** Who takes each taken cell: the started jobs going or waiting there, '' for a bot standing there that cannot be pushed aside. */
const takenCells = perSnapshot((s) => {
  const taken = new Map<number, Set<string>>();
  const take = (cell: Cell, by: string) => {
    const k = cellIndex(cell.x, cell.y);
    let set = taken.get(k);
    if (!set) taken.set(k, (set = new Set()));
    set.add(by);
  };
  for (const b of s.bots ?? []) if (b.stuck || !b.online) take(b, '');
  for (const b of s.unplaced) take(b, '');
  for (const j of s.jobs) {
    if (!started(j)) continue;
    const at = j.target ?? stagedAt(j);
    if (at) take(at, j.id);
  }
  return taken;
});

/** Per storage lane, the shallowest depth a taken cell (takenCells) has in it. */
const takenInLanes = perSnapshot((s) => {
  const depths = new Map<number, number>();
  for (const k of takenCells(s).keys()) {
    const { x, y } = cellAt(k);
    const space = s.level.spaceAt(x, y);
    if (!space || space.lane < 0) continue;
    depths.set(space.lane, Math.min(depths.get(space.lane) ?? Infinity, space.depth));
  }
  return depths;
});

/**
 * The free position at one of the job's balconies nearest `from` (the carrier, or the bot
 * holding it): with the first free one instead, the balconies first in the site's order took
 * most carriers and the far ones stood idle.
 */
export function freePort(s: LevelSnapshot, job: JobRecord, free: (c: Cell) => boolean, from: Cell | undefined): { cell: Cell; balcony: number } | undefined {
  let best: { cell: Cell; balcony: number } | undefined;
  for (const b of s.level.balconies) {
    if (!job.balcony_ids.includes(b.id)) continue;
    for (const port of b.ports) {
      if (!free(port)) continue;
      if (!best || (from && dist(port, from) < dist(best.cell, from))) best = { cell: port, balcony: b.id };
    }
  }
  return best;
}

/** The balcony one of whose positions a cell is, if any. */
export function balconyAt(s: LevelSnapshot, c: Cell): number | undefined {
  return s.level.balconies.find((b) => b.ports.some((p) => p.x === c.x && p.y === c.y))?.id;
}

/** Work under way in a storage lane (laneWork), from none (0): carriers of jobs not started yet, then running jobs. */
const PENDING = 1;
const RUNNING = 2;

/**
 * Work in each storage lane: RUNNING where a running carrier job moves a carrier, where a
 * running job goes, or where a bot holds a carrier up; PENDING where only carriers of carrier
 * jobs not started yet stand.
 */
const laneWork = perSnapshot((s) => {
  const work = new Uint8Array(s.level.lanes.length);
  const mark = (c: Cell, kind: number) => {
    const space = s.level.spaceAt(c.x, c.y);
    if (space && space.lane >= 0 && work[space.lane]! < kind) work[space.lane] = kind;
  };
  // A bot holding a carrier up in a lane gets out only while the spaces in front stay free,
  // whatever its job's state (a copy waiting to try again, or none), and whether the planner
  // has placed it yet or not (after a brain restart, a carrier stored in front shut one in).
  for (const b of s.bots ?? []) if (b.lifted) mark(b, RUNNING);
  for (const b of s.unplaced) if (b.lifted) mark(b, RUNNING);
  for (const j of s.jobs) {
    const on = started(j);
    if (on && j.target) mark(j.target, RUNNING);
    if (!j.carrier_id || !CARRIER_JOBS.has(j.type)) continue;
    const c = s.carrier(j.carrier_id);
    if (c && c.level_id === s.level.id) mark(c, on ? RUNNING : PENDING);
  }
  return work;
});

/**
 * The deepest free space of a lane whose spaces in front are free too, nearest the carrier
 * first, counting SHUT_IN_COST cells more per carrier it would stand in front of. A lane with
 * work under way in it is left alone (a carrier being fetched from it, or one on its way into
 * it): a carrier set down in front of a bot that lifts another, or goes deeper, would shut it
 * in. Lanes a waiting job will still take a carrier out of come last: a carrier stored in
 * front of it would leave that retrieval waiting for a carrier no job moves. Spaces this
 * carrier's bot could not reach since the level last changed are never chosen again.
 */
export function freeSpace(s: LevelSnapshot, carrierId: string | null, from: Cell | undefined, free: (c: Cell) => boolean): Cell | undefined {
  const out = carrierId ? s.unreachable(carrierId) : new Set<string>();
  const ok = out.size === 0 ? free : (c: Cell) => free(c) && !out.has(key(c));
  return spaceIn(s, from, ok, PENDING) ?? spaceIn(s, from, ok, RUNNING);
}

/**
 * The best space of the lanes with less work than `busy` in them. Each lane is weighed from
 * what the snapshot keeps of it (its carriers' depths, its taken cells): the cells of a lane
 * are asked only when it could beat the best so far. `free` is asked of those cells: it may
 * refuse more than the snapshot does (cells this pass gave away), never less.
 */
function spaceIn(s: LevelSnapshot, from: Cell | undefined, free: (c: Cell) => boolean, busy: number): Cell | undefined {
  const work = laneWork(s);
  const taken = takenInLanes(s);
  const lanes = s.level.lanes;
  let best: { cell: Cell; cost: number } | undefined;
  for (let i = 0; i < lanes.length; i++) {
    if (work[i]! >= busy) continue;
    const spaces = lanes[i]!.spaces;
    const carriers = s.laneCarriers[i] ?? 0;
    // Spaces free of carriers from the highway in, then of taken cells too.
    let open = carriers === 0 ? spaces.length : 31 - Math.clz32(carriers & -carriers);
    const takenAt = taken.get(i);
    if (takenAt !== undefined && takenAt - 1 < open) open = takenAt - 1;
    if (open === 0) continue;
    // Each carrier it shuts in costs a buffering (two trips) should that one be wanted.
    const shutIn = SHUT_IN_COST * bitCount(carriers >>> open);
    // The spaces of a lane are a straight run: none of the open ones is nearer than this.
    const bound = (from ? Math.max(0, dist(spaces[open - 1]!, from) - (open - 1)) : 0) + shutIn;
    if (best && bound >= best.cost) continue;
    let depth = 0;
    while (depth < open && free(spaces[depth]!)) depth++;
    if (depth === 0) continue;
    const pick = spaces[depth - 1]!;
    const cost = (from ? dist(pick, from) : 0) + shutIn;
    if (!best || cost < best.cost) best = { cell: pick, cost };
  }
  return best?.cell;
}

function bitCount(bits: number): number {
  let n = 0;
  for (; bits !== 0; bits &= bits - 1) n++;
  return n;
}

/** A free buffer the carrier's bot can reach, nearest `from`. */
export function freeBuffer(s: LevelSnapshot, carrierId: string | null, from: Cell | undefined, free: (c: Cell) => boolean): Cell | undefined {
  const out = carrierId ? s.unreachable(carrierId) : new Set<string>();
  let best: Cell | undefined;
  for (const c of s.level.buffers) {
    if (!free(c) || out.has(key(c))) continue;
    if (!best || (from && dist(c, from) < dist(best, from))) best = c;
  }
  return best;
}

/**
 * A charger for a bot: a free one no bot charges on; failing that, for a bot under the
 * threshold, one whose charging bot has battery enough to leave it.
 */
export function freeCharger(s: LevelSnapshot, bot: MotionBot | undefined, free: (c: Cell) => boolean): Cell | undefined {
  const bots = s.bots ?? [];
  return s.level.chargers.find((c) => free(c) && !chargingOn(bots, c))
    ?? (bot && bot.battery < s.chargeBelow ? s.level.chargers.find((c) => {
      const on = chargingOn(bots, c);
      return free(c) && on !== undefined && mayLeaveCharger(on, s.chargeBelow);
    }) : undefined);
}

/**
 * A buffer beside one of the job's balconies where its bot can wait with the carrier for a
 * position, a few moves from it rather than back in the lanes; none while a carrier waits to
 * be set aside in a buffer (the buffers are for those first). The nearest to the bot (a far
 * one sends loaded bots along the highway past the others), unless one of the job's
 * balconies within RESTAGE_REACH has fewer carriers waiting or coming than the nearest's, and
 * fewer than SHORT_OF: a position that frees at a balcony with none is given to a bot waiting
 * at another, and its person waits that whole trip. For a bot waiting at a buffer already
 * (`from` its buffer, itself not counted), the answer is where it should wait now.
 */
export function stagePlace(s: LevelSnapshot, job: JobRecord, from: Cell, claimed?: ReadonlySet<string>): Cell | undefined {
  if (settingAside(s)) return undefined;
  const free = freeFor(s, job.id, claimed);
  const waiting = waitingFor(s);
  // Carriers waiting or coming for the job's balconies beside a buffer, the fewest of them; Infinity: none of the job's.
  const fewest = (c: Cell): number => {
    let n = Infinity;
    for (const b of bufferBalconies(s.level).get(key(c)) ?? []) {
      if (!job.balcony_ids.includes(b)) continue;
      n = Math.min(n, (waiting.get(b) ?? 0) - (comesTo(s.level, job, b) ? 1 : 0) + claimedBeside(s.level, b, claimed));
    }
    return n;
  };
  let nearest: Cell | undefined;
  for (const c of s.level.buffers) {
    if ((!nearest || dist(c, from) < dist(nearest, from)) && fewest(c) < Infinity && free(c)) nearest = c;
  }
  if (!nearest) return undefined;
  let best = nearest;
  let bestCount = fewest(nearest);
  const reach = dist(nearest, from) + RESTAGE_REACH;
  for (const c of s.level.buffers) {
    if (dist(c, from) > reach) continue;
    const n = fewest(c);
    if (n < SHORT_OF && (n < bestCount || (n === bestCount && dist(c, from) < dist(best, from))) && free(c)) {
      best = c;
      bestCount = n;
    }
  }
  return best;
}

/** Whether a carrier waits to be set aside in a buffer. */
const settingAside = perSnapshot((s) => s.jobs.some((j) => j.type === 'BUFFERING' && j.status === 'ACCEPTED'));

/** The balconies each buffer is a waiting place for: those with a port within STAGE_REACH. */
const bufferBalconiesOf = new WeakMap<SiteLevel, Map<string, number[]>>();
function bufferBalconies(level: SiteLevel): Map<string, number[]> {
  let map = bufferBalconiesOf.get(level);
  if (!map) {
    map = new Map();
    for (const c of level.buffers) map.set(key(c), level.balconies.filter((b) => b.ports.some((p) => dist(p, c) <= STAGE_REACH)).map((b) => b.id));
    bufferBalconiesOf.set(level, map);
  }
  return map;
}

/** Carriers waiting beside each balcony (at its buffers) or on their way to one of its positions. */
const waitingFor = perSnapshot((s) => {
  const counts = new Map<number, number>();
  for (const j of s.jobs) {
    if (j.type !== 'RETRIEVING' || !started(j)) continue;
    for (const b of balconiesComing(s.level, j)) counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  return counts;
});

/** The balconies a started retrieval waits beside or goes to. */
function balconiesComing(level: SiteLevel, j: JobRecord): readonly number[] {
  if (j.target && j.balcony_id !== null && level.kindAt(j.target.x, j.target.y) === 'port') return [j.balcony_id];
  const at = stagedAt(j);
  return at ? bufferBalconies(level).get(key(at)) ?? [] : [];
}

function comesTo(level: SiteLevel, j: JobRecord, balcony: number): boolean {
  return started(j) && balconiesComing(level, j).includes(balcony);
}

/** Buffers of a balcony chosen by other waits not written yet. */
function claimedBeside(level: SiteLevel, balcony: number, claimed: ReadonlySet<string> | undefined): number {
  let n = 0;
  if (claimed) for (const c of claimed) if (bufferBalconies(level).get(c)?.includes(balcony)) n++;
  return n;
}

/**
 * Which of the bots holding carriers for a balcony takes its free position `port`: of the
 * highest priority waiting, the nearest (mostly one waiting beside the balcony), then the
 * oldest request. `order` is the dispatch order; the answer is kept for the snapshot.
 */
export function nextForPort(s: LevelSnapshot, port: { cell: Cell; balcony: number }, order: (jobs: JobRecord[]) => JobRecord[]): string | undefined {
  const kept = portAnswers(s);
  const k = cellIndex(port.cell.x, port.cell.y);
  if (kept.answers.has(k)) return kept.answers.get(k);
  kept.waiting ??= order(s.jobs.filter(waitsForPort));
  let best: { id: string; d: number } | undefined;
  let top: number | undefined;
  const bots = s.bots ?? [];
  for (const j of kept.waiting) {
    if (!j.balcony_ids.includes(port.balcony)) continue;
    const priority = s.order(j.request_id).priority;
    top ??= priority;
    if (priority !== top) break;
    const bot = bots.find((b) => b.id === j.bot_id);
    const d = bot ? dist(bot, port.cell) : Infinity;
    if (!best || d < best.d) best = { id: j.id, d };
  }
  kept.answers.set(k, best?.id);
  return best?.id;
}

/**
 * What nextForPort works out, kept for the snapshot (every bot waiting in a poll asks it of the
 * same one): the jobs waiting for a position in dispatch order, and the answer for each position.
 */
const portAnswers = perSnapshot((): { waiting?: JobRecord[]; answers: Map<number, string | undefined> } => ({ answers: new Map() }));
