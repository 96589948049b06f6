// The planning core and the validator through planner-cli (native/planner/cli/): a regression
// run on a saved small warehouse, the validator against hand-made bad plans (each rule named),
// and property runs on random maps with random goal streams, delays, faults, pauses, bots added
// and removed and cells barred mid-run. The CLI is built (if stale) by native/planner/build.sh.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'native', 'build-planner', 'planner-cli');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'planner');

// The planner is compiled here and property runs follow: minutes on a loaded 2-core machine.
t.setTimeout(300_000);

const build = spawnSync('sh', [path.join(ROOT, 'native', 'planner', 'build.sh')], { encoding: 'utf8' });
if (build.status !== 0) throw new Error(`native/planner/build.sh failed:\n${build.stderr}`);

interface Violation {
  step: number;
  bot: number;
  other: number;
  rule: string;
  cell: number;
}

/** Runs planner-cli and parses its one JSON line (null if it printed none). */
function cli(args: string[]): { status: number | null; out: any; stderr: string } {
  const p = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  let out: any = null;
  try {
    out = JSON.parse(p.stdout);
  } catch {
    out = null;
  }
  return { status: p.status, out, stderr: p.stderr };
}

t.test('regression: the saved small warehouse, 2023 errands, 300 steps', async (t) => {
  const args = ['--instance', path.join(FIXTURES, 'small-2023.json'), '--steps', '300'];
  const a = cli(args);
  t.equal(a.status, 0);
  t.equal(a.out.validator.violations, 0, 'no rule broken');
  t.equal(a.out.steps, 300);
  t.ok(a.out.finished > 300, `errands finished: ${a.out.finished} (60 robots, 300 steps)`);
  t.ok(a.out.errandsPerRobot.min >= 1, 'every robot finished an errand (nobody deadlocked for good)');
  t.equal(a.out.counters.incompleteSteps, 0);
  const b = cli(args);
  t.equal(b.out.checksum, a.out.checksum, 'the same actions again (deterministic)');
  t.equal(b.out.finished, a.out.finished);
});

t.test('regression: the saved small warehouse, 2024 tasks with the scheduler', async (t) => {
  const args = ['--instance', path.join(FIXTURES, 'small-2024.json'), '--steps', '300'];
  const a = cli(args);
  t.equal(a.out.validator.violations, 0);
  t.equal(a.out.mode, 'lorr2024');
  t.ok(a.out.finished > 50, `tasks finished: ${a.out.finished}`);
  t.ok(a.out.errands >= 2 * a.out.finished, 'a task is two errands');
  t.equal(cli(args).out.checksum, a.out.checksum, 'deterministic');
  const other = cli([...args, '--seed', '2']);
  t.equal(other.out.validator.violations, 0);
  t.not(other.out.checksum, a.out.checksum, 'the seed matters (the checksum is not a constant)');
});

t.test('regression: one-shot MovingAI format, LaCAM, 100 agents on 528 free cells', async (t) => {
  const r = cli(['--map', path.join(FIXTURES, 'small-warehouse.map'), '--scen', path.join(FIXTURES, 'small-warehouse.scen'), '--agents', '100']);
  t.equal(r.status, 0);
  t.equal(r.out.solved, true);
  t.equal(r.out.validator.violations, 0, 'the solution replays without a conflict and every agent ends on its goal');
  t.ok(r.out.makespan > 0);
});

// ---- the validator against hand-made plans ----

function checkPlan(t: { teardown(fn: () => void): void }, text: string) {
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'wh-plan-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'plan.txt');
  fs.writeFileSync(file, text);
  return cli(['--check-plan', file]);
}

const rules = (r: { out: any }) => (r.out.list as Violation[]).map((v) => v.rule);

t.test('validator: a good plan passes (moves, following, turns, lift and lower, a true claim)', async (t) => {
  const r = checkPlan(
    t,
    `grid 4 2
....
..B.
add 1 0 E 0
add 2 1 E 0
step 1 F 1 E 0 ; 2 F 2 E 0
step 1 R 1 S 0 ; 2 U 2 E 1
step 1 F 5 S 0 ; 2 F 3 E 1
step 1 W 5 S 0 ; 2 D 3 E 0
claim 1 5
claim 2 3
`,
  );
  t.equal(r.status, 0);
  t.same(r.out.list, []);
  t.equal(r.out.steps, 4);
});

