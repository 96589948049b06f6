/**
 * Where every carrier stands, in memory and kept current on every commit (this thread's and the
 * other's): dispatch asks "is a carrier on this cell?" for each space of each lane it weighs,
 * far too often to ask LMDB each time. `version(level)` grows whenever a carrier of the level
 * moves, so a conclusion drawn from the level's carriers (a cell out of reach) can be dropped
 * once they changed. For the levels it is given, it keeps which spaces of each storage lane hold
 * a carrier, so that weighing every lane of a level for a carrier going home reads a number a
 * lane rather than asking each of its spaces.
 */
import type { CommitNotice, Store } from '../../store/store.js';
import type { Cell, SiteLevel } from '../site/load.js';
import { carriers, type CarrierRecord } from './records.js';

export class CarrierPlaces {
  private readonly byId = new Map<string, CarrierRecord>();
  /** Carrier ids by level, then by cellIndex: numbers, so a look-up builds no string key. */
  private readonly byCell = new Map<number, Map<number, string>>();
  private readonly versions = new Map<number, number>();
  private readonly lanes = new Map<number, { level: SiteLevel; carriers: Uint8Array }>();
  private readonly stop: () => void;

  /** `levels`: those whose lanes it keeps (laneCarriers). */
  constructor(private readonly store: Store, levels: readonly SiteLevel[] = []) {
    for (const level of levels) this.lanes.set(level.id, { level, carriers: new Uint8Array(level.lanes.length) });
    for (const c of store.collection(carriers).scan()) this.put(c);
    this.stop = store.onCommit((notice) => this.apply(notice));
  }

  close(): void {
    this.stop();
  }

  /** The id of the carrier on a cell of a level, if one stands there. */
  at(levelId: number, x: number, y: number): string | undefined {
    return this.byCell.get(levelId)?.get(cellIndex(x, y));
  }

  /** Where a carrier stands (the store's record), if it exists. */
  of(id: string): CarrierRecord | undefined {
    return this.byId.get(id);
  }

  /** Every carrier. */
  all(): Iterable<CarrierRecord> {
    return this.byId.values();
  }

  /**
   * Per storage lane of a level given to the constructor, the depths of its spaces a carrier
   * stands on, as bits (bit d - 1 for depth d). Kept current: read it, do not keep a copy.
   */
  laneCarriers(levelId: number): LaneCarriers {
    return this.lanes.get(levelId)?.carriers ?? NO_LANES;
  }

  /** Grows whenever a carrier arrives on or leaves the level. */
  version(levelId: number): number {
    return this.versions.get(levelId) ?? 0;
  }

  private apply(notice: CommitNotice): void {
    for (const key of notice['carriers'] ?? []) {
      const id = String(key);
      const before = this.byId.get(id);
      if (before) this.remove(before);
      const now = this.store.collection(carriers).get(id);
      if (now) this.put(now);
    }
  }

  private put(c: CarrierRecord): void {
    this.byId.set(c.id, c);
    let level = this.byCell.get(c.level_id);
    if (!level) this.byCell.set(c.level_id, (level = new Map()));
    level.set(cellIndex(c.x, c.y), c.id);
    this.mark(c, true);
    this.bump(c.level_id);
  }

  private remove(c: CarrierRecord): void {
    this.byId.delete(c.id);
    const level = this.byCell.get(c.level_id);
    if (level?.get(cellIndex(c.x, c.y)) === c.id) {
      level.delete(cellIndex(c.x, c.y));
      this.mark(c, false);
    }
    this.bump(c.level_id);
  }

  private mark(c: CarrierRecord, on: boolean): void {
    const lanes = this.lanes.get(c.level_id);
    const space = lanes?.level.spaceAt(c.x, c.y);
    if (!lanes || !space || space.lane < 0) return;
    const bit = 1 << (space.depth - 1);
    lanes.carriers[space.lane] = on ? lanes.carriers[space.lane]! | bit : lanes.carriers[space.lane]! & ~bit;
  }

  private bump(levelId: number): void {
    this.versions.set(levelId, (this.versions.get(levelId) ?? 0) + 1);
  }
}

/** Per lane index, the bits of the depths a carrier stands on (see laneCarriers); undefined reads as none. */
export interface LaneCarriers {
  readonly [lane: number]: number | undefined;
}

const NO_LANES: LaneCarriers = {};

/** A cell within a level as one number, a map key that builds no string (coordinates are below 65536: the layout's schema). */
export function cellIndex(x: number, y: number): number {
  return y * 65536 + x;
}

/** The cell a cellIndex names. */
export function cellAt(index: number): Cell {
  return { x: index % 65536, y: Math.floor(index / 65536) };
}

/** A cell as a map key within one level. */
export function cellOf(c: Cell): string {
  return `${c.x}:${c.y}`;
}
