// The realtime level planner through the addon: the plan validator's binding, the level
// thread's API (refusals, non-blocking inputs, close), faults, pauses, goals that stay, and a
// property run in which a simulated level executes the released actions with random delays,
// late, repeated and out-of-step telemetry, faults, pauses, bots added and removed, goals set,
// changed and cancelled, and cell flags changed. The simulator checks, independently of the
// planner, that no bot is ever given an action before what it depends on was confirmed by
// telemetry and that no two bots are ever in one cell; the planner replays its own plan in the
// independent validator (option `validate`).
import t from 'tap';
import fc from 'fast-check';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  CELL_BARRED_LOADED,
  CELL_BLOCKED,
  createLevelPlanner,
  validatePlan,
  type LevelPlanner,
  type LevelPlannerOptions,
  type PlanState,
  type PlannedAction,
  type PlannerEvent,
  type PlannerGrid,
  type PlannerHeading,
} from '../../../src/native/planner.js';
import { until } from '../../helpers/until.js';
import { seeded } from '../../helpers/seeded.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const same = (a: PlanState, b: PlanState): boolean => a.cell === b.cell && a.heading === b.heading && a.lifted === b.lifted;
const at = (cell: number, heading: PlannerHeading = 0, lifted = false): PlanState => ({ cell, heading, lifted });

function openGrid(width: number, height: number, blocked: number[] = []): PlannerGrid {
  const flags = new Uint8Array(width * height);
  for (const c of blocked) flags[c] = CELL_BLOCKED;
  return { width, height, flags };
}

/**
 * Collects a planner's output for tests that script a scenario; the bots in `executing` carry
 * out what they are given at once (each action's end state reported once, as telemetry would).
 */
function recorder(lp: LevelPlanner) {
  const commands: PlannedAction[] = [];
  const events: PlannerEvent[] = [];
  const executing = new Set<number>();
  lp.onCommands((batch) => {
    commands.push(...batch);
    for (const c of batch) if (executing.has(c.bot)) lp.reportTelemetry(c.bot, c.to);
  });
  lp.onEvent((batch) => events.push(...batch));
  return { commands, events, executing };
}

t.test('validatePlan replays a plan in the independent validator', async (t) => {
  const line = openGrid(4, 1);
  const follow = validatePlan(line, [{ bot: 1, ...at(1) }, { bot: 2, ...at(0) }], [
    [{ bot: 1, action: 'forward' }, { bot: 2, action: 'forward' }],
    [{ bot: 1, action: 'forward' }, { bot: 2, action: 'forward' }],
  ]);
  t.same(follow, { count: 0, violations: [] }, 'two bots following each other down a corridor');

  const vertex = validatePlan(line, [{ bot: 1, ...at(0) }, { bot: 2, ...at(2, 2) }], [[{ bot: 1, action: 'forward' }, { bot: 2, action: 'forward' }]]);
  t.equal(vertex.count, 1);
  t.match(vertex.violations[0], { rule: 'vertex', cell: 1, step: 1 });

  const swap = validatePlan(line, [{ bot: 1, ...at(1) }, { bot: 2, ...at(2, 2) }], [[{ bot: 1, action: 'forward' }, { bot: 2, action: 'forward' }]]);
  t.equal(swap.violations[0]?.rule, 'swap');

  const wall = validatePlan(openGrid(3, 1, [1]), [{ bot: 1, ...at(0) }], [[{ bot: 1, action: 'forward' }]]);
  t.equal(wall.violations[0]?.rule, 'blocked-cell');

  const barred = openGrid(3, 1);
  barred.flags[1] = CELL_BARRED_LOADED;
  t.equal(validatePlan(barred, [{ bot: 1, ...at(0, 0, true) }], [[{ bot: 1, action: 'forward' }]]).violations[0]?.rule, 'barred-loaded');
  t.equal(validatePlan(barred, [{ bot: 1, ...at(0) }], [[{ bot: 1, action: 'forward' }]]).count, 0, 'an empty bot passes a barred cell');

  // four bots turning a 2 x 2 ring at once: allowed by LoRR, not by an action dependency graph
  const square = openGrid(2, 2);
  const ring = [{ bot: 1, ...at(0, 0) }, { bot: 2, ...at(1, 1) }, { bot: 3, ...at(3, 2) }, { bot: 4, ...at(2, 3) }];
  const rotate = [[1, 2, 3, 4].map((bot) => ({ bot, action: 'forward' as const }))];
  t.equal(validatePlan(square, ring, rotate).count, 0, 'a ring is fine without forbidCycles');
  t.equal(validatePlan(square, ring, rotate, { forbidCycles: true }).violations[0]?.rule, 'cycle');

  const slow = validatePlan(line, [{ bot: 1, ...at(0) }], [[{ bot: 1, action: 'forward' }], [{ bot: 1, action: 'turn_left' }]], { durations: { forward: 2 } });
  t.equal(slow.violations[0]?.rule, 'duration', 'a two-step move cannot be cut short');
  const lie = validatePlan(line, [{ bot: 1, ...at(0) }], [[{ bot: 1, action: 'forward', after: at(2) }]]);
  t.equal(lie.violations[0]?.rule, 'state-mismatch');

  t.throws(() => validatePlan(line, [{ bot: 1, ...at(0) }], [[{ bot: 1, action: 'jump' as 'wait' }]]), TypeError);
  t.throws(() => validatePlan({ width: 4, height: 1, flags: new Uint8Array(3) }, [], []), RangeError);
});

