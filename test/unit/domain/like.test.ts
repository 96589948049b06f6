// `__ilike` matching (src/domain/list/like.ts): the same answers as the definition of a `%`
// pattern, and linear whatever the pattern, hostile ones included (they blocked the event loop
// for 95 s when built into a regular expression).
import t from 'tap';
import fc from 'fast-check';
import { likeMatcher } from '../../../src/domain/list/like.js';

/** The definition, by dynamic programming over (pattern, value) prefixes: slow and obviously right. */
function reference(pattern: string, value: string): boolean {
  const p = pattern.length;
  const v = value.length;
  let row = new Array<boolean>(v + 1).fill(false);
  row[0] = true;
  for (let i = 1; i <= p; i++) {
    const next = new Array<boolean>(v + 1).fill(false);
    const c = pattern[i - 1];
    if (c === '%') {
      next[0] = row[0]!;
      for (let j = 1; j <= v; j++) next[j] = next[j - 1]! || row[j]!;
    } else {
      for (let j = 1; j <= v; j++) next[j] = row[j - 1]! && value[j - 1] === c;
    }
    row = next;
  }
  return row[v]!;
}

t.test('a % pattern matches exactly what its definition says', async (t) => {
  const text = (chars: string[], max: number) => fc.array(fc.constantFrom(...chars), { maxLength: max }).map((a) => a.join(''));
  const seed = Number(process.env.LIKE_SEED ?? Date.now() % 2 ** 31);
  t.comment(`seed ${seed} (replay: LIKE_SEED=${seed})`);
  fc.assert(fc.property(text(['a', 'b', '%', '.', '*'], 12), text(['a', 'b', '.', '*'], 16), (pattern, value) => {
    if (!pattern.includes('%')) return true;
    return likeMatcher(pattern)(value) === reference(pattern, value);
  }), { seed, numRuns: 20_000 });
  t.pass('20,000 patterns and values agree');
});

t.test('hostile patterns are answered in one pass over the value', async (t) => {
  const long = 'a'.repeat(200_000);
  // Each would take exponential time as a backtracking regular expression (`^.*a.*a…b$`).
  const cases: [string, boolean][] = [['%a'.repeat(8) + 'b', false], ['%a%a%a%a%a%a%a%a%a%a%a%a%', true], ['%' + 'a%'.repeat(500) + 'c', false], ['%'.repeat(10_000), true]];
  for (const [pattern, want] of cases) t.equal(likeMatcher(pattern)(long), want, pattern.slice(0, 30));
});
