// npm run bench:substring-index [-- --small 20000 --large 400000 --ms 1000]
//
// The SKU names' substring index under `PATCH /sku`: a hundred SKUs renamed back and
// forth among ten words, beside a catalogue of `--small` and of `--large` names, with ten
// needles' answers kept. The baseline is the same index with a `Set` of keys per trigram and per
// answer (as it was), against SubstringIndex's NumberSets. Prints µs a rename in the last of
// three rounds (a `Set`'s cost grows while deleted keys pile up in its chains) and the ratio of
// large to small, which is 1 when the cost is flat as the catalogue grows.
import { parseArgs } from 'node:util';
import { SubstringIndex } from '../src/domain/list/substring-index.js';

const { values: args } = parseArgs({ options: { small: { type: 'string', default: '20000' }, large: { type: 'string', default: '400000' }, ms: { type: 'string', default: '1000' } } });
const WORDS = ['bolt', 'nut', 'gloves', 'wire', 'tape', 'drill', 'cable', 'washer', 'screw', 'glasses'];
const RENAMED = 100;

interface Index {
  set(key: string, text: string | undefined): void;
  holding(needle: string): unknown;
}

/** The index as it was: a `Set` of keys per trigram and per kept answer, a key deleted from each before it is added back. */
class SetIndex implements Index {
  private readonly postings = new Map<string, Set<string>>();
  private readonly texts = new Map<string, string>();
  private readonly answers = new Map<string, Set<string>>();

  set(key: string, text: string | undefined): void {
    const before = this.texts.get(key);
    if (before !== undefined) {
      for (const gram of trigrams(before)) this.postings.get(gram)!.delete(key);
      this.texts.delete(key);
    }
    for (const [needle, keys] of this.answers) {
      if (text?.includes(needle)) keys.add(key);
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

  holding(needle: string): Set<string> {
    let keys = this.answers.get(needle);
    if (!keys) this.answers.set(needle, (keys = new Set([...this.texts].filter(([, text]) => text.includes(needle)).map(([key]) => key))));
    return keys;
  }
}

function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
  return out;
}

/** µs a rename in each of three rounds of `ms`, on an index of `size` names. */
function renames(index: Index, size: number, ms: number): number[] {
  for (let i = 0; i < size; i++) index.set(`LOAD-${i}`, `load ${WORDS[i % WORDS.length]} ${i}`);
  for (let i = 0; i < RENAMED; i++) index.set(`SKU-${i}`, `renamed ${WORDS[i % WORDS.length]} ${i}`);
  for (const word of WORDS) index.holding(word);
  let n = 0;
  return [0, 1, 2].map(() => {
    const t0 = performance.now();
    const first = n;
    while (performance.now() - t0 < ms) {
      index.set(`SKU-${n % RENAMED}`, `renamed ${WORDS[(n * 7) % WORDS.length]} ${(n * 31) % 1000}`);
      n++;
    }
    return ((performance.now() - t0) * 1000) / (n - first);
  });
}

const small = Number(args.small);
const large = Number(args.large);
const ms = Number(args.ms);
console.log(`bench:substring-index: ${RENAMED} SKUs renamed among ${small} and ${large} names, three rounds of ${ms} ms`);
for (const [name, make] of [['a Set per trigram (baseline)', () => new SetIndex()], ['SubstringIndex', () => new SubstringIndex<string>()]] as const) {
  const a = renames(make(), small, ms);
  const b = renames(make(), large, ms);
  const rounds = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  console.log(`${name.padEnd(30)} µs a rename: ${rounds(a)} at ${small}, ${rounds(b)} at ${large}: large / small ${(b[2]! / a[2]!).toFixed(2)}`);
}