t.test('inputs are checked at the call and refused by the level thread with a reason', async (t) => {
  const lp = createLevelPlanner();
  t.teardown(() => lp.close());
  const { events } = recorder(lp);
  t.throws(() => lp.addBot(-1, at(0)), RangeError);
  t.throws(() => lp.addBot(1, { cell: 0, heading: 4 as PlannerHeading, lifted: false }), RangeError);
  t.throws(() => lp.pauseBot(1, 'yes' as unknown as boolean), TypeError);
  t.throws(() => lp.setMap({ width: 3, height: 3, flags: new Uint8Array(8) }), RangeError);
  t.throws(() => createLevelPlanner({ window: 0 }), RangeError);

  lp.addBot(1, at(0));
  await until('no_map', async () => events.some((e) => e.kind === 'refused' && e.reason === 'no_map'));
  lp.setMap(openGrid(4, 2, [3]));
  lp.addBot(1, at(0));
  lp.addBot(1, at(1));
  lp.addBot(2, at(0));
  lp.addBot(3, at(3));
  lp.addBot(4, at(99));
  lp.setGoal(9, { cell: 1 });
  lp.setGoal(1, { cell: 3 });
  lp.reportTelemetry(9, at(2));
  await until('the refusals', async () => events.filter((e) => e.kind === 'refused').length >= 8);
  const refused = events.filter((e) => e.kind === 'refused').map((e) => e.kind === 'refused' && `${e.op} ${e.bot} ${e.reason}`);
  t.same(refused, [
    'add_bot 1 no_map',
    'add_bot 1 bot_exists',
    'add_bot 2 cell_taken',
    'add_bot 3 cell_blocked',
    'add_bot 4 cell_blocked',
    'set_goal 9 unknown_bot',
    'set_goal 1 cell_blocked',
    'report_telemetry 9 unknown_bot',
  ]);
  t.same(events.filter((e) => e.kind === 'bot_added'), [{ kind: 'bot_added', bot: 1, state: at(0) }]);
  t.equal(lp.stats().refused, 8);
});

t.test('calls never wait for the level thread: they queue while it is suspended', async (t) => {
  const w = 20;
  const lp = createLevelPlanner({ grid: openGrid(w, w), validate: true });
  t.teardown(() => lp.close());
  const { commands, events } = recorder(lp);
  await until('the map', async () => lp.stats().hasMap);
  lp.suspend(true);
  await until('the thread to park', async () => lp.stats().suspended);
  // Were any of these to wait for planning, the test would hang here (the thread is parked).
  for (let i = 0; i < 100; i++) lp.addBot(i, at(i * 4));
  for (let i = 0; i < 100; i++) lp.setGoal(i, { cell: w * w - 1 - i * 4 });
  for (let i = 0; i < 1000; i++) lp.reportTelemetry(i % 100, at(i % 100 * 4));
  const s = lp.stats();
  t.equal(s.inputsWaiting, 1200, 'every input is queued, none applied');
  t.equal(s.bots, 0);
  await turn();
  t.equal(commands.length + events.length, 0, 'nothing delivered while suspended');
  lp.suspend(false);
  await until('the first commands', async () => commands.length > 0);
  t.equal(lp.stats().bots, 100);
  t.equal(lp.stats().violations, 0);
});

t.test('a stuck bot: its cells are avoided until it reports and is released', async (t) => {
  // 5 x 3, all open. Bot 1 crosses the middle row; bot 2 goes from the top left corner to the
  // bottom right one.
  const lp = createLevelPlanner({ grid: openGrid(5, 3), validate: true, idleStepMs: 5 });
  t.teardown(() => lp.close());
  const { commands, events, executing } = recorder(lp);
  lp.addBot(1, at(5));
  lp.setGoal(1, { cell: 9 });
  await until('bot 1 moves', async () => commands.find((c) => c.bot === 1));
  const first = commands.find((c) => c.bot === 1)!;
  t.match(first, { action: 'forward', from: at(5), to: at(6) });
  // It faults on the way: the planner cannot know whether it reached cell 6.
  lp.setStuck(1, true);
  await until('the hold', async () => lp.stats().heldCells === 1);
  const seen = commands.length;
  executing.add(2);
  lp.addBot(2, at(0));
  lp.setGoal(2, { cell: 14 });
  await until('bot 2 arrives', async () => events.some((e) => e.kind === 'goal_reached' && e.bot === 2));
  const entered = commands.slice(seen).filter((c) => c.bot === 2 && c.action === 'forward').map((c) => c.to.cell);
  t.notOk(entered.includes(5) || entered.includes(6), `bot 2 kept off cells 5 and 6 (went through ${entered.join(',')})`);
  t.notOk(commands.slice(seen).some((c) => c.bot === 1), 'nothing for the stuck bot');
  // Telemetry says it did reach cell 6; released, it goes on from there.
  executing.add(1);
  lp.reportTelemetry(1, at(6));
  lp.setStuck(1, false);
  await until('bot 1 arrives', async () => events.some((e) => e.kind === 'goal_reached' && e.bot === 1));
  t.match(commands.slice(seen).find((c) => c.bot === 1), { from: at(6) }, 'planned again from where telemetry put it');
  t.match(lp.stats(), { heldCells: 0, violations: 0, deviations: 0 });
});

t.test('a stuck bot given several moves holds the cells it may be on until it reports at rest on one', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(8, 1), validate: true, idleStepMs: 5, maxReleasedActions: 3 });
  t.teardown(() => lp.close());
  const { commands } = recorder(lp);
  lp.addBot(1, at(0));
  lp.setGoal(1, { cell: 7 });
  await until('three moves given', async () => commands.filter((c) => c.bot === 1).length === 3);
  t.same(commands.map((c) => c.to.cell), [1, 2, 3]);
  // It faults somewhere along them: all three cells are its own.
  lp.setStuck(1, true);
  await until('the hold', async () => lp.stats().heldCells === 3);
  // At rest on the first: the two ahead are free again (a bot sent to them is not refused).
  lp.reportTelemetry(1, at(1));
  await until('the hold narrowed', async () => lp.stats().heldCells === 1);
  // A report somewhere it cannot be leaves the hold as it is.
  lp.reportTelemetry(1, at(6));
  await turn();
  await new Promise((r) => setTimeout(r, 50));
  t.equal(lp.stats().heldCells, 1);
  lp.reportTelemetry(1, at(1));
  lp.setStuck(1, false);
  await until('released', async () => lp.stats().heldCells === 0);
  t.match(lp.stats(), { violations: 0 });
});

