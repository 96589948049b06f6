import t from 'tap';
import fc from 'fast-check';
import { NumberSet } from '../../../src/domain/list/number-set.js';

t.test('property: NumberSet holds what a Set would, through runs of adds and deletes that make it a bitmap and back', async (t) => {
  // Runs of numbers, so that a set grows dense enough to become a bitmap and thin enough to
  // become a Set again, within one case.
  const run = fc.record({ op: fc.constantFrom('add' as const, 'delete' as const), from: fc.integer({ min: 0, max: 3000 }), length: fc.integer({ min: 1, max: 400 }), step: fc.integer({ min: 1, max: 7 }) });
  // All but a few deleted: thin enough for a bitmap to turn back into a Set.
  const thin = fc.record({ op: fc.constant('thin' as const), keep: fc.integer({ min: 0, max: 12 }) });
  let checked = 0;
  fc.assert(fc.property(fc.array(fc.oneof(run, run, thin), { maxLength: 30 }), (runs) => {
    const set = new NumberSet();
    const model = new Set<number>();
    for (const r of runs) {
      if (r.op === 'thin') {
        for (const n of [...model].slice(r.keep)) {
          set.delete(n);
          model.delete(n);
        }
        const got = [...set].sort((a, b) => a - b).join();
        if (got !== [...model].sort((a, b) => a - b).join()) throw new Error(`holds ${got} after thinning to ${model.size}`);
        for (let n = 0; n < 6000; n++) if (set.has(n) !== model.has(n)) throw new Error(`has(${n}) answered ${set.has(n)} after thinning`);
        checked++;
        continue;
      }
      for (let i = 0; i < r.length; i++) {
        const n = r.from + i * r.step;
        if (r.op === 'add') {
          set.add(n);
          model.add(n);
        } else {
          set.delete(n);
          model.delete(n);
        }
        if (set.size !== model.size) throw new Error(`size ${set.size}, want ${model.size} after ${r.op} ${n}`);
      }
      for (let n = Math.max(0, r.from - 40); n < r.from + r.length * r.step + 40; n++) {
        if (set.has(n) !== model.has(n)) throw new Error(`has(${n}) answered ${set.has(n)}`);
      }
      const got = [...set].sort((a, b) => a - b);
      const want = [...model].sort((a, b) => a - b);
      if (got.join() !== want.join()) throw new Error(`holds ${got.length} numbers, want ${want.length}`);
      checked++;
    }
    return true;
  }), { numRuns: 300 });
  t.ok(checked > 1000, `${checked} runs and thinnings checked against a Set`);
});

t.test('NumberSet becomes a bitmap when dense and a Set again when thin (seen in its order)', async (t) => {
  const set = new NumberSet();
  for (let n = 99; n >= 0; n--) set.add(n);
  t.same([...set], Array.from({ length: 100 }, (_, i) => i), 'a hundred of the first hundred: a bitmap, read in ascending order');
  t.notOk(set.has(100), 'beyond the bitmap');
  set.add(10_000);
  t.equal(set.size, 101);
  t.same([...set].slice(-2), [99, 10_000], 'grown to hold a number far past the rest');
  for (let n = 0; n < 80; n++) set.delete(n);
  t.equal(set.size, 21);
  set.add(5);
  set.add(3);
  t.same([...set].slice(-2), [5, 3], 'one in 500 below the bound: a Set again, read in the order added');
  set.delete(10_000);
  set.delete(10_000);
  t.equal(set.size, 22, 'a number deleted twice counts once');
  t.notOk(set.has(10_000));
});