t.test('validator: vertex conflict', async (t) => {
  const r = checkPlan(t, 'grid 3 1\n...\nadd 1 0 E 0\nadd 2 2 W 0\nstep 1 F 1 E 0 ; 2 F 1 W 0\n');
  t.equal(r.status, 3);
  t.same(rules(r), ['vertex']);
  t.match(r.out.list[0], { step: 1, cell: 1 });
  t.same([r.out.list[0].bot, r.out.list[0].other].sort(), [1, 2], 'both bots named');
});

t.test('validator: swap (edge) conflict', async (t) => {
  const r = checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 0\nadd 2 1 W 0\nstep 1 F 1 E 0 ; 2 F 0 W 0\n');
  t.same(rules(r), ['swap']);
});

t.test('validator: blocked cell and off the grid', async (t) => {
  const r = checkPlan(t, 'grid 2 2\n.#\n..\nadd 1 0 E 0\nadd 2 3 E 0\nstep 1 F 1 E 0 ; 2 F 3 E 0\n');
  t.same(rules(r).sort(), ['blocked-cell', 'off-grid'], 'each once (the bot stays, no second report as a state mismatch)');
});

t.test('validator: a loaded bot entering a cell barred when loaded (an empty one may)', async (t) => {
  const bad = checkPlan(t, 'grid 2 1\n.B\nadd 1 0 E 1\nstep 1 F 1 E 1\n');
  t.same(rules(bad), ['barred-loaded']);
  const fine = checkPlan(t, 'grid 2 1\n.B\nadd 1 0 E 0\nstep 1 F 1 E 0\nstep 1 U 1 E 1\nstep 1 R 1 S 1\n');
  t.same(rules(fine), [], 'lifting inside a barred cell is allowed');
});

t.test('validator: illegal actions (lift while lifted, lower while empty)', async (t) => {
  const r = checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 1\nadd 2 1 E 0\nstep 1 U 0 E 1 ; 2 D 1 E 0\n');
  t.same(rules(r), ['illegal-action', 'illegal-action']);
});

t.test('validator: a multi-step action cut short, and the state each record claims', async (t) => {
  const r = checkPlan(t, 'grid 3 1\n...\ndurations 2 1 1 1\nadd 1 0 E 0\nstep 1 F 0 E 0\nstep 1 W 1 E 0\n');
  t.same(rules(r), ['duration']);
  const early = checkPlan(t, 'grid 3 1\n...\ndurations 2 1 1 1\nadd 1 0 E 0\nstep 1 F 1 E 0\n');
  t.same(rules(early), ['state-mismatch'], 'a two-step move does not arrive after one step');
});

t.test('validator: following is allowed with one-step moves, not when moves take longer', async (t) => {
  const plan = 'grid 4 1\n....\nadd 1 1 E 0\nadd 2 0 E 0\nstep 1 F 2 E 0 ; 2 F 1 E 0\n';
  t.same(rules(checkPlan(t, plan)), []);
  const slow = checkPlan(t, 'grid 4 1\n....\ndurations 2 1 1 1\nadd 1 1 E 0\nadd 2 0 E 0\nstep 1 F 1 E 0 ; 2 F 0 E 0\nstep 1 F 2 E 0 ; 2 F 1 E 0\n');
  t.same(rules(slow), ['vertex'], 'both hold cell 1 while under way');
});

t.test('validator: a ring of bots is a cycle only when cycles are forbidden', async (t) => {
  const ring = 'grid 2 2\n..\n..\nadd 1 0 E 0\nadd 2 1 S 0\nadd 3 3 W 0\nadd 4 2 N 0\nstep 1 F 1 E 0 ; 2 F 3 S 0 ; 3 F 2 W 0 ; 4 F 0 N 0\n';
  t.same(rules(checkPlan(t, ring)), []);
  t.same(rules(checkPlan(t, 'option forbid-cycles\n' + ring)), ['cycle']);
});

t.test('validator: a frozen (paused or stuck) bot may only wait', async (t) => {
  const r = checkPlan(t, 'grid 3 1\n...\nadd 1 0 E 0\nfreeze 1 1\nstep 1 W 0 E 0\nstep 1 F 1 E 0\n');
  t.same(rules(r), ['frozen-moved']);
  t.equal(r.out.list[0].step, 1);
  const released = checkPlan(t, 'grid 3 1\n...\nadd 1 0 E 0\nfreeze 1 1\nstep 1 W 0 E 0\nfreeze 1 0\nstep 1 F 1 E 0\n');
  t.same(rules(released), []);
});