t.test('stats name the bot whose unconfirmed action holds the planning window shut', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(12, 2), validate: true, idleStepMs: 5, heldUpMs: 100 });
  t.teardown(() => lp.close());
  const { commands, events, executing } = recorder(lp);
  executing.add(1);
  lp.addBot(1, at(12));
  lp.addBot(2, at(0));
  lp.setGoal(1, { cell: 23 });
  // Bot 2 is given its first move and never confirms it: the plan cannot run ahead of it.
  lp.setGoal(2, { cell: 11 });
  await until('bot 2 is given a move', async () => commands.some((c) => c.bot === 2));
  await until('the window waits on bot 2', async () => lp.stats().windowWaitMs > 50);
  const s = lp.stats();
  t.equal(s.heldUpBy[0]?.bot, 2, `held up by ${JSON.stringify(s.heldUpBy)}`);
  t.ok(s.heldUpBy[0]!.ms <= s.windowWaitMs + 1e-6, 'no bot waited on longer than the window was shut');
  // Told once, even though no input comes meanwhile.
  const told = await until('the hold is told', async () => events.find((e) => e.kind === 'held_up'));
  t.match(told, { kind: 'held_up', bot: 2, action: 'forward', from: 0, to: { cell: 1 }, released: true, step: 0 });
  t.ok(told.kind === 'held_up' && told.ms >= 100);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(events.filter((e) => e.kind === 'held_up').length, 1, 'once per hold');
  t.notOk(events.some((e) => e.kind === 'goal_reached' && e.bot === 2));
  // Its confirmation opens the window again: the waits stop growing on its account alone.
  executing.add(2);
  const last = commands.filter((c) => c.bot === 2).at(-1)!;
  lp.reportTelemetry(2, last.to);
  await until('bot 2 arrives', async () => events.some((e) => e.kind === 'goal_reached' && e.bot === 2));
  t.match(lp.stats(), { violations: 0, deviations: 0 });
});

t.test('a goal with lift and stay: the bot lifts there and stays until its next goal', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(4, 2), validate: true, idleStepMs: 5 });
  t.teardown(() => lp.close());
  const { commands, events, executing } = recorder(lp);
  executing.add(1).add(2);
  lp.addBot(1, at(0));
  lp.addBot(2, at(3, 2));
  lp.setGoal(1, { cell: 2, act: 'lift', stay: true });
  await until('bot 1 at its goal', async () => events.find((e) => e.kind === 'goal_reached' && e.bot === 1));
  t.match(commands.filter((c) => c.bot === 1).at(-1), { action: 'lift', to: { cell: 2, lifted: true } });
  // Bot 2 wants to pass through cell 2: it goes around the bot that stays.
  lp.setGoal(2, { cell: 1 });
  await until('bot 2 arrives', async () => events.find((e) => e.kind === 'goal_reached' && e.bot === 2));
  t.notOk(commands.some((c) => c.bot === 2 && c.to.cell === 2), 'bot 2 went round');
  t.notOk(commands.some((c) => c.bot === 1 && c.action !== 'lift' && c.from.lifted), 'bot 1 stayed');
  lp.setGoal(1, { cell: 7, act: 'lower' });
  await until('bot 1 set it down', async () => events.filter((e) => e.kind === 'goal_reached' && e.bot === 1).length === 2);
  t.match(commands.filter((c) => c.bot === 1).at(-1), { action: 'lower', to: { cell: 7, lifted: false } });
  t.match(lp.stats(), { violations: 0, deviations: 0 });
});

t.test('a loaded bot sent to a cell just freed is not told it cannot reach it by a table searched while the cell was barred', async (t) => {
  // Cell 4 holds a carrier: barred to loaded bots. Bot 2, loaded, is sent there and rightly
  // told it cannot; its table (searched while 4 was barred) stays cached while it holds it.
  const flags = new Uint8Array(10);
  flags[4] = CELL_BARRED_LOADED;
  // A step budget too short to search stale tables again, as on a busy level.
  const lp = createLevelPlanner({ grid: { width: 5, height: 2, flags }, validate: true, idleStepMs: 5, stepBudgetMs: 1 });
  t.teardown(() => lp.close());
  const { events, executing } = recorder(lp);
  executing.add(1).add(2);
  lp.addBot(1, at(5, 0, true));
  lp.addBot(2, at(9, 2, true));
  lp.setGoal(2, { cell: 4, act: 'lower' });
  await until('bot 2 told cell 4 is out of its reach', async () => events.find((e) => e.kind === 'goal_unreachable' && e.bot === 2));
  // The carrier is taken away and bot 1 is sent there in the same step: the cached table
  // predates the change, so it cannot say that there is no way.
  lp.suspend(true);
  await until('the thread to park', async () => lp.stats().suspended);
  lp.setCellFlags(4, 0);
  lp.setGoal(1, { cell: 4, act: 'lower' });
  lp.suspend(false);
  await until('bot 1 sets its carrier down on cell 4, or is told it cannot', async () => events.find((e) => (e.kind === 'goal_reached' || e.kind === 'goal_unreachable') && e.bot === 1));
  t.notOk(events.some((e) => e.kind === 'goal_unreachable' && e.bot === 1), 'no false "no path"');
  t.ok(events.some((e) => e.kind === 'goal_reached' && e.bot === 1));
  t.match(lp.stats(), { violations: 0 });
});

