/**
 * How long the site's bots take to move, one table for every layer: the simulator plays these
 * figures (src/sim/figures.ts reads them), the brain plans in steps of PLAN_STEP_MS with a
 * lift lasting liftSteps() steps, and the inventory view's eta adds up the same steps. Here
 * in the domain because the domain may not import from the simulator or the brain.
 */

/** The bots' own motion: a 0.6 m cell at 2.4 m/s, a 90° turn (180° is two), a lift or a lowering. */
export const BOT_MOTION = {
  cellMs: 250,
  turnMs: 400,
  liftMs: 1200,
} as const;

/** Length of one step of the brain's plans: a move of one cell or a quarter turn takes one step. */
export const PLAN_STEP_MS = 400;

/** How much longer than its top-speed time a bot is given for a move: room to speed up and brake. */
const MOVE_MARGIN = 1.2;

/**
 * What a forward move of one cell is commanded to last: the bot's own pace with a margin, not
 * the plan's step. A bot holds one planned action at a time and is given the next once its
 * telemetry confirms the last, so a move costs its commanded time plus that round trip;
 * commanded at a whole step, every step ran late by the round trip and the plans fell behind
 * real time (docs/benchmarks-site.md).
 */
export function moveMs(cellMs: number = BOT_MOTION.cellMs): number {
  return Math.round(cellMs * MOVE_MARGIN);
}

/** Plan steps a lift (or a lowering) takes: its time rounded up to whole steps, plus one to settle. */
export function liftSteps(stepMs: number = PLAN_STEP_MS, liftMs: number = BOT_MOTION.liftMs): number {
  return Math.ceil(liftMs / stepMs) + 1;
}

/** What each action of a plan lasts, in milliseconds, as the brain executes it. */
export interface ActionMs {
  move: number;
  turn: number;
  lift: number;
}

/** The duration of each planned action: a step, or longer where the bot itself is slower. */
export function actionMs(stepMs = PLAN_STEP_MS): ActionMs {
  return {
    move: Math.max(stepMs, BOT_MOTION.cellMs),
    turn: Math.max(stepMs, BOT_MOTION.turnMs),
    lift: liftSteps(stepMs) * stepMs,
  };
}
