// TurnBudget (src/http/turn-budget.ts, issue 22): request handling past a turn's budget waits
// for later turns, in order, and each later turn lets requests in only while its own budget
// lasts, so no turn runs every waiting request back to back.
import t from 'tap';
import Type from 'typebox';
import { TurnBudget } from '../../../src/http/turn-budget.js';
import { route } from '../../../src/http/route.js';
import type { Caller } from '../../../src/domain/auth/caller.js';
import { startServer } from '../../helpers/server.js';

/** Runs the CPU for `ms` (a handler's work). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Counts event-loop turns while `run` goes on: the number of the turn an observer is in. */
async function countingTurns<T>(run: (turn: () => number) => Promise<T>): Promise<T> {
  let turn = 0;
  let on = true;
  const tick = (): void => {
    turn++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return await run(() => turn);
  } finally {
    on = false;
  }
}

t.test('within its budget a turn runs requests at once; past it they wait, in order', async (t) => {
  const turns = new TurnBudget(5);
  t.equal(turns.slot(), undefined, 'the first request of a turn runs at once');
  busy(6);
  const order: number[] = [];
  const waits = [1, 2, 3].map((n) => turns.slot()!.then(() => order.push(n)));
  t.equal(waits.length, 3);
  t.equal(turns.deferred, 3, 'three requests wait');
  await Promise.all(waits);
  t.same(order, [1, 2, 3], 'let in in the order they came');
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(turns.slot(), undefined, 'a later turn with nothing waiting runs requests at once again');
});

t.test('a later turn lets requests in only while its budget lasts', async (t) => {
  const turns = new TurnBudget(5);
  await countingTurns(async (turn) => {
    turns.slot();
    busy(6);
    // Six dear requests (8 ms each) and then ten cheap ones.
    const admittedIn: number[] = [];
    const dear = Array.from({ length: 6 }, () => turns.slot()!.then(() => {
      admittedIn.push(turn());
      busy(8);
    }));
    const cheap: number[] = [];
    const light = Array.from({ length: 10 }, () => turns.slot()!.then(() => void cheap.push(turn())));
    await Promise.all([...dear, ...light]);
    t.equal(new Set(admittedIn).size, 6, `each dear request in a turn of its own (turns ${admittedIn.join(', ')})`);
    t.ok(new Set(cheap).size < cheap.length, `the cheap ones share turns (turns ${cheap.join(', ')})`);
  });
});

t.test('requests keep coming while others wait: they queue behind, never ahead', async (t) => {
  const turns = new TurnBudget(2);
  turns.slot();
  busy(3);
  const order: string[] = [];
  const first = turns.slot()!.then(() => {
    order.push('first');
    busy(3);
  });
  await new Promise((resolve) => setImmediate(resolve));
  // A new turn with budget left, but a request still waits: the new one goes behind it.
  const second = turns.slot();
  t.ok(second, 'queued although its turn has budget');
  await Promise.all([first, second!.then(() => order.push('second'))]);
  t.same(order, ['first', 'second']);
});

t.test('a server whose every request waits for a later turn still answers each, body and all', async (t) => {
  const caller: Caller = { kind: 'user', id: 1, permissions: new Set(['echo']), authorityLevel: 1 };
  const echo = route({
    method: 'POST', path: '/api/v2/echo', tag: 'test', permission: 'echo', summary: 'echo',
    body: Type.Object({ n: Type.Integer() }), responses: { 200: Type.Object({ n: Type.Integer() }) },
    handler: ({ body }) => {
      busy(1);
      return body;
    },
  });
  const s = await startServer([echo], { authenticate: async () => caller, turnBudgetMs: 0 });
  t.teardown(() => s.close());
  const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => s.client.request('/api/v2/echo', { method: 'POST', json: { n }, headers: { authorization: 'Bearer x' } })));
  t.same(answers.map((a) => a.status), answers.map(() => 200), 'every request answered');
  t.same(answers.map((a) => a.json.n), answers.map((_, n) => n), 'each with its own body');
  t.ok(s.server.turns.deferred > 0, `requests waited for later turns (${s.server.turns.deferred})`);
});