t.test('telemetry the plan does not explain: the bot is planned again from there', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(5, 1), validate: true, idleStepMs: 5 });
  t.teardown(() => lp.close());
  const { commands, events } = recorder(lp);
  lp.addBot(1, at(0));
  lp.addBot(2, at(4, 2));
  lp.setGoal(1, { cell: 3 });
  await until('a command', async () => commands.length > 0);
  // Someone pushed the bot one cell further by hand.
  lp.reportTelemetry(1, at(2));
  await until('the deviation', async () => events.find((e) => e.kind === 'deviation'));
  t.match(events.find((e) => e.kind === 'deviation'), { bot: 1, state: at(2), placed: true });
  // and then claims to be on bot 2's cell
  lp.reportTelemetry(1, at(4));
  await until('the refused deviation', async () => events.find((e) => e.kind === 'deviation' && !e.placed));
  t.match(lp.stats(), { deviations: 2, violations: 0 });
});

t.test('moves of two steps: a follower starts once the one ahead has arrived', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(7, 1), validate: true, durations: { forward: 2 }, idleStepMs: 5 });
  t.teardown(() => lp.close());
  const { commands, events, executing } = recorder(lp);
  executing.add(1).add(2);
  lp.addBot(1, at(1));
  lp.addBot(2, at(0));
  lp.setGoal(1, { cell: 6 });
  lp.setGoal(2, { cell: 5 });
  await until('both arrive', async () => events.filter((e) => e.kind === 'goal_reached').length === 2);
  t.ok(commands.every((c) => c.durationSteps === 2));
  // bot 2 enters a cell only after bot 1 has been confirmed out of it
  for (const c of commands.filter((x) => x.bot === 2)) {
    const leave = commands.findIndex((x) => x.bot === 1 && x.from.cell === c.to.cell);
    t.ok(leave >= 0 && leave < commands.indexOf(c), `bot 2 into ${c.to.cell} after bot 1 left it`);
  }
  t.match(lp.stats(), { violations: 0, deviations: 0 });
});

// The top of level 2 of the demo site (its first 13 rows, closed by a highway row) at the moment
// bench:site jammed (docs/benchmarks-site.md): loaded bots in the top-left corner, on the
// one-wide row 1 with side pockets, bound east for balconies (row 0) and west into pockets to
// set carriers down. S: storage spaces holding a carrier (barred to a loaded bot); B, P: balcony.
const JAM_LEVEL = [
  '#######BPPB##########BPPB#######',
  '#..............................#',
  '#..S.SSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#..SSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  'C.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#.SSSSSS.SSSS.SSSSSS.SSSS.SSSS.#',
  '#..............................#',
];

/** Runs the jam with `escapeBots`; every bot carries out its actions at once. */
async function jam(escapeBots: number, steps: number) {
  const width = JAM_LEVEL[0]!.length;
  const flags = new Uint8Array(width * JAM_LEVEL.length);
  JAM_LEVEL.forEach((row, y) => {
    for (let x = 0; x < width; x++) flags[y * width + x] = row[x] === '#' ? CELL_BLOCKED : row[x] === 'S' ? CELL_BARRED_LOADED : 0;
  });
  // seed and stall limit chosen so that without escapes the level livelocks (deterministic:
  // inputs applied at once, telemetry at once)
  const lp = createLevelPlanner({ grid: { width, height: JAM_LEVEL.length, flags }, validate: true, idleStepMs: 1, seed: 2, stallSteps: 8, escapeBots });
  const { events, executing } = recorder(lp);
  await until('the map', async () => lp.stats().hasMap);
  lp.suspend(true);
  await until('the thread to park', async () => lp.stats().suspended);
  const cell = (x: number, y: number) => y * width + x;
  // bot, at, heading, bound for (and what it does there); bot 11 has no goal
  const bots = [
    [11, 8, 4, 0], [12, 2, 2, 1, 22, 0], [13, 2, 1, 1, 9, 0], [14, 3, 1, 0, 4, 2, 'lower'],
    [15, 4, 1, 3, 2, 2, 'lower'], [17, 7, 1, 0, 2, 6, 'lower'], [18, 4, 2, 0, 8, 0], [19, 1, 1, 3, 23, 0],
  ] as const;
  for (const [id, x, y, heading] of bots) {
    lp.addBot(id, { cell: cell(x, y), heading: heading as PlannerHeading, lifted: true });
    executing.add(id);
  }
  for (const b of bots) if (b.length > 4) lp.setGoal(b[0], { cell: cell(b[4]!, b[5]!), act: b[6] ?? 'none' });
  lp.suspend(false);
  const reached = () => events.filter((e) => e.kind === 'goal_reached').length;
  await until('every goal or the step limit', async () => reached() === 7 || lp.stats().step >= steps, 60_000);
  const stats = lp.stats();
  await lp.close();
  return { reached: reached(), stats, events };
}

t.test('a livelock priority does not break: the bots around it follow a joint plan out (escape)', async (t) => {
  const off = await jam(0, 3000);
  t.ok(off.reached < 7, `without escapes: ${off.reached} of 7 goals after ${off.stats.step} steps, ${off.stats.stalls.detected} stalls`);
  t.equal(off.stats.escapes.planned, 0);
  const on = await jam(16, 3000);
  t.equal(on.reached, 7, `with escapes: every goal, after ${on.stats.step} steps`);
  t.ok(on.stats.escapes.done >= 1, 'an escape followed to the end');
  t.match(on.events.find((e) => e.kind === 'escaped'), { kind: 'escaped', bot: Number, cell: Number, bots: Number, step: Number });
  t.match(on.stats, { violations: 0, deviations: 0 });
});

