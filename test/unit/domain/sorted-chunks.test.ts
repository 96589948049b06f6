import t from 'tap';
import fc from 'fast-check';
import { SortedChunks } from '../../../src/domain/list/index.js';

const byNumber = (a: number, b: number) => a - b;

t.test('property: SortedChunks holds what a sorted array would, through inserts, removals and loads', async (t) => {
  const step = fc.oneof(
    fc.integer({ min: 0, max: 60 }).map((x) => ({ op: 'insert' as const, x })),
    fc.integer({ min: 0, max: 60 }).map((x) => ({ op: 'remove' as const, x })),
    fc.integer({ min: 0, max: 60 }).map((x) => ({ op: 'rank' as const, x })),
    fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }).map((xs) => ({ op: 'load' as const, xs })),
  );
  let checked = 0;
  fc.assert(fc.property(fc.integer({ min: 2, max: 6 }), fc.array(step, { maxLength: 200 }), (max, steps) => {
    const chunks = new SortedChunks<number>(byNumber, max);
    let model: number[] = [];
    for (const s of steps) {
      if (s.op === 'load') {
        model = [...s.xs].sort(byNumber);
        chunks.load(model);
      } else if (s.op === 'insert') {
        if (model.includes(s.x)) continue;
        model.push(s.x);
        model.sort(byNumber);
        chunks.insert(s.x);
      } else if (s.op === 'remove') {
        const held = model.includes(s.x);
        model = model.filter((x) => x !== s.x);
        if (chunks.remove(s.x) !== held) throw new Error(`remove(${s.x}) answered ${!held}`);
      } else if (chunks.rank(s.x) !== model.filter((x) => x < s.x).length) {
        throw new Error(`rank(${s.x}) is ${chunks.rank(s.x)}`);
      }
      const parts = chunks.parts;
      if (parts.some((part) => part.length === 0 || part.length > max)) throw new Error(`chunk sizes ${parts.map((p) => p.length)} with max ${max}`);
      if (JSON.stringify(chunks.toArray()) !== JSON.stringify(model) || JSON.stringify([...chunks]) !== JSON.stringify(model) || chunks.size !== model.length) {
        throw new Error(`holds ${JSON.stringify(chunks.toArray())}, expected ${JSON.stringify(model)}`);
      }
      // Removals never leave more chunks than twice the fewest that could hold the items.
      if (parts.length > (2 * model.length) / max + 1) throw new Error(`${parts.length} chunks for ${model.length} items`);
      checked++;
    }
    return true;
  }), { numRuns: 300 });
  t.ok(checked > 1000, `${checked} states compared`);
});

t.test('SortedChunks: a new item moves one chunk at most; removals leave no crowd of small chunks', async (t) => {
  const chunks = new SortedChunks<string>((a, b) => (a < b ? -1 : a > b ? 1 : 0), 64);
  chunks.load(Array.from({ length: 10_000 }, (_, i) => `id-${String(i * 2).padStart(6, '0')}`));
  chunks.insert('id-000001');
  t.ok(chunks.parts.every((part) => part.length <= 64), 'no chunk above its size');
  t.equal(chunks.rank('id-000001'), 1);
  t.equal(chunks.rank('id-000002'), 2);
  t.equal(chunks.size, 10_001);
  t.notOk(chunks.remove('id-000003'), 'an item not held');
  t.throws(() => chunks.load(['b', 'a']), /not sorted/);

  // Five of every six removed: the chunks left small join their neighbours.
  const sparse = new SortedChunks<number>(byNumber, 6);
  sparse.load(Array.from({ length: 600 }, (_, i) => i));
  for (let i = 0; i < 600; i++) if (i % 6 !== 0) sparse.remove(i);
  t.equal(sparse.size, 100);
  t.ok(sparse.parts.length <= (2 * 100) / 6 + 1, `${sparse.parts.length} chunks hold 100 items`);
  t.throws(() => new SortedChunks(byNumber, 1), /at least 2/);
});
