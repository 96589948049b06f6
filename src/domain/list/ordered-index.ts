import { SortedChunks } from './sorted-chunks.js';

/**
 * Rows kept in the order of a numeric key, ties in a second order (the source's store
 * order), so that a list sorted by that key finds its first page by reading rows in order
 * instead of reading and sorting every candidate (docs/listing.md, "Speed").
 *
 * Rows of one key value form a run kept in tie order; the distinct keys are kept sorted. A
 * site's key (the inventory view's `eta`) has a few hundred distinct values, so runs hold
 * hundreds of rows; an SKU's stock count is 0 for most SKUs, so one run holds nearly all of
 * them. A run is held in chunks (SortedChunks): an update is a few binary searches and the
 * splice of one chunk, however long the run. The tie order is a comparison, not a position: a
 * position (an SKU's place among 150,000 ids) cost a binary search of its own at each step of
 * the run's. The owner must remove a row before its key or tie order changes and
 * add it again after.
 */
export class OrderedIndex<T> {
  /** Rows by key, each run in tie order. */
  private readonly runs = new Map<number, SortedChunks<T>>();
  /** The distinct keys, ascending. */
  private readonly keys: number[] = [];
  /** Rows without a key (null or undefined), in tie order. */
  private missing: SortedChunks<T>;
  private count = 0;

  constructor(
    private readonly key: (row: T) => number | null | undefined,
    /** Negative when `a` comes before `b` among rows of one key; never 0 for two rows held. */
    private readonly tie: (a: T, b: T) => number,
    /** Rows a chunk of a run holds at most (small in tests, so that runs span chunks). */
    private readonly chunk = 512,
  ) {
    this.missing = new SortedChunks(tie, chunk);
  }

  /** Number of rows held. */
  get size(): number {
    return this.count;
  }

  /** Adds a row under its current key. */
  add(row: T): void {
    const k = this.keyOf(row);
    let run = k === null ? this.missing : this.runs.get(k);
    if (run === undefined) {
      this.runs.set(k!, (run = new SortedChunks(this.tie, this.chunk)));
      this.keys.splice(lowerBound(this.keys, k!), 0, k!);
    }
    run.insert(row);
    this.count++;
  }

  /** Removes a row filed under its current key; false when it is not held. */
  remove(row: T): boolean {
    const k = this.keyOf(row);
    const run = k === null ? this.missing : this.runs.get(k);
    if (run === undefined || !run.remove(row)) return false;
    this.count--;
    if (run.size === 0 && k !== null) {
      this.runs.delete(k);
      this.keys.splice(lowerBound(this.keys, k), 1);
    }
    return true;
  }

  /** Replaces the content with `rows`, which must come in tie order (a bulk load: no splices). */
  load(rows: Iterable<T>): void {
    this.runs.clear();
    this.keys.length = 0;
    this.count = 0;
    const byKey = new Map<number | null, T[]>();
    let last: T | undefined;
    for (const row of rows) {
      if (last !== undefined && !(this.tie(last, row) < 0)) throw new Error('OrderedIndex.load: rows are not in tie order');
      last = row;
      const k = this.keyOf(row);
      let run = byKey.get(k);
      if (run === undefined) byKey.set(k, (run = []));
      run.push(row);
      this.count++;
    }
    this.missing = new SortedChunks(this.tie, this.chunk);
    for (const [k, rows] of byKey) {
      const run = k === null ? this.missing : new SortedChunks(this.tie, this.chunk);
      run.load(rows);
      if (k !== null) this.runs.set(k, run);
    }
    this.keys.push(...this.runs.keys());
    this.keys.sort((a, b) => a - b);
  }

  /**
   * The rows in runs, each in tie order: ascending keys with the rows without a key last, or
   * descending keys with those rows first (the order the list engine sorts in). The rows of
   * one key may come in several runs one after the other (its chunks); never two keys in one
   * run. `group`, non-decreasing in the key (e.g. Math.round), joins the rows of keys it maps
   * to one value into one run. The runs are the index's own arrays: read them before the
   * next change.
   */
  *ordered(descending: boolean, group?: (key: number) => number): Generator<readonly T[]> {
    if (descending) yield* this.missing.parts;
    const n = this.keys.length;
    const at = (j: number): number => this.keys[descending ? n - 1 - j : j]!;
    for (let j = 0; j < n; j++) {
      const run = this.runs.get(at(j))!;
      if (group === undefined || j + 1 === n || group(at(j + 1)) !== group(at(j))) {
        yield* run.parts;
        continue;
      }
      // Keys that `group` maps to one value are adjacent: join their rows, in tie order.
      const g = group(at(j));
      const joined = run.toArray();
      while (j + 1 < n && group(at(j + 1)) === g) for (const part of this.runs.get(at(++j))!.parts) joined.push(...part);
      yield joined.sort(this.tie);
    }
    if (!descending) yield* this.missing.parts;
  }

  private keyOf(row: T): number | null {
    const k = this.key(row);
    if (k == null) return null;
    // A NaN key would sort nowhere; the engine's own sort has no place for it either.
    if (Number.isNaN(k)) throw new Error('OrderedIndex: a key is NaN');
    return k;
  }
}

/** First position in the ascending `xs` not below `x`. */
function lowerBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