t.test('close: no callback after it, inputs after it are ignored, it settles once', async (t) => {
  const lp = createLevelPlanner({ grid: openGrid(8, 8), stepBudgetMs: 5 });
  let after = 0;
  let closed = false;
  lp.onCommands(() => {
    if (closed) after++;
  });
  lp.onEvent(() => {
    if (closed) after++;
  });
  for (let i = 0; i < 8; i++) {
    lp.addBot(i, at(i * 8));
    lp.setGoal(i, { cell: i * 8 + 7 });
  }
  const closing = lp.close();
  closed = true;
  t.equal(lp.close(), closing, 'the same promise');
  lp.addBot(20, at(5));
  lp.reportTelemetry(1, at(9));
  await closing;
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(after, 0);
  t.type(lp.stats().steps, 'number', 'stats still read after close');
});

// ---- the simulated level ----

interface SimGoal {
  tag: number;                // what setGoal returned
  cell: number;
  act: 'none' | 'lift' | 'lower';
  stay: boolean;
  reached: boolean;
}

interface SimBot {
  id: number;
  pos: PlanState;             // physically, at rest or where the running action started
  running?: PlannedAction;    // holds pos.cell and running.to.cell
  inbox: PlannedAction[];     // received, not started
  reported: PlanState;        // the last telemetry sent
  visited: Set<string>;       // `${cell}:${lifted}` at rest since the goal was set
  speed: number;              // chance per turn to start or finish an action
  stuck: boolean;
  stuckTurns: number;
  reportedWhileStuck: boolean;
  paused: boolean;
  goal?: SimGoal;
  staleGoals: Set<number>;    // goals replaced or cancelled: a goal_reached for them may still arrive
  goalsLeft: number;
  history: string[];          // the latest exchanges, for the report of a failure
}

interface Scenario {
  seed: number;
  width: number;
  height: number;
  wallPercent: number;
  bots: number;
  goalsPerBot: number;
  window: number;
  maxReleasedActions: number;
  turn: number;
  lift: number;
  faults: boolean;
  churn: boolean;
  flags: boolean;
}

/**
 * Single-cell pillars (walls, and cells barred to loaded bots), never next to each other, nor
 * diagonally, nor on the border: every free cell then lies on a cycle, which is what PIBT needs
 * to get every bot to its goal (a bot idling at the end of a dead-end pocket cannot be pushed
 * out past the one that wants to get in: a limit of the planning algorithm, not of execution).
 */
function makeMap(rnd: () => number, width: number, height: number, wallPercent: number, barred: number): PlannerGrid {
  const flags = new Uint8Array(width * height);
  for (let c = 0; c < flags.length; c++) if (rnd() * 100 < wallPercent && pillarFits(width, height, flags, c)) flags[c] = CELL_BLOCKED;
  for (let i = 0; i < barred * 5 && barred > 0; i++) {
    const c = Math.floor(rnd() * flags.length);
    if (pillarFits(width, height, flags, c)) {
      flags[c] = CELL_BARRED_LOADED;
      barred--;
    }
  }
  return { width, height, flags };
}

/** Whether cell `c` may become a pillar: inside the border, no pillar among its 8 neighbours. */
function pillarFits(width: number, height: number, flags: Uint8Array, c: number): boolean {
  const x = c % width, y = Math.floor(c / width);
  if (x === 0 || y === 0 || x === width - 1 || y === height - 1 || flags[c]) return false;
  for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) if (flags[(y + dy) * width + x + dx]) return false;
  return true;
}

/** The level as text: # blocked, b barred when loaded, bots by id (last digit), goals as * . */
function draw(width: number, flags: Uint8Array, bots: SimBot[]): string {
  const rows: string[] = [];
  for (let y = 0; y < flags.length / width; y++) {
    let row = '';
    for (let x = 0; x < width; x++) {
      const c = y * width + x;
      const bot = bots.find((b) => b.pos.cell === c);
      row += bot ? String(bot.id % 10) : bots.some((b) => b.goal?.cell === c && !b.goal.reached) ? '*' : flags[c] === CELL_BLOCKED ? '#' : flags[c] ? 'b' : '.';
    }
    rows.push(row);
  }
  return rows.join('\n');
}

/**
 * Runs one scenario to the end: every bot gets `goalsPerBot` goals in turn (some changed or
 * cancelled on the way) and the level runs until every open goal is reached. Returns the
 * problems found (empty when all is well) and figures for the report.
 */
