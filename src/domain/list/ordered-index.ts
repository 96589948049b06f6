/**
 * Rows kept in the order of a numeric key, ties in the order of a rank (the source's store
 * order), so that a list sorted by that key finds its first page by reading rows in order
 * instead of reading and sorting every candidate (docs/listing.md, "Speed").
 *
 * Rows of one key value form a run kept in rank order; the distinct keys are kept sorted. A
 * site's key (the inventory view's `eta`) has a few hundred distinct values, so runs hold
 * hundreds of rows and an update is two binary searches and an array splice. The owner must
 * remove a row before its key or rank changes and add it again after.
 */
export class OrderedIndex<T> {
  /** Rows by key, each run in rank order. */
  private readonly runs = new Map<number, T[]>();
  /** The distinct keys, ascending. */
  private readonly keys: number[] = [];
  /** Rows without a key (null or undefined), in rank order. */
  private missing: T[] = [];
  private count = 0;

  constructor(
    private readonly key: (row: T) => number | null | undefined,
    private readonly rank: (row: T) => number,
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
    const r = this.rank(row);
    // New rows come last in the store's order: appending is the common case.
    if (run.length === 0 || this.rank(run[run.length - 1]!) < r) run.push(row);
    else run.splice(this.rankIndex(run, r), 0, row);
    this.count++;
  }

  /** Removes a row filed under its current key; false when it is not held. */
  remove(row: T): boolean {
    const k = this.keyOf(row);
    const run = k === null ? this.missing : this.runs.get(k);
    if (run === undefined) return false;
    const i = this.rankIndex(run, this.rank(row));
    if (run[i] !== row) return false;
    run.splice(i, 1);
    this.count--;
    if (run.length === 0 && k !== null) {
      this.runs.delete(k);
      this.keys.splice(lowerBound(this.keys, k), 1);
    }
    return true;
  }

  /** Replaces the content with `rows`, which must come in rank order (a bulk load: no splices). */
  load(rows: Iterable<T>): void {
    this.runs.clear();
    this.keys.length = 0;
    this.missing = [];
    this.count = 0;
    let last = -Infinity;
    for (const row of rows) {
      const r = this.rank(row);
      if (!(r > last)) throw new Error('OrderedIndex.load: rows are not in rank order');
      last = r;
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
   * The rows as runs of equal key, each run in rank order: ascending keys with the rows
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
      // Keys that `group` maps to one value are adjacent: join their runs, in rank order.
      const g = group(at(j));
      let joined: T[] | undefined;
      while (j + 1 < n && group(at(j + 1)) === g) {
        joined ??= [...run];
        joined.push(...this.runs.get(at(++j))!);
      }
      if (joined !== undefined) joined.sort((a, b) => this.rank(a) - this.rank(b));
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

  /** First position in `run` whose rank is not below `r`. */
  private rankIndex(run: readonly T[], r: number): number {
    let lo = 0;
    let hi = run.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rank(run[mid]!) < r) lo = mid + 1;
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