t.test('validator: a goal claimed where the bot is not', async (t) => {
  const r = checkPlan(t, 'grid 3 1\n...\nadd 1 0 E 0\nstep 1 F 1 E 0\nclaim 1 2\nclaim 1 1\n');
  t.same(rules(r), ['goal-not-reached']);
  t.equal(r.out.claims, 2);
});

t.test('validator: bad starts (blocked, taken) and a missing or unknown record', async (t) => {
  t.same(rules(checkPlan(t, 'grid 2 1\n.#\nadd 1 1 E 0\n')), ['bad-start']);
  t.same(rules(checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 0\nadd 2 0 E 0\n')), ['bad-start']);
  t.same(rules(checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 0\nadd 2 1 E 0\nstep 1 W 0 E 0\n')), ['missing-record']);
  t.same(rules(checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 0\nstep 1 W 0 E 0 ; 9 W 1 E 0\n')), ['unknown-bot']);
  t.same(rules(checkPlan(t, 'grid 2 1\n..\nadd 1 0 E 0\nteleport 1 1 N 0\nstep 1 W 1 N 0\nremove 1\nstep\n')), [], 'teleport and remove');
});

// ---- property runs: random maps and goal streams ----

t.test('property: random maps, goal streams, faults, pauses, resyncs, bots coming and going', async (t) => {
  const seen: string[] = [];
  fc.assert(
    fc.property(
      fc.record({
        seed: fc.integer({ min: 1, max: 1_000_000 }),
        width: fc.integer({ min: 4, max: 24 }),
        height: fc.integer({ min: 3, max: 16 }),
        density: fc.double({ min: 0.02, max: 0.3, noNaN: true }),
        obstacles: fc.double({ min: 0, max: 0.3, noNaN: true }),
        barred: fc.double({ min: 0, max: 0.2, noNaN: true }),
        durations: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 })),
        chaos: fc.boolean(),
        forbidCycles: fc.boolean(),
        rotations: fc.boolean(),
        guidance: fc.constantFrom(0, 3, 8),
        lanes: fc.constantFrom(0, 4),
      }),
      (p) => {
        const cells = p.width * p.height;
        const bots = Math.max(1, Math.floor(cells * (1 - p.obstacles) * p.density));
        const args = [
          '--random', '--seed', String(p.seed), '--width', String(p.width), '--height', String(p.height), '--bots', String(bots),
          '--obstacles', p.obstacles.toFixed(3), '--barred', p.barred.toFixed(3), '--durations', p.durations.join(','),
          '--steps', '250', '--guidance', String(p.guidance), '--lanes', String(p.lanes),
          ...(p.chaos ? ['--chaos'] : []), ...(p.forbidCycles ? ['--forbid-cycles'] : []), ...(p.rotations ? [] : ['--no-rotations']),
        ];
        const r = cli(args);
        if (r.status === 1 && /too few free cells/.test(r.stderr)) return;
        if (!r.out) throw new Error(`no JSON from ${args.join(' ')}: ${r.stderr}`);
        seen.push(args.join(' '));
        if (r.out.validator.violations !== 0) throw new Error(`violations with ${args.join(' ')}: ${JSON.stringify(r.out.validator.first)}`);
        if (r.status !== 0) throw new Error(`exit ${r.status} with ${args.join(' ')}`);
      },
    ),
    { numRuns: 150, seed: 20240607 },
  );
  t.ok(seen.length >= 120, `${seen.length} random runs, all valid`);
});

t.test('property: same seed, same plan (deterministic with faults and bots added/removed)', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.boolean(), (seed, cycles) => {
      const args = ['--random', '--seed', String(seed), '--width', '20', '--height', '14', '--bots', '40', '--chaos', '--steps', '200', '--durations', '1,1,2,2', ...(cycles ? ['--forbid-cycles'] : [])];
      const a = cli(args).out;
      const b = cli(args).out;
      if (a.checksum !== b.checksum || a.goalsReached !== b.goalsReached) throw new Error(`not deterministic: ${args.join(' ')}`);
      if (a.validator.violations !== 0) throw new Error(`violations: ${args.join(' ')}`);
    }),
    { numRuns: 8, seed: 7 },
  );
  t.pass('deterministic');
});