async function simulate(s: Scenario): Promise<{ problems: string[]; goals: number; turns: number; stats: ReturnType<LevelPlanner['stats']> }> {
  const rnd = seeded(s.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const grid = makeMap(rnd, s.width, s.height, s.wallPercent, s.flags ? 3 : 0);
  const flags = grid.flags.slice();
  const options: LevelPlannerOptions = {
    grid,
    validate: true,
    window: s.window,
    maxReleasedActions: s.maxReleasedActions,
    durations: { turn: s.turn, lift: s.lift, lower: s.lift },
    stepBudgetMs: 200,
    idleStepMs: 2,
    stallSteps: 8,
    seed: s.seed,
  };
  const lp = createLevelPlanner(options);
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < 10) problems.push(text);
  };
  const bots = new Map<number, SimBot>();
  const adding = new Set<number>();
  let nextId = 1;
  let goalsReached = 0;

  const cellOf = (b: SimBot) => [b.pos.cell, b.reported.cell, ...(b.running ? [b.running.to.cell] : []), ...b.inbox.map((a) => a.to.cell)];
  const takenBy = (cell: number, except: number): SimBot | undefined => {
    for (const o of bots.values()) if (o.id !== except && cellOf(o).includes(cell)) return o;
    return undefined;
  };
  const freeCells = (): number[] => {
    const out: number[] = [];
    for (let c = 0; c < flags.length; c++) if (flags[c] === 0 && !takenBy(c, -1)) out.push(c);
    return out;
  };
  const newBot = (id: number, state: PlanState): SimBot => ({
    id, pos: state, inbox: [], reported: state, visited: new Set([`${state.cell}:${state.lifted}`]), speed: 0.2 + rnd() * 0.8,
    stuck: false, stuckTurns: 0, reportedWhileStuck: false, paused: false, staleGoals: new Set(), goalsLeft: s.goalsPerBot, history: [],
  });
  const note = (b: SimBot | undefined, text: string) => {
    if (!b) return;
    b.history.push(text);
    if (b.history.length > 24) b.history.shift();
  };
  const text = (x: PlanState) => `${x.cell}/${x.heading}${x.lifted ? 'L' : ''}`;
  const problemOf = (b: SimBot, what: string) => problem(`${what}\n      bot ${b.id}: ${b.history.join(' | ')}`);
  const addBot = (cell: number) => {
    const id = nextId++;
    adding.add(id);
    lp.addBot(id, at(cell, pick([0, 1, 2, 3] as const)));
  };

  lp.onEvent((events) => {
    for (const e of events) {
      switch (e.kind) {
        case 'bot_added': {
          if (!adding.delete(e.bot)) {
            problem(`bot_added for bot ${e.bot} never added`);
            break;
          }
          const other = takenBy(e.state.cell, e.bot);
          if (other) problem(`bot ${e.bot} accepted on cell ${e.state.cell}, which bot ${other.id} holds`);
          bots.set(e.bot, newBot(e.bot, e.state));
          break;
        }
        case 'refused':
          if (e.op === 'add_bot' && e.bot !== undefined && adding.delete(e.bot)) break;
          if (e.reason === 'unknown_bot' && e.bot !== undefined && !bots.has(e.bot)) break;  // removed meanwhile
          if (e.op === 'set_goal' && e.reason === 'cell_taken') {
            // the goal's cell is held around a stuck bot: try another later
            const b = e.bot === undefined ? undefined : bots.get(e.bot);
            if (b?.goal && b.goal.tag === e.goal) {
              b.goalsLeft++;
              b.goal = undefined;
            }
            break;
          }
          problem(`refused: ${JSON.stringify(e)}`);
          break;
        case 'goal_reached': {
          const b = bots.get(e.bot);
          if (!b) break;
          note(b, `reached ${e.cell}`);
          if (!b.goal || b.goal.tag !== e.goal || b.goal.reached) {
            if (!b.staleGoals.has(e.goal)) problemOf(b, `goal_reached for bot ${e.bot} at ${e.cell}, not its goal (${JSON.stringify(b.goal)})`);
            break;
          }
          if (b.goal.cell !== e.cell) problemOf(b, `goal_reached at ${e.cell} for goal ${b.goal.cell}`);
          const lifted = b.goal.act === 'lift' ? [true] : b.goal.act === 'lower' ? [false] : [true, false];
          if (!lifted.some((l) => b.visited.has(`${e.cell}:${l}`))) problemOf(b, `bot ${e.bot} never was at its goal ${e.cell} (${b.goal.act})`);
          if (b.goal.stay && !(b.pos.cell === e.cell && !b.running && b.inbox.length === 0)) problemOf(b, `bot ${e.bot} did not stay at ${e.cell}`);
          b.goal.reached = true;
          goalsReached++;
          break;
        }
        case 'violation':
          problem(`validator: ${e.rule} step ${e.step} bot ${e.bot} with ${e.other} cell ${e.cell}: ${e.detail}`);
          break;
        case 'deviation': {
          const b = bots.get(e.bot);
          if (b) problemOf(b, `deviation of bot ${e.bot} to ${text(e.state)}: the simulator never deviates`);
          else problem(`deviation of bot ${e.bot}`);
          break;
        }
        default:
          break;
      }
    }
  });
  lp.onCommands((actions) => {
    for (const a of actions) {
      const b = bots.get(a.bot);
      if (!b) continue;  // removed
      note(b, `got ${a.action} ${text(a.from)}>${text(a.to)}${b.stuck ? ' (refused: stuck)' : ''}`);
      if (b.stuck) continue;  // a faulted bot refuses motion
      const end = b.inbox.at(-1)?.to ?? b.running?.to ?? b.pos;
      if (!same(a.from, end)) problemOf(b, `bot ${a.bot} given ${a.action} from ${text(a.from)} but it will be at ${text(end)}`);
      if (b.goal?.stay && b.goal.reached) problemOf(b, `bot ${a.bot} moved on from a goal it was to stay at`);
      if (a.action === 'forward') {
        const other = takenBy(a.to.cell, a.bot);
        if (other) {
          problem(`bot ${a.bot} given cell ${a.to.cell} before bot ${other.id} confirmed leaving it ` +
            `(at ${other.pos.cell}, reported ${other.reported.cell}, running ${other.running?.to.cell}, queued ${other.inbox.map((x) => x.to.cell)})`);
        }
      }
      b.inbox.push(a);
    }
  });

  const free0 = freeCells();
  const count = Math.max(1, Math.min(s.bots, Math.floor(free0.length / 5)));
  for (let i = 0; i < count; i++) {
    const c = free0.splice(Math.floor(rnd() * free0.length), 1)[0]!;
    addBot(c);
  }

  let turns = 0;
  const started = Date.now();
  for (;; turns++) {
    await turn();
    const list = [...bots.values()];
    // motion
    for (const b of list) {
      if (b.stuck) continue;
      if (b.running) {
        if (rnd() < b.speed) {
          note(b, `did ${b.running.action}`);
          b.pos = b.running.to;
          b.running = undefined;
          b.visited.add(`${b.pos.cell}:${b.pos.lifted}`);
        }
      } else if (b.inbox.length > 0 && rnd() < b.speed) {
        const a = b.inbox.shift()!;
        if (!same(a.from, b.pos)) problem(`bot ${b.id} starts ${a.action} from ${JSON.stringify(a.from)} at ${JSON.stringify(b.pos)}`);
        if (a.action === 'forward') {
          for (const o of list) {
            if (o !== b && (o.pos.cell === a.to.cell || o.running?.to.cell === a.to.cell)) problem(`collision: bot ${b.id} enters cell ${a.to.cell} where bot ${o.id} is`);
          }
        }
        b.running = a;
      }
    }
    // telemetry: at rest only, late, sometimes repeated
    for (const b of list) {
      if (b.running) continue;
      if (!same(b.pos, b.reported) ? rnd() < 0.5 : rnd() < 0.02) {
        b.reported = b.pos;
        lp.reportTelemetry(b.id, b.pos);
        note(b, `report ${text(b.pos)}`);
        if (b.stuck) b.reportedWhileStuck = true;
      }
    }
    const finishing = list.every((b) => b.goalsLeft === 0);
    // faults and pauses (not once the last goals are out: the run must come to an end)
    if (s.faults && !finishing) {
      for (const b of list) {
        if (b.stuck) {
          if (++b.stuckTurns > 30 && b.reportedWhileStuck && rnd() < 0.1) {
            b.stuck = false;
            lp.setStuck(b.id, false);
            note(b, 'released');
          }
        } else if (rnd() < 0.002) {
          // faulted: the action under way completes or not, queued ones are dropped
          if (b.running && rnd() < 0.5) {
            b.pos = b.running.to;
            b.visited.add(`${b.pos.cell}:${b.pos.lifted}`);
          }
          b.running = undefined;
          b.inbox = [];
          b.stuck = true;
          b.stuckTurns = 0;
          b.reportedWhileStuck = false;
          lp.setStuck(b.id, true);
          note(b, `fault at ${text(b.pos)}`);
        } else if (rnd() < 0.003) {
          b.paused = !b.paused;
          lp.pauseBot(b.id, b.paused);
          note(b, b.paused ? 'paused' : 'resumed');
        }
      }
    }
    // goals
    for (const b of list) {
      if (b.stuck) continue;
      if (b.goal?.reached && (!b.goal.stay || rnd() < 0.1)) {
        if (b.goal.stay && b.goalsLeft === 0) {
          lp.cancelGoal(b.id);
          note(b, 'let go');
        }
        b.goal = undefined;
      }
      if (!b.goal && b.goalsLeft > 0 && rnd() < 0.2) {
        const targets = freeCells().filter((c) => ![...bots.values()].some((o) => o.goal?.cell === c));
        if (targets.length === 0) continue;
        const cell = pick(targets);
        const act = !b.pos.lifted && rnd() < 0.3 ? 'lift' : b.pos.lifted && rnd() < 0.5 ? 'lower' : 'none';
        b.goal = { tag: 0, cell, act, stay: rnd() < 0.3, reached: false };
        b.goalsLeft--;
        b.visited = new Set([`${b.pos.cell}:${b.pos.lifted}`]);
        b.goal.tag = lp.setGoal(b.id, b.goal);
        note(b, `goal ${cell} ${act}${b.goal.stay ? ' stay' : ''}`);
      } else if (b.goal && !b.goal.reached && !finishing && rnd() < 0.003) {
        b.staleGoals.add(b.goal.tag);
        if (rnd() < 0.5) {
          lp.cancelGoal(b.id);
          note(b, 'cancel');
          b.goal = undefined;
        } else {
          const targets = freeCells().filter((c) => ![...bots.values()].some((o) => o.goal?.cell === c));
          if (targets.length === 0) continue;
          b.goal = { tag: 0, cell: pick(targets), act: 'none', stay: false, reached: false };
          b.visited = new Set([`${b.pos.cell}:${b.pos.lifted}`]);
          b.goal.tag = lp.setGoal(b.id, b.goal);
          note(b, `goal changed to ${b.goal.cell}`);
        }
      }
    }
    // bots come and go; storage cells fill and empty
    if (s.churn && !finishing) {
      if (rnd() < 0.004 && list.length > 1) {
        const b = pick(list.filter((x) => !x.stuck));
        if (b) {
          bots.delete(b.id);
          lp.removeBot(b.id);
        }
      }
      if (rnd() < 0.004) {
        const cells = freeCells();
        if (cells.length > 5 * (bots.size + 1)) addBot(pick(cells));
      }
    }
    if (s.flags && rnd() < 0.01) {
      // a carrier set down on a storage cell (barred to loaded bots) or taken away
      const c = Math.floor(rnd() * flags.length);
      const goalCell = [...bots.values()].some((b) => b.goal?.cell === c);
      if (!goalCell && (flags[c] === CELL_BARRED_LOADED || pillarFits(s.width, s.height, flags, c))) {
        flags[c] = flags[c] === 0 ? CELL_BARRED_LOADED : 0;
        lp.setCellFlags(c, flags[c]!);
      }
    }
    // the end: every goal given, reached, the stays let go, nobody stuck or paused
    if (finishing) {
      for (const b of list) {
        if (b.stuck && b.reportedWhileStuck) {
          b.stuck = false;
          lp.setStuck(b.id, false);
          note(b, 'released');
        }
        if (b.paused) {
          b.paused = false;
          lp.pauseBot(b.id, false);
          note(b, 'resumed');
        }
      }
      const open = list.filter((b) => b.goal && !b.goal.reached);
      if (open.length === 0 && adding.size === 0) break;
    }
    if (turns > 200_000 || Date.now() - started > 30_000 || problems.length >= 10) {
      const open = list.filter((b) => b.goal && !b.goal.reached).map((b) => `bot ${b.id} at ${b.pos.cell} for ${b.goal!.cell}`);
      problem(`not finished after ${turns} turns: ${open.join('; ')}; ${JSON.stringify(lp.stats())}\n${draw(s.width, flags, list)}`);
      break;
    }
  }
  const stats = lp.stats();
  if (stats.violations !== 0) problem(`validator: ${stats.violations} violations`);
  await lp.close();
  return { problems, goals: goalsReached, turns, stats };
}

