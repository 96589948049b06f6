// The site's motion figures: what a move is commanded to last sits between the bot's own pace
// and the plan's step, so a bot is never asked to outrun itself and the step keeps room for
// the confirmation that releases the next action.
import t from 'tap';
import { BOT_MOTION, moveMs, PLAN_STEP_MS } from '../../../src/domain/site/motion-figures.js';

t.test('a one-cell move is commanded slower than the bot can go and faster than a plan step', async (t) => {
  t.ok(moveMs() >= BOT_MOTION.cellMs, `${moveMs()} ms, the bot needs ${BOT_MOTION.cellMs}`);
  t.ok(moveMs() < PLAN_STEP_MS, `${moveMs()} ms of a ${PLAN_STEP_MS} ms step`);
  for (const speed of [1, 2, 4, 8]) {
    t.ok(moveMs(BOT_MOTION.cellMs / speed) < PLAN_STEP_MS / speed, `at sim speed ${speed} too`);
  }
});
