/**
 * What one dispatch pass of a level decides from: the level's geometry, its bots as the motion
 * sees them, its open jobs, where its carriers stand, the line, the pause flag and what the
 * runner is doing. Taken once per pass from the in-memory indexes (OpenWork, CarrierPlaces)
 * and read-only for the policy (src/brain/worker/policy/), which is a set of pure functions of
 * it: a table of snapshots and the decisions they must give is the policy's test.
 */
import type { CarrierPlaces, LaneCarriers } from '../../../domain/inventory/carrier-places.js';
import type { OpenWork } from '../../../domain/requests/open-work.js';
import type { JobRecord } from '../../../domain/requests/records.js';
import type { Cell, SiteLevel } from '../../../domain/site/load.js';
import type { MotionBot, Standing } from '../motion/motion.js';

/** Whether the level's radio line carries its bots now, and why not. */
export type LineState = { up: true } | { up: false; reason: string };

/** Where a carrier stands. */
export interface CarrierPlace {
  id: string;
  level_id: number;
  x: number;
  y: number;
}

export interface LevelSnapshot {
  readonly level: SiteLevel;
  readonly now: number;
  readonly paused: boolean;
  /** Battery percent under which an idle bot gets no work (brain.chargeBelowPercent). */
  readonly chargeBelow: number;
  /** The level's bots, or null when no motion runs for it (its radio line is off). */
  readonly bots: readonly MotionBot[] | null;
  /** Bots that report but are not placed yet (not in `bots`): their cells are taken, and a lane with one holding a carrier up is busy. */
  readonly unplaced: readonly Standing[];
  readonly line: LineState;
  /** Open jobs of the level, oldest first. */
  readonly jobs: readonly JobRecord[];
  /** Jobs whose motion the runner is carrying out now. */
  readonly running: ReadonlySet<string>;
  /** Priority and arrival (counter) of an open request; a final one sorts last. */
  order(requestId: string): { priority: number; counter: number };
  /** A job by id, open or ended (a packing's parents). */
  job(id: string): JobRecord | undefined;
  /** The carrier on a cell of this level. */
  carrierAt(c: Cell): string | undefined;
  /** Per storage lane, the depths of its spaces a carrier stands on, as bits (bit d - 1 for depth d), as carrierAt says. */
  readonly laneCarriers: LaneCarriers;
  /** Where a carrier stands, on any level. */
  carrier(id: string): CarrierPlace | undefined;
  /** Cells found out of reach for this carrier since the level's carriers last changed. */
  unreachable(carrierId: string): ReadonlySet<string>;
  /** A bot found nothing to lift where the store has this carrier, and its record has not changed since. */
  missing(carrierId: string): boolean;
}

/** The runner's side of a snapshot: what it does, and what it learnt the hard way. */
export interface RunnerState {
  running: ReadonlySet<string>;
  unreachable(carrierId: string): ReadonlySet<string>;
  missing(carrierId: string): boolean;
}

export interface SnapshotSources {
  level: SiteLevel;
  work: OpenWork;
  carriers: CarrierPlaces;
  /** A job that may have ended (not in OpenWork). */
  findJob(id: string): JobRecord | undefined;
  bots(): readonly MotionBot[] | null;
  unplaced(): readonly Standing[];
  line(): LineState;
  paused(): boolean;
  chargeBelow(): number;
  now(): number;
}

const LAST = { priority: -Infinity, counter: Infinity };

/**
 * `derive` worked out once per snapshot and kept while the snapshot lives: a snapshot never
 * changes, and the policy asks the same question of it for every job of a pass (with 900 open
 * jobs, each asking it anew made a pass quadratic: most of the brain's thread under load).
 */
export function perSnapshot<V>(derive: (s: LevelSnapshot) => V): (s: LevelSnapshot) => V {
  const memo = new WeakMap<LevelSnapshot, V>();
  return (s) => {
    let v = memo.get(s);
    if (v === undefined) memo.set(s, (v = derive(s)));
    return v;
  };
}

/** Takes the snapshot of a level for one pass. */
export function takeSnapshot(src: SnapshotSources, runner: RunnerState): LevelSnapshot {
  const levelId = src.level.id;
  return {
    level: src.level,
    now: src.now(),
    paused: src.paused(),
    chargeBelow: src.chargeBelow(),
    bots: src.bots(),
    unplaced: src.unplaced(),
    line: src.line(),
    jobs: src.work.jobsOn(levelId),
    running: runner.running,
    order: (id) => src.work.request(id) ?? LAST,
    job: (id) => src.work.job(id) ?? src.findJob(id),
    carrierAt: (c) => src.carriers.at(levelId, c.x, c.y),
    laneCarriers: src.carriers.laneCarriers(levelId),
    carrier: (id) => src.carriers.of(id),
    unreachable: (id) => runner.unreachable(id),
    missing: (id) => runner.missing(id),
  };
}