t.test('a simulated level: random maps, goals, delays, faults, pauses, bots coming and going', async (t) => {
  const totals = { runs: 0, goals: 0, turns: 0, replans: 0, dropped: 0, stalls: 0, escapes: 0, escapesDone: 0, released: 0 };
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        width: fc.integer({ min: 4, max: 10 }),
        height: fc.integer({ min: 3, max: 8 }),
        wallPercent: fc.integer({ min: 0, max: 40 }),
        bots: fc.integer({ min: 1, max: 10 }),
        goalsPerBot: fc.integer({ min: 1, max: 4 }),
        window: fc.integer({ min: 1, max: 32 }),
        maxReleasedActions: fc.integer({ min: 1, max: 3 }),
        turn: fc.integer({ min: 1, max: 2 }),
        lift: fc.integer({ min: 1, max: 3 }),
        faults: fc.boolean(),
        churn: fc.boolean(),
        flags: fc.boolean(),
      }),
      async (s) => {
        const r = await simulate(s);
        totals.runs++;
        totals.goals += r.goals;
        totals.turns += r.turns;
        totals.replans += r.stats.replans;
        totals.dropped += r.stats.actions.dropped;
        totals.stalls += r.stats.stalls.detected;
        totals.escapes += r.stats.escapes.planned;
        totals.escapesDone += r.stats.escapes.done;
        totals.released += r.stats.actions.released;
        if (r.problems.length > 0) throw new Error(`${JSON.stringify(s)}:\n  ${r.problems.join('\n  ')}`);
      },
    ),
    { numRuns: 300, seed: 7, endOnFailure: true },
  );
  t.comment(`runs ${totals.runs}, goals reached ${totals.goals}, actions released ${totals.released}, simulator turns ${totals.turns}, ` +
    `replans ${totals.replans} (${totals.dropped} actions dropped), stalls ${totals.stalls}, escapes ${totals.escapes} (${totals.escapesDone} followed to the end)`);
  t.pass('every run: no action before its dependencies were confirmed, no collision, every goal reached, no validator violation');
});

