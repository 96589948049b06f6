// The boxes a request takes from (src/domain/requests/box-choice.ts): judging them lazily, oldest
// first, and stopping once the choice is settled gives the same boxes as judging every one and
// sorting them (as the planner once did), and judges far fewer when stock is plenty.
import t from 'tap';
import fc from 'fast-check';
import { chooseBoxes, oldestFirst, type Offer } from '../../../src/domain/requests/box-choice.js';

interface Box {
  id: number;
  /** Its level's open work, or undefined: not on a level of an allowed balcony. */
  work: number | undefined;
  /** Carrier moves it needs, or undefined: other work holds its carrier. */
  moves: number | undefined;
  brought: boolean;
  free: number;
}

/** The boxes taken for `quantity`, in order, from a list best first. */
function taken(best: readonly { box: Box; free: number }[], quantity: number): number[] {
  const out: number[] = [];
  let left = quantity;
  for (const c of best) {
    if (left <= 0) break;
    left -= Math.min(left, c.free);
    out.push(c.box.id);
  }
  return out;
}

/** Every box judged and sorted: the plan's order by definition. */
function reference(boxes: readonly Box[]): { best: { box: Box; free: number }[]; available: number } {
  const usable = boxes
    .map((box, order) => ({ box, free: box.free, order, moves: box.brought ? 0 : box.moves! }))
    .filter((c) => c.box.work !== undefined && c.box.moves !== undefined);
  usable.sort((a, b) => a.moves - b.moves || a.box.work! - b.box.work! || a.order - b.order);
  return { best: usable, available: usable.reduce((n, c) => n + c.free, 0) };
}

const box = fc.record({
  work: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  moves: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  brought: fc.boolean(),
  free: fc.integer({ min: 1, max: 5 }),
});

t.test('the lazy choice takes the same boxes as judging every one', async (t) => {
  const seed = Number(process.env.BOX_CHOICE_SEED ?? Date.now() % 2 ** 31);
  t.comment(`seed ${seed} (replay: BOX_CHOICE_SEED=${seed})`);
  fc.assert(fc.property(fc.array(box, { maxLength: 40 }), fc.integer({ min: 1, max: 30 }), (drawn, quantity) => {
    // The list is in the order of age; brought boxes keep theirs among themselves.
    const boxes: Box[] = drawn.map((b, id) => ({ ...b, id }));
    const works = boxes.flatMap((b) => (b.work === undefined ? [] : [b.work]));
    const leastWork = works.length > 0 ? Math.min(...works) : 0;
    const offer = (b: Box): Offer<Box> => ({ box: b, free: b.free });
    const got = chooseBoxes(
      boxes.filter((b) => b.brought).map(offer), boxes.filter((b) => !b.brought).map(offer), quantity, () => leastWork,
      (b) => (b.work === undefined ? undefined : { work: b.work }), (b) => (b.moves === undefined ? undefined : b.brought ? 0 : b.moves),
    );
    const want = reference([...boxes.filter((b) => b.brought), ...boxes.filter((b) => !b.brought)]);
    if (JSON.stringify(taken(got.best, quantity)) !== JSON.stringify(taken(want.best, quantity))) return false;
    return want.available < quantity ? got.available === want.available : got.available >= quantity;
  }), { seed, numRuns: 20_000 });
});

t.test('with stock on the least busy level, only the boxes up to the first that settles it are judged', async (t) => {
  // 1,000 boxes of one move each on two levels; the first of the quiet level is the 6th.
  const boxes = Array.from({ length: 1000 }, (_, id) => ({ id, work: id === 5 || id > 500 ? 1 : 7 }));
  let counted = 0;
  const got = chooseBoxes([], boxes.map((b) => ({ box: b, free: 3 })), 3, () => 1, (b) => ({ work: b.work }), () => {
    counted++;
    return 1;
  });
  t.same(taken(got.best as never, 3), [5], 'the box of the quiet level');
  t.equal(counted, 1, 'moves counted for that box alone: the busy level\'s five before it were only weighed');
});

t.test('boxes of several lists merge oldest first, then by id, reading each only as far as taken', async (t) => {
  let read = 0;
  const list = (items: [number, number][]) => (function* () {
    for (const [updated_at, id] of items) {
      read++;
      yield { updated_at, id };
    }
  })();
  const merged = oldestFirst([list([[1, 4], [3, 1], [9, 2]]), list([[1, 2], [2, 8]]), list([])]);
  const first = [];
  for (const b of merged) {
    first.push(b.id);
    if (first.length === 3) break;
  }
  t.same(first, [2, 4, 8], 'age first, the id between equals');
  t.equal(read, 4, 'one box read ahead in the lists, not all of them');
});