t.test('property: goals keep getting reached on an open random map (no lasting deadlock)', async (t) => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = cli(['--random', '--seed', String(seed), '--width', '24', '--height', '16', '--bots', '60', '--obstacles', '0.05', '--barred', '0', '--steps', '600']).out;
    t.equal(r.validator.violations, 0, `seed ${seed}: valid`);
    // 60 bots, random goals about 13 moves apart: a jammed level would reach a handful
    t.ok(r.goalsReached > 300, `seed ${seed}: ${r.goalsReached} goals reached in 600 steps`);
    t.equal(r.counters.stallsDetected - r.counters.stallsBroken <= 60, true, 'stalls are broken again');
  }
});

t.test('escapes: loaded bots on a dense map with one-wide ways get out of stalls priority does not break', async (t) => {
  // 40 bots on 16 x 12, 30 % of cells barred to loaded bots: PIBT alone leaves groups livelocked
  const reached = { off: 0, on: 0 };
  let done = 0;
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const args = ['--random', '--seed', String(seed), '--bots', '40', '--barred', '0.3', '--steps', '1500', '--forbid-cycles'];
    const off = cli([...args, '--escape-bots', '0']).out;
    const on = cli(args).out;
    t.equal(off.counters.escapesPlanned, 0, `seed ${seed}: none planned when off`);
    t.equal(on.validator.violations, 0, `seed ${seed}: the escapes' moves are valid`);
    reached.off += off.goalsReached;
    reached.on += on.goalsReached;
    done += on.counters.escapesDone;
  }
  t.ok(done > 0, `${done} escapes followed to the end`);
  t.ok(reached.on > reached.off * 1.3, `goals reached: ${reached.on} with escapes, ${reached.off} without`);
});

/** The arbitraries of validChaosRun's own inputs (fast-check records add theirs). */
const CHAOS_RUN = {
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  durations: fc.constantFrom('1,1,1,1', '1,2,1,1', '2,1,3,3'),
  forbidCycles: fc.boolean(),
};

/**
 * A random dense 18x12 run of 50 bots under chaos for 150 steps, with the given durations, ring
 * rule and extra arguments: its report, or a throw naming the arguments when it breaks a rule.
 */
function validChaosRun(seed: number, durations: string, forbidCycles: boolean, extra: string[]) {
  const args = [
    '--random', '--seed', String(seed), '--width', '18', '--height', '12', '--bots', '50', '--chaos', '--steps', '150',
    '--durations', durations, ...extra, ...(forbidCycles ? ['--forbid-cycles'] : []),
  ];
  const r = cli(args).out;
  if (!r) throw new Error(`no JSON from ${args.join(' ')}`);
  if (r.validator.violations !== 0) throw new Error(`violations with ${args.join(' ')}: ${JSON.stringify(r.validator.first)}`);
  return r;
}

t.test('improvement passes: every plan they pick is valid, and none starts after the deadline', async (t) => {
  // Extra PIBT passes per step (--improve-passes) may replace the first answer by one with more
  // progress: that answer must keep every rule (faults, barred cells, slow actions, no rings).
  let wins = 0;
  fc.assert(
    fc.property(
      fc.record({ ...CHAOS_RUN, rotations: fc.boolean() }),
      (p) => {
        wins += validChaosRun(p.seed, p.durations, p.forbidCycles, ['--improve-passes', '6', ...(p.rotations ? [] : ['--no-rotations'])]).counters.improveWins;
      },
    ),
    { numRuns: 16, seed: 2311 },
  );
  t.ok(wins > 0, `${wins} steps took a plan from an improvement pass (fast-check seed 2311)`);
  // A step whose deadline has passed drops its plan (everyone waits) and starts no extra pass.
  const late = cli(['--random', '--seed', '5', '--bots', '30', '--steps', '40', '--improve-passes', '6', '--step-limit-ms', '0']).out;
  t.equal(late.validator.violations, 0);
  t.equal(late.counters.incompleteSteps, 40, 'every step was late');
  t.equal(late.counters.improvePasses, 0, 'no improvement pass after the deadline');
});

t.test('congestion weight and open-area cost: every plan keeps the rules', async (t) => {
  // --heat reorders PIBT's moves by how often bots stood in a cell lately and --open-cost makes
  // open strips dearer in the distance tables: neither may let a plan break a rule (faults,
  // barred cells, slow actions, no rings), and bots must still reach goals.
  let reached = 0;
  fc.assert(
    fc.property(
      fc.record({ ...CHAOS_RUN, heat: fc.constantFrom('16', '48', '255'), openCost: fc.constantFrom('1', '2', '4') }),
      (p) => {
        reached += validChaosRun(p.seed, p.durations, p.forbidCycles, ['--heat', p.heat, '--guidance', '8', '--lanes', '8', '--open-cost', p.openCost]).counters.goalsReached;
      },
    ),
    { numRuns: 12, seed: 2326 },
  );
  t.ok(reached > 0, `${reached} goals reached (fast-check seed 2326)`);
});