t.test('a level of 1,000 bots: planning time and event loop delay (figures, not limits)', async (t) => {
  // 120 x 90: blocks of 2 x 8 cells (walls here) between one-wide aisles, 1,000 bots (a quarter
  // of the aisle cells), each action reported done 0..2 ms after it is released.
  const width = 120, height = 90;
  const flags = new Uint8Array(width * height);
  for (let y = 1; y < height - 1; y++) for (let x = 1; x < width - 1; x++) if (y % 3 !== 0 && x % 9 !== 0) flags[y * width + x] = CELL_BLOCKED;
  const lp = createLevelPlanner({ grid: { width, height, flags }, validate: true });
  const rnd = seeded(42);
  const free: number[] = [];
  for (let c = 0; c < flags.length; c++) if (flags[c] === 0) free.push(c);
  const cells = free.slice().sort(() => rnd() - 0.5);
  const n = 1000;
  let reached = 0;
  let added = 0;
  const problems: PlannerEvent[] = [];
  lp.onEvent((events) => {
    for (const e of events) {
      if (e.kind === 'bot_added') {
        added++;
      } else if (e.kind === 'goal_reached') {
        reached++;
        lp.setGoal(e.bot, { cell: free[Math.floor(rnd() * free.length)]! });
      } else if (e.kind === 'violation' || e.kind === 'deviation' || e.kind === 'refused') {
        problems.push(e);
      }
    }
  });
  lp.onCommands((actions) => {
    for (const a of actions) setTimeout(() => lp.reportTelemetry(a.bot, a.to), Math.floor(rnd() * 3));
  });
  for (let i = 0; i < n; i++) lp.addBot(i, at(cells[i]!));
  await until('the bots', async () => added === n);
  for (let i = 0; i < n; i++) lp.setGoal(i, { cell: cells[n + i]! });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = Date.now();
  await until('1,000 goals reached', async () => reached >= 1000, 90_000);
  const seconds = (Date.now() - started) / 1000;
  delay.disable();
  const s = lp.stats();
  await lp.close();
  t.same(problems, []);
  t.equal(s.violations, 0);
  const ms = (ns: number) => (ns / 1e6).toFixed(2);
  t.comment(`1,000 bots: ${reached} goals in ${s.steps} steps, ${seconds.toFixed(1)} s; planning per step p50 ${s.stepMs.p50} ms, ` +
    `p99 ${s.stepMs.p99} ms, max ${s.stepMs.max} ms; ${s.actions.released} actions released; event loop delay p50 ` +
    `${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms; CPU: level thread ` +
    `${s.threadCpuMs.toFixed(0)} ms (validator included), JS delivery ${s.deliverCpuMs.toFixed(0)} ms`);
});
