/**
 * Where every carrier stands, in memory and kept current on every commit (this thread's and the
 * other's): dispatch asks "is a carrier on this cell?" for each space of each lane it weighs,
 * far too often to ask LMDB each time. `version(level)` grows whenever a carrier of the level
 * moves, so a conclusion drawn from the level's carriers (a cell out of reach) can be dropped
 * once they changed.
 */
import type { CommitNotice, Store } from '../../store/store.js';
import type { Cell } from '../site/load.js';
import { carriers, type CarrierRecord } from './records.js';

export class CarrierPlaces {
  private readonly byId = new Map<string, CarrierRecord>();
  private readonly byCell = new Map<string, string>();
  private readonly versions = new Map<number, number>();
  private readonly stop: () => void;

  constructor(private readonly store: Store) {
    for (const c of store.collection(carriers).scan()) this.put(c);
    this.stop = store.onCommit((notice) => this.apply(notice));
  }

  close(): void {
    this.stop();
  }

  /** The id of the carrier on a cell of a level, if one stands there. */
  at(levelId: number, x: number, y: number): string | undefined {
    return this.byCell.get(cellKey(levelId, x, y));
  }

  /** Where a carrier stands (the store's record), if it exists. */
  of(id: string): CarrierRecord | undefined {
    return this.byId.get(id);
  }

  /** Every carrier. */
  all(): Iterable<CarrierRecord> {
    return this.byId.values();
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
    this.byCell.set(cellKey(c.level_id, c.x, c.y), c.id);
    this.bump(c.level_id);
  }

  private remove(c: CarrierRecord): void {
    this.byId.delete(c.id);
    if (this.byCell.get(cellKey(c.level_id, c.x, c.y)) === c.id) this.byCell.delete(cellKey(c.level_id, c.x, c.y));
    this.bump(c.level_id);
  }

  private bump(levelId: number): void {
    this.versions.set(levelId, (this.versions.get(levelId) ?? 0) + 1);
  }
}

function cellKey(levelId: number, x: number, y: number): string {
  return `${levelId}:${x}:${y}`;
}

/** A cell as a map key within one level. */
export function cellOf(c: Cell): string {
  return `${c.x}:${c.y}`;
}
