/**
 * Which rows' texts hold a needle, by the trigrams (runs of three characters) of their texts:
 * a substring search then tests only the rows that hold every trigram of its needle, not every
 * row (10,000 SKU names cost 5 ms a search, issue 22). Needles shorter than a trigram get no
 * answer.
 */
export class SubstringIndex<K> {
  /** Keys whose text holds each trigram. */
  private readonly postings = new Map<string, Set<K>>();
  /** The text each key was indexed with, to take it out again. */
  private readonly texts = new Map<K, string>();

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
    if (text === undefined) return;
    this.texts.set(key, text);
    for (const gram of trigrams(text)) {
      let keys = this.postings.get(gram);
      if (!keys) this.postings.set(gram, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Keys whose text holds `needle`, in no order; undefined when the needle is shorter than three characters. */
  holding(needle: string): K[] | undefined {
    const grams = trigrams(needle);
    if (grams.size === 0) return undefined;
    const lists: Set<K>[] = [];
    for (const gram of grams) {
      const keys = this.postings.get(gram);
      if (!keys) return [];
      lists.push(keys);
    }
    lists.sort((a, b) => a.size - b.size);
    const [smallest, ...others] = lists as [Set<K>, ...Set<K>[]];
    const out: K[] = [];
    for (const key of smallest) if (others.every((keys) => keys.has(key)) && this.texts.get(key)!.includes(needle)) out.push(key);
    return out;
  }
}

/** The distinct trigrams of a text. */
function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
  return out;
}
