/**
 * Which rows' texts hold a needle, by the trigrams (runs of three characters) of their texts:
 * a substring search then tests only the rows that hold every trigram of its needle, not every
 * row (10,000 SKU names cost 5 ms a search, issue 22). Needles shorter than a trigram get no
 * answer.
 *
 * The answers to the needles asked lately are kept, and kept current as texts change: an
 * integration asks for the same few words again and again, and an answer found anew costs a
 * pass over all its matches (12 ms for "bolt" in 61,000 SKUs), where a kept one costs nothing
 * however many rows it holds (issue 22: a request's cost flat as the data grows).
 */
export class SubstringIndex<K> {
  /** Keys whose text holds each trigram. */
  private readonly postings = new Map<string, Set<K>>();
  /** The text each key was indexed with, to take it out again. */
  private readonly texts = new Map<K, string>();
  /** The keys holding each needle asked lately, least recently asked first. */
  private readonly answers = new Map<string, Set<K>>();

  /** `kept`: how many needles' answers are kept (each costs an `includes` per text set). */
  constructor(private readonly kept = 64) {}

  /** Indexes `key` with `text`, replacing its earlier text; undefined takes it out. */
  set(key: K, text: string | undefined): void {
    const before = this.texts.get(key);
    if (before === text) return;
    if (before !== undefined) {
      for (const gram of trigrams(before)) {
        const keys = this.postings.get(gram)!;
        keys.delete(key);
        if (keys.size === 0) this.postings.delete(gram);
      }
      this.texts.delete(key);
    }
    for (const [needle, keys] of this.answers) {
      if (text !== undefined && text.includes(needle)) keys.add(key);
      else keys.delete(key);
    }
    if (text === undefined) return;
    this.texts.set(key, text);
    for (const gram of trigrams(text)) {
      let keys = this.postings.get(gram);
      if (!keys) this.postings.set(gram, (keys = new Set()));
      keys.add(key);
    }
  }

  /**
   * Keys whose text holds `needle`, in no order; undefined when the needle is shorter than
   * three characters. The set is this index's own, kept current by `set`: read it before
   * the next change, never write to it.
   */
  holding(needle: string): ReadonlySet<K> | undefined {
    const kept = this.answers.get(needle);
    if (kept) {
      this.answers.delete(needle);
      this.answers.set(needle, kept);
      return kept;
    }
    const found = this.find(needle);
    if (found === undefined) return undefined;
    if (this.answers.size >= this.kept) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(needle, found);
    return found;
  }

  private find(needle: string): Set<K> | undefined {
    const grams = trigrams(needle);
    if (grams.size === 0) return undefined;
    const lists: Set<K>[] = [];
    for (const gram of grams) {
      const keys = this.postings.get(gram);
      if (!keys) return new Set();
      lists.push(keys);
    }
    lists.sort((a, b) => a.size - b.size);
    const [smallest, ...others] = lists as [Set<K>, ...Set<K>[]];
    const out = new Set<K>();
    for (const key of smallest) if (others.every((keys) => keys.has(key)) && this.texts.get(key)!.includes(needle)) out.add(key);
    return out;
  }
}

/** The distinct trigrams of a text. */
function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
  return out;
}
