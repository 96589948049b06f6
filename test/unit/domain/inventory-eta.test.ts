// The eta model: the same action lengths the simulated bots and the brain's plans use, drive
// times with turns counted, and the off-lane cases, each against figures worked out by hand on
// the small test site (ports at (1, 0) and (2, 0), a buffer at (5, 0), highway row y = 1).
import t from 'tap';
import { ACTION_MS, DriveTimes, LevelEta } from '../../../src/domain/inventory/eta.js';
import { BOT_MOTION, PLAN_STEP_MS, actionMs, liftSteps } from '../../../src/domain/site/motion-figures.js';
import { BOT_FIGURES } from '../../../src/sim/figures.js';
import { buildSite } from '../../../src/domain/site/load.js';
import { smallSite } from '../../fixtures/small-site.js';

const layout = smallSite();
layout.levels[0]!.rows[0] = '#PP##B##';
const level = buildSite(layout).levels[0]!;
const laneAt = (x: number) => level.lanes[level.spaceAt(x, 2)!.lane]!;

t.test('the eta counts the actions at the lengths the bots and the brain use', async (t) => {
  t.same({ cellMs: BOT_FIGURES.cellMs, turnMs: BOT_FIGURES.turnMs, liftMs: BOT_FIGURES.liftMs }, BOT_MOTION, 'the simulator plays the same figures');
  // The brain's worker plans 400 ms steps and a lift of ceil(1200 / 400) + 1 steps.
  t.equal(PLAN_STEP_MS, 400);
  t.equal(liftSteps(), 4);
  t.same(ACTION_MS, { move: 400, turn: 400, lift: 1600 }, 'a cell and a quarter turn take a step; a lift four');
  t.same(actionMs(100), { move: 250, turn: 400, lift: 1300 }, 'with shorter steps the bots themselves are the limit');
});

t.test('drive times count quarter turns and drive forwards only', async (t) => {
  const toPort = new DriveTimes(level, level.ports);
  t.equal(toPort.from(1, 1, 0), 400, 'facing the port: one cell');
  t.equal(toPort.from(1, 1, 1), 800, 'facing east: a quarter turn, then the cell');
  t.equal(toPort.from(1, 1, 2), 1200, 'facing away: an about-turn (two quarters), then the cell');
  t.equal(toPort.from(5, 1, 1), 800 + 3 * 400 + 400 + 400, 'at x = 5 facing east: about-turn, three cells west, turn north, into the port');
  t.equal(toPort.from(0, 0, 0), undefined, 'a wall');
  t.equal(toPort.fromAnyHeading(0, 1), 1200, 'east to (1, 1), turn north, into the port');
  const toBuffer = new DriveTimes(level, level.buffers);
  t.equal(toBuffer.from(1, 1, 0), 400 + 4 * 400 + 400 + 400, 'turn east, four cells, turn north, onto the buffer');
});

t.test('lane etas: fetch, set aside, and the carriers off the lanes', async (t) => {
  const eta = new LevelEta(level);
  const lane = laneAt(1);
  // Turn in, d cells in, lift, about-turn, d cells out, 0.4 s to the port, set down.
  t.equal(eta.fetch(lane, 1), 5.6);
  t.equal(eta.fetch(lane, 3), 7.2);
  // The same in and out (3.6 s), 2.8 s to the buffer and 2.8 s back, set down (1.6 s).
  t.equal(eta.setAside(lane, 1), 10.8);
  t.equal(eta.offLane(2, 0), 0, 'at a port it is at a balcony');
  t.equal(eta.offLane(5, 0), 6.4, 'on the buffer: lift (1.6), onto the highway facing south (0.8), turn west, three cells, turn north, into the port (2.4), set down (1.6)');
  t.equal(eta.offLane(0, 1), 2.8, 'on a bot on the highway: the drive (1.2) and the set-down (1.6)');

  const noBuffer = new LevelEta(buildSite(smallSite()).levels[0]!);
  t.equal(noBuffer.setAside(lane, 1), undefined, 'no buffer: nothing can be set aside');
  t.equal(noBuffer.fetch(lane, 2), 6.4, 'a fetch needs no buffer');
});
