/**
 * A set of small non-negative integers (a substring index's row numbers): a `Set` while it
 * holds few of the numbers below its largest, a bitmap once it holds many.
 *
 * Why not a `Set` throughout: V8 leaves a deleted entry in its bucket's chain until the table is
 * rebuilt, and adding a key walks that chain. A key taken out and put back again and again (an
 * SKU renamed back and forth) lengthens its own chain each time, so in a set of 400,000 that is
 * rebuilt only every hundred thousand deletions, a delete and add cost 2.7 µs and growing.
 * A bitmap sets and clears one bit, and costs less memory once more than about one
 * number in a hundred is in it; a sparse set holds few, so its chains stay short.
 */
export class NumberSet {
  /** How many numbers are in the set. */
  size = 0;
  private sparse: Set<number> | undefined = new Set();
  private words: Uint32Array | undefined;
  /** One past the largest number ever added: the bitmap's length if it became one. */
  private bound = 0;

  has(n: number): boolean {
    const words = this.words;
    if (words === undefined) return this.sparse!.has(n);
    const w = n >>> 5;
    return w < words.length && (words[w]! & (1 << (n & 31))) !== 0;
  }

  add(n: number): void {
    if (n >= this.bound) this.bound = n + 1;
    let words = this.words;
    if (words === undefined) {
      const sparse = this.sparse!;
      sparse.add(n);
      this.size = sparse.size;
      if (this.size >= DENSE_MIN && this.size * DENSE_SHARE >= this.bound) this.toBitmap();
      return;
    }
    const w = n >>> 5;
    if (w >= words.length) words = this.grow(w + 1);
    const bit = 1 << (n & 31);
    if ((words[w]! & bit) !== 0) return;
    words[w]! |= bit;
    this.size++;
  }

  delete(n: number): void {
    const words = this.words;
    if (words === undefined) {
      this.sparse!.delete(n);
      this.size = this.sparse!.size;
      return;
    }
    const w = n >>> 5;
    const bit = 1 << (n & 31);
    if (w >= words.length || (words[w]! & bit) === 0) return;
    words[w]! &= ~bit;
    this.size--;
    // Four times below the share that made it a bitmap, so a set near the line does not flip.
    if (this.size * DENSE_SHARE * 4 < this.bound) this.toSparse();
  }

  /** The numbers in the set: in ascending order once it is a bitmap, in the order added before. */
  *[Symbol.iterator](): Generator<number> {
    const words = this.words;
    if (words === undefined) {
      yield* this.sparse!;
      return;
    }
    for (let w = 0; w < words.length; w++) {
      let word = words[w]!;
      while (word !== 0) {
        const low = word & -word;
        yield w * 32 + 31 - Math.clz32(low);
        word ^= low;
      }
    }
  }

  private toBitmap(): void {
    this.words = new Uint32Array(Math.ceil(this.bound / 32));
    for (const n of this.sparse!) this.words[n >>> 5]! |= 1 << (n & 31);
    this.sparse = undefined;
  }

  private toSparse(): void {
    this.sparse = new Set(this);
    this.words = undefined;
  }

  /** A longer bitmap, doubled so that numbers added one after another copy it rarely. */
  private grow(atLeast: number): Uint32Array {
    const words = new Uint32Array(Math.max(atLeast, this.words!.length * 2));
    words.set(this.words!);
    return (this.words = words);
  }
}

/** Fewer numbers than this stay in a `Set` however dense: a bitmap saves nothing worth its scan. */
const DENSE_MIN = 64;
/** A bitmap once one number in this many below the bound is in the set (a `Set` entry costs about 100 bits). */
const DENSE_SHARE = 64;