t.test('congestion in the distance tables: the costs follow the queues, and every plan keeps the rules', async (t) => {
  // --flow-cost puts the cells' congestion average into the distance tables every --flow-period
  // steps; held tables are searched again a few per step (--flow-refresh) while their bots keep
  // steering by the old distances, and a bot's progress is judged against its table's version.
  const args = ['--random', '--seed', '3', '--width', '20', '--height', '14', '--bots', '70', '--steps', '300', '--guidance', '8', '--lanes', '8', '--heat', '48'];
  const flow = [...args, '--flow-cost', '32', '--flow-period', '25', '--flow-refresh', '4'];
  const off = cli(args).out;
  const on = cli(flow).out;
  t.equal(on.validator.violations, 0);
  t.equal(off.counters.flowUpdates, 0, 'off unless asked for');
  t.equal(on.counters.flowUpdates, 12, 'one update every 25 steps');
  t.ok(on.counters.heuristicTables > off.counters.heuristicTables, `tables searched again: ${on.counters.heuristicTables} against ${off.counters.heuristicTables}`);
  t.not(on.checksum, off.checksum, 'the new costs changed where the bots went');
  t.equal(cli(flow).out.checksum, on.checksum, 'deterministic');
  t.ok(on.counters.goalsReached > 0.8 * off.counters.goalsReached, `goals reached: ${on.counters.goalsReached} against ${off.counters.goalsReached}`);
  let reached = 0;
  fc.assert(
    fc.property(fc.record({ ...CHAOS_RUN, weight: fc.constantFrom('4', '32', '255') }), (p) => {
      reached += validChaosRun(p.seed, p.durations, p.forbidCycles, ['--heat', '48', '--guidance', '8', '--lanes', '8', '--flow-cost', p.weight, '--flow-period', '20', '--flow-refresh', '3']).counters.goalsReached;
    }),
    { numRuns: 12, seed: 2351 },
  );
  t.ok(reached > 0, `${reached} goals reached under faults and barred cells (fast-check seed 2351)`);
});

t.test('head-on traffic in the distance tables: it changes the routes, and every plan keeps the rules', async (t) => {
  // --contraflow adds, at each flow-cost update, the rate of bots leaving the entered cell
  // towards the one left (bots met head-on) to the move's cost; off, the run is the one before.
  const args = ['--random', '--seed', '3', '--width', '20', '--height', '14', '--bots', '70', '--steps', '300', '--guidance', '8', '--lanes', '8', '--heat', '48', '--flow-cost', '4', '--flow-period', '25', '--flow-refresh', '4'];
  const off = cli(args).out;
  const zero = cli([...args, '--contraflow', '0']).out;
  const on = cli([...args, '--contraflow', '64']).out;
  t.equal(zero.checksum, off.checksum, 'weight 0 is the run without it');
  t.equal(on.validator.violations, 0);
  t.not(on.checksum, off.checksum, 'head-on traffic changed where the bots went');
  t.equal(cli([...args, '--contraflow', '64']).out.checksum, on.checksum, 'deterministic');
  t.ok(on.counters.goalsReached > 0.8 * off.counters.goalsReached, `goals reached: ${on.counters.goalsReached} against ${off.counters.goalsReached}`);
  let reached = 0;
  fc.assert(
    fc.property(fc.record({ ...CHAOS_RUN, weight: fc.constantFrom('8', '64', '255') }), (p) => {
      reached += validChaosRun(p.seed, p.durations, p.forbidCycles, ['--heat', '48', '--guidance', '8', '--lanes', '8', '--flow-cost', '4', '--flow-period', '20', '--flow-refresh', '3', '--contraflow', p.weight]).counters.goalsReached;
    }),
    { numRuns: 8, seed: 2361 },
  );
  t.ok(reached > 0, `${reached} goals reached under faults and barred cells (fast-check seed 2361)`);
  // LoRR 2023 crowds (robots on a tenth of the free cells or more, as the saved small warehouse)
  // get it with the flow costs by default (MR23-I-10)
  const lorr = ['--instance', path.join(FIXTURES, 'small-2023.json'), '--steps', '300'];
  const byDefault = cli(lorr).out;
  t.equal(byDefault.validator.violations, 0);
  t.equal(byDefault.checksum, cli([...lorr, '--contraflow', '510']).out.checksum, 'LoRR 2023 crowds: weight 510 by default');
  t.not(byDefault.checksum, cli([...lorr, '--contraflow', '0']).out.checksum, 'and it changes their routes');
});

