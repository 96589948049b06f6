// npm run bench:sorted-chunks [-- --ids 200000 --ms 1000]
//
// A new SKU's id into the key-ordered ids, as the SKU table does on each commit:
// spliced into one array (the baseline) against inserted into SortedChunks, each while the
// heap is quiet and while other code allocates and keeps objects (as under the API's load,
// when the garbage collector marks most of the time). Prints µs an insert and the ratio.
import { parseArgs } from 'node:util';
import { lowerBound, SortedChunks } from '../src/domain/list/sorted-chunks.js';
import { compareKeys } from '../src/store/collection.js';

const { values: args } = parseArgs({ options: { ids: { type: 'string', default: '200000' }, ms: { type: 'string', default: '1000' } } });
const IDS = Number(args.ids);
const MS = Number(args.ms);

const start = Array.from({ length: IDS }, (_, i) => `LOAD-bench-${i}`).sort(compareKeys);
let kept: object[] = [];
let serial = 0;

/** Inserts new ids for MS milliseconds; µs an insert. */
function measure(insert: (id: string) => void, pressure: boolean): number {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < MS) {
    // Ids that land among the others, not at the end (a suffix on a spread of serials).
    insert(`LOAD-bench-${(serial++ * 7919) % IDS}x`);
    n++;
    if (pressure) {
      for (let k = 0; k < 20; k++) kept.push({ k, s: `x${k}` });
      if (kept.length > 2_000_000) kept = [];
    }
  }
  return ((performance.now() - t0) * 1000) / n;
}

const array = [...start];
const spliced = (id: string) => array.splice(lowerBound(array, id, compareKeys), 0, id);
const chunks = new SortedChunks<string>(compareKeys);
chunks.load(start);
const chunked = (id: string) => chunks.insert(id);

console.log(`bench:sorted-chunks: ${IDS} ids to start, ${MS} ms a phase, ids inserted among the others`);
for (const pressure of [false, true, false, true]) {
  const a = measure(spliced, pressure);
  const b = measure(chunked, pressure);
  console.log(`${pressure ? 'allocating' : 'quiet     '}  one array ${a.toFixed(2)} µs an insert, chunks ${b.toFixed(2)} µs: ${(a / b).toFixed(1)}x (${array.length} / ${chunks.size} ids)`);
}
