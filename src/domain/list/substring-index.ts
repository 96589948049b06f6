import { NumberSet } from './number-set.js';

/** The keys a substring index holds for a needle: read it before the index's next change. */
export interface KeysHolding<K> extends Iterable<K> {
  readonly size: number;
  has(key: K): boolean;
}

/**
 * Which rows' texts hold a needle, by the trigrams (runs of three characters) of their texts:
 * a substring search then tests only the rows that hold every trigram of its needle, not every
 * row (10,000 SKU names cost 5 ms a search). Needles shorter than a trigram get no
 * answer.
 *
 * The answers to the needles asked lately are kept, and kept current as texts change: an
 * integration asks for the same few words again and again, and an answer found anew costs a
 * pass over all its matches (12 ms for "bolt" in 61,000 SKUs), where a kept one costs nothing
 * however many rows it holds (a request's cost flat as the data grows).
 *
 * Each key is given a number for as long as it has a text, and the postings and answers hold
 * numbers in NumberSets: a trigram nearly every text holds becomes a bitmap, where a key
 * renamed back and forth costs the same at 400,000 keys as at 20,000.
 */
export class SubstringIndex<K> {
  /** Numbers whose text holds each trigram. */
  private readonly postings = new Map<string, NumberSet>();
  /** Each key's number, kept while the key has a text. */
  private readonly numbers = new Map<K, number>();
  /** By number: the key, and the text it was indexed with (to take it out again). */
  private readonly keys: (K | undefined)[] = [];
  private readonly texts: (string | undefined)[] = [];
  /** Numbers of keys taken out, given again first so that the bitmaps stay short. */
  private readonly free: number[] = [];
  /** The numbers holding each needle asked lately, least recently asked first. */
  private readonly answers = new Map<string, { numbers: NumberSet; keys: KeysHolding<K> }>();

  /** `kept`: how many needles' answers are kept (each costs an `includes` per text set). */
  constructor(private readonly kept = 64) {}

  /** Indexes `key` with `text`, replacing its earlier text; undefined takes it out. */
  set(key: K, text: string | undefined): void {
    let n = this.numbers.get(key);
    const before = n === undefined ? undefined : this.texts[n];
    if (before === text) return;
    if (n === undefined) {
      n = this.free.pop() ?? this.keys.length;
      this.numbers.set(key, n);
      this.keys[n] = key;
    }
    // Only the trigrams that change: one the old and new text share stays as it is.
    const gone = before === undefined ? EMPTY : trigrams(before);
    const come = text === undefined ? EMPTY : trigrams(text);
    for (const gram of gone) {
      if (come.has(gram)) continue;
      const numbers = this.postings.get(gram)!;
      numbers.delete(n);
      if (numbers.size === 0) this.postings.delete(gram);
    }
    for (const gram of come) {
      if (gone.has(gram)) continue;
      let numbers = this.postings.get(gram);
      if (!numbers) this.postings.set(gram, (numbers = new NumberSet()));
      numbers.add(n);
    }
    for (const [needle, { numbers }] of this.answers) {
      if (text !== undefined && text.includes(needle)) numbers.add(n);
      else numbers.delete(n);
    }
    this.texts[n] = text;
    if (text === undefined) {
      this.numbers.delete(key);
      this.keys[n] = undefined;
      this.free.push(n);
    }
  }

  /**
   * Keys whose text holds `needle`, in no order; undefined when the needle is shorter than
   * three characters. The answer is this index's own, kept current by `set`: read it before
   * the next change.
   */
  holding(needle: string): KeysHolding<K> | undefined {
    const kept = this.answers.get(needle);
    if (kept) {
      this.answers.delete(needle);
      this.answers.set(needle, kept);
      return kept.keys;
    }
    const numbers = this.find(needle);
    if (numbers === undefined) return undefined;
    if (this.answers.size >= this.kept) this.answers.delete(this.answers.keys().next().value!);
    const answer = { numbers, keys: this.keysOf(numbers) };
    this.answers.set(needle, answer);
    return answer.keys;
  }

  private find(needle: string): NumberSet | undefined {
    const grams = trigrams(needle);
    if (grams.size === 0) return undefined;
    const lists: NumberSet[] = [];
    for (const gram of grams) {
      const numbers = this.postings.get(gram);
      if (!numbers) return new NumberSet();
      lists.push(numbers);
    }
    lists.sort((a, b) => a.size - b.size);
    const [smallest, ...others] = lists as [NumberSet, ...NumberSet[]];
    const out = new NumberSet();
    for (const n of smallest) if (others.every((numbers) => numbers.has(n)) && this.texts[n]!.includes(needle)) out.add(n);
    return out;
  }

  /** The keys of `numbers`, read through this index's numbering. */
  private keysOf(numbers: NumberSet): KeysHolding<K> {
    const numberOf = this.numbers;
    const keys = this.keys;
    return {
      get size() {
        return numbers.size;
      },
      has(key) {
        const n = numberOf.get(key);
        return n !== undefined && numbers.has(n);
      },
      *[Symbol.iterator]() {
        for (const n of numbers) yield keys[n]!;
      },
    };
  }
}

const EMPTY: ReadonlySet<string> = new Set();

/** The distinct trigrams of a text. */
function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
  return out;
}
