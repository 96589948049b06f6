/**
 * Rows kept in the order of a numeric key, ties in a second order (the source's store
 * order), so that a list sorted by that key finds its first page by reading rows in order
 * instead of reading and sorting every candidate (docs/listing.md, "Speed").
 *
 * Rows of one key value form a run kept in tie order; the distinct keys are kept sorted. A
 * site's key (the inventory view's `eta`) has a few hundred distinct values, so runs hold
 * hundreds of rows and an update is two binary searches and an array splice. The tie order is
 * a comparison, not a position: a position (an SKU's place among 150,000 ids) cost a binary
 * search of its own at each step of the run's (issue 22). The owner must remove a row before
 * its key or tie order changes and add it again after.
 */
export class OrderedIndex<T> {
  /** Rows by key, each run in tie order. */
  private readonly runs = new Map<number, T[]>();
  /** The distinct keys, ascending. */
  private readonly keys: number[] = [];
  /** Rows without a key (null or undefined), in tie order. */
  private missing: T[] = [];
  private count = 0;

  constructor(
    private readonly key: (row: T) => number | null | undefined,
    /** Negative when `a` comes before `b` among rows of one key; never 0 for two rows held. */
    private readonly tie: (a: T, b: T) => number,
  ) {}

  /** Number of rows held. */
  get size(): number {
    return this.count;
  }

  /** Adds a row under its current key. */
  add(row: T): void {
    const k = this.keyOf(row);
    let run = k === null ? this.missing : this.runs.get(k);
    if (run === undefined) {
      this.runs.set(k!, (run = []));
      this.keys.splice(lowerBound(this.keys, k!), 0, k!);
    }
    // New rows come last in the store's order: appending is the common case.
    if (run.length === 0 || this.tie(run[run.length - 1]!, row) < 0) run.push(row);
    else run.splice(this.tieIndex(run, row), 0, row);
    this.count++;
  }

  /** Removes a row filed under its current key; false when it is not held. */
  remove(row: T): boolean {
    const k = this.keyOf(row);
    const run = k === null ? this.missing : this.runs.get(k);
    if (run === undefined) return false;
    const i = this.tieIndex(run, row);
    if (run[i] !== row) return false;
    run.splice(i, 1);
    this.count--;
    if (run.length === 0 && k !== null) {
      this.runs.delete(k);
      this.keys.splice(lowerBound(this.keys, k), 1);
    }
    return true;
  }

  /** Replaces the content with `rows`, which must come in tie order (a bulk load: no splices). */
  load(rows: Iterable<T>): void {
    this.runs.clear();
    this.keys.length = 0;
    this.missing = [];
    this.count = 0;
    let last: T | undefined;
    for (const row of rows) {
      if (last !== undefined && !(this.tie(last, row) < 0)) throw new Error('OrderedIndex.load: rows are not in tie order');
      last = row;
      const k = this.keyOf(row);
      let run = k === null ? this.missing : this.runs.get(k);
      if (run === undefined) this.runs.set(k!, (run = []));
      run.push(row);
      this.count++;
    }
    this.keys.push(...this.runs.keys());
    this.keys.sort((a, b) => a - b);
  }

  /**
   * The rows as runs of equal key, each run in tie order: ascending keys with the rows
   * without a key last, or descending keys with those rows first (the order the list engine
   * sorts in). `group`, non-decreasing in the key (e.g. Math.round), joins the runs of keys it
   * maps to one value into one run. The runs are the index's own arrays: read them before
   * the next change.
   */
  *ordered(descending: boolean, group?: (key: number) => number): Generator<readonly T[]> {
    if (descending && this.missing.length > 0) yield this.missing;
    const n = this.keys.length;
    const at = (j: number): number => this.keys[descending ? n - 1 - j : j]!;
    for (let j = 0; j < n; j++) {
      const run = this.runs.get(at(j))!;
      if (group === undefined) {
        yield run;
        continue;
      }
      // Keys that `group` maps to one value are adjacent: join their runs, in tie order.
      const g = group(at(j));
      let joined: T[] | undefined;
      while (j + 1 < n && group(at(j + 1)) === g) {
        joined ??= [...run];
        joined.push(...this.runs.get(at(++j))!);
      }
      if (joined !== undefined) joined.sort(this.tie);
      yield joined ?? run;
    }
    if (!descending && this.missing.length > 0) yield this.missing;
  }

  private keyOf(row: T): number | null {
    const k = this.key(row);
    if (k == null) return null;
    // A NaN key would sort nowhere; the engine's own sort has no place for it either.
    if (Number.isNaN(k)) throw new Error('OrderedIndex: a key is NaN');
    return k;
  }

  /** First position in `run` not before `row` in tie order. */
  private tieIndex(run: readonly T[], row: T): number {
    let lo = 0;
    let hi = run.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tie(run[mid]!, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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
