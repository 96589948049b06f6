/**
 * Items kept sorted in chunks of at most `max`, so that an insert or a removal moves at most
 * one chunk's items, never the whole sequence.
 *
 * A sorted array of 100,000 SKU ids took a splice for every new SKU: a memmove of the whole
 * tail, and while the garbage collector marks (most of the time under load, with a large
 * heap) V8 moves a large array's elements one by one with a write barrier each: 16 to 230 µs
 * a splice at 230,000 ids, and `POST /sku` cost three times as much after ten minutes of load.
 */
export class SortedChunks<T> {
  private chunks: T[][] = [];
  /** Items before each chunk, rebuilt on the first `rank` after a change. */
  private starts: number[] | undefined;
  private count = 0;

  constructor(
    /** Negative when `a` comes before `b`; 0 only for the same item. */
    private readonly compare: (a: T, b: T) => number,
    private readonly max = 512,
  ) {
    if (!(max >= 2)) throw new Error('SortedChunks: a chunk holds at least 2 items');
  }

  /** Number of items held. */
  get size(): number {
    return this.count;
  }

  /** The chunks in order, each sorted: the index's own arrays, to read before the next change. */
  get parts(): readonly (readonly T[])[] {
    return this.chunks;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const chunk of this.chunks) yield* chunk;
  }

  /** Every item in order, in one new array. */
  toArray(): T[] {
    return this.chunks.flat();
  }

  /** Inserts `item` at its place (after none equal to it: items are distinct). */
  insert(item: T): void {
    this.starts = undefined;
    this.count++;
    const last = this.chunks[this.chunks.length - 1];
    // Items that come last (new ids, new rows in store order) are the common case.
    if (last === undefined) {
      this.chunks.push([item]);
      return;
    }
    if (this.compare(last[last.length - 1]!, item) < 0) {
      if (last.length < this.max) last.push(item);
      else this.chunks.push([item]);
      return;
    }
    const c = this.chunkFor(item);
    const chunk = this.chunks[c]!;
    chunk.splice(lowerBound(chunk, item, this.compare), 0, item);
    if (chunk.length > this.max) this.chunks.splice(c + 1, 0, chunk.splice(chunk.length >> 1));
  }

  /** Removes `item` (the same value or object); false when it is not held. */
  remove(item: T): boolean {
    if (this.count === 0) return false;
    const c = this.chunkFor(item);
    const chunk = this.chunks[c]!;
    const i = lowerBound(chunk, item, this.compare);
    if (chunk[i] !== item) return false;
    chunk.splice(i, 1);
    this.starts = undefined;
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(c, 1);
      return true;
    }
    // Any two neighbours hold more than `max` together (a split leaves two halves of more
    // than max / 2): a chunk that a removal lets fit with a neighbour joins it. So there are
    // never more than 2 * size / max + 1 chunks, whatever was removed.
    const next = this.chunks[c + 1];
    const previous = this.chunks[c - 1];
    if (next !== undefined && chunk.length + next.length <= this.max) {
      chunk.push(...next);
      this.chunks.splice(c + 1, 1);
    } else if (previous !== undefined && previous.length + chunk.length <= this.max) {
      previous.push(...chunk);
      this.chunks.splice(c, 1);
    }
    return true;
  }

  /** Number of items before `item`'s place (held or not). */
  rank(item: T): number {
    if (this.count === 0) return 0;
    if (this.starts === undefined) {
      this.starts = new Array<number>(this.chunks.length);
      let n = 0;
      for (let c = 0; c < this.chunks.length; c++) {
        this.starts[c] = n;
        n += this.chunks[c]!.length;
      }
    }
    const c = this.chunkFor(item);
    return this.starts[c]! + lowerBound(this.chunks[c]!, item, this.compare);
  }

  /** Replaces the content with `items`, which must be sorted and distinct. */
  load(items: readonly T[]): void {
    for (let i = 1; i < items.length; i++) {
      if (!(this.compare(items[i - 1]!, items[i]!) < 0)) throw new Error('SortedChunks.load: items are not sorted');
    }
    this.chunks = [];
    for (let i = 0; i < items.length; i += this.max) this.chunks.push(items.slice(i, i + this.max));
    this.count = items.length;
    this.starts = undefined;
  }

  /** The chunk `item` belongs in: the first whose last item is not before it, else the last. */
  private chunkFor(item: T): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (this.compare(chunk[chunk.length - 1]!, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** First position in the sorted `xs` not before `x`. */
export function lowerBound<T>(xs: readonly T[], x: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(xs[mid]!, x) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