t.test('2024 scheduler: a nearer robot takes a task not yet started, and the run stays valid', async (t) => {
  // --steal-margin: the displaced robot gets another task in the same step; a robot must never
  // be left holding a goal of a task it lost (its GoalReached would be counted for nobody).
  const args = ['--instance', path.join(FIXTURES, 'small-2024.json'), '--steps', '300', '--steal-margin', '4'];
  const a = cli(args);
  t.equal(a.status, 0);
  t.equal(a.out.validator.violations, 0);
  t.ok(a.out.steals > 0, `${a.out.steals} tasks went to a nearer robot`);
  t.ok(a.out.errands >= 2 * a.out.finished, 'a task is two errands');
  t.ok(a.out.finished > 50, `tasks finished: ${a.out.finished}`);
  t.equal(cli(args).out.checksum, a.out.checksum, 'deterministic');
});

t.test('operations: every plan keeps the rules with faults, pauses, lifts and bots coming and going', async (t) => {
  // --operation-depth N: each bot chooses N actions at once and pushes the one bot in the way of
  // its best sequence to choose again; only the first action runs. Every step must keep every
  // rule, bots at their goal must still lift and lower, and a deadline cut short must still
  // leave a plan free of collisions.
  let reached = 0;
  fc.assert(
    fc.property(
      fc.record({ seed: CHAOS_RUN.seed, depth: fc.integer({ min: 1, max: 4 }), revisits: fc.integer({ min: 1, max: 3 }) }),
      (p) => {
        reached += validChaosRun(p.seed, '1,1,1,1', false, ['--operation-depth', String(p.depth), '--operation-revisits', String(p.revisits)]).counters.goalsReached;
      },
    ),
    { numRuns: 16, seed: 3001 },
  );
  t.ok(reached > 16 * 20, `${reached} goals reached in 16 runs of 150 steps (fast-check seed 3001)`);
  const late = cli(['--random', '--seed', '5', '--bots', '30', '--steps', '40', '--operation-depth', '3', '--step-limit-ms', '0']).out;
  t.equal(late.validator.violations, 0, 'a pass cut short by its deadline leaves a valid plan');
  t.equal(late.counters.incompleteSteps, 40);
});

t.test('operations: LoRR 2023 crowds use them by default, and they change the plan only where the model allows them', async (t) => {
  const lorr = ['--instance', path.join(FIXTURES, 'small-2023.json'), '--steps', '300'];
  const pibt = cli([...lorr, '--operation-depth', '0']).out;
  const ops = cli(lorr).out;
  t.equal(ops.validator.violations, 0);
  t.equal(pibt.counters.improvePasses, 0, 'one-step PIBT keeps its first answer');
  t.equal(ops.counters.improvePasses, 8 * 300, 'LoRR 2023 crowd: operations of 3 actions and 8 rounds of improvement a step by default');
  const tasks = ['--instance', path.join(FIXTURES, 'small-2024.json'), '--steps', '100'];
  t.equal(cli(tasks).out.checksum, cli([...tasks, '--operation-depth', '0']).out.checksum, 'LoRR 2024: one-step PIBT by default');
  t.equal(cli([...lorr, '--operation-depth', '3', '--improve-passes', '8']).out.checksum, ops.checksum, 'the defaults are those');
  t.not(ops.checksum, pibt.checksum, 'LoRR: each bot follows its operations');
  t.ok(ops.finished > 300, `errands finished: ${ops.finished} with operations, ${pibt.finished} without`);
  t.ok(ops.errandsPerRobot.min >= 1, 'every robot finished an errand');
  t.equal(cli(lorr).out.checksum, ops.checksum, 'deterministic');
  // turns of two steps and no rings (the product's model): one-step PIBT, as without the option
  const slow = ['--random', '--seed', '9', '--bots', '30', '--steps', '100', '--durations', '1,2,1,1', '--forbid-cycles'];
  t.equal(cli([...slow, '--operation-depth', '3']).out.checksum, cli(slow).out.checksum, 'ignored where actions take longer');
});
