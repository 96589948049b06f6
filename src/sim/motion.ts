/**
 * Timing of one SEGMENT step as a simulated bot drives it (PROTOCOL.md 0x20): when it starts,
 * when it reaches each cell centre, when it ends. The controller gives every step a duration;
 * the bot paces itself to use it, but never drives a cell faster than its hardware allows, so
 * a step planned too short ends late (and the bot reports SEGMENT_LATE).
 */
import type { Heading, Step } from '../link/protocol/messages.js';
import type { BotFigures } from './figures.js';

export const DIRECTION: Readonly<Record<string, { heading: Heading; dx: number; dy: number }>> = {
  MOVE_N: { heading: 'N', dx: 0, dy: -1 },
  MOVE_E: { heading: 'E', dx: 1, dy: 0 },
  MOVE_S: { heading: 'S', dx: 0, dy: 1 },
  MOVE_W: { heading: 'W', dx: -1, dy: 0 },
};

const ORDER: Heading[] = ['N', 'E', 'S', 'W'];

/** Quarter turns between two headings: 0, 1 or 2. */
export function quarterTurns(from: Heading, to: Heading): number {
  const d = Math.abs(ORDER.indexOf(from) - ORDER.indexOf(to));
  return d === 3 ? 1 : d;
}

export interface StepRun {
  step: Step;
  /** heading after the step, for moves */
  heading: Heading | undefined;
  dx: number;
  dy: number;
  /** when the step's time slot ends, by the controller's plan (pauses shift it) */
  nominalEnd: number;
  /** when the turn (if any) is done and the bot leaves its cell */
  turnEnd: number;
  /** times the bot reaches the centre of each cell of the step, in order */
  arrivals: number[];
  /** cells reached so far */
  reached: number;
  /** when the step is over: its slot's end, or the last arrival if that is later */
  end: number;
}

/** Plans a step that starts at `start` and should end at `nominalEnd`. */
export function planStep(step: Step, heading: Heading, start: number, nominalEnd: number, fig: BotFigures): StepRun {
  const dir = DIRECTION[step.action];
  if (!dir) return { step, heading: undefined, dx: 0, dy: 0, nominalEnd, turnEnd: start, arrivals: [], reached: 0, end: Math.max(nominalEnd, start) };
  const turnEnd = start + fig.turnMs * quarterTurns(heading, dir.heading);
  const run: StepRun = { step, heading: dir.heading, dx: dir.dx, dy: dir.dy, nominalEnd, turnEnd, arrivals: [], reached: 0, end: nominalEnd };
  replan(run, turnEnd, fig);
  return run;
}

/**
 * Spreads the cells not yet reached evenly from `from` to the step's nominal end, no faster
 * than one cell per `cellMs`. Used when a step starts and when it resumes after a pause.
 */
export function replan(run: StepRun, from: number, fig: BotFigures): void {
  const remaining = run.step.cells - run.reached;
  const perCell = remaining > 0 ? Math.max(fig.cellMs, (run.nominalEnd - from) / remaining) : 0;
  run.arrivals.length = run.reached;
  for (let k = 1; k <= remaining; k++) run.arrivals.push(from + k * perCell);
  run.end = Math.max(run.nominalEnd, run.arrivals.at(-1) ?? from);
}

/** Whether the bot has left a cell centre and not yet reached the next one. */
export function betweenCells(run: StepRun | undefined, now: number): boolean {
  return run !== undefined && run.heading !== undefined && now >= run.turnEnd && run.reached < run.arrivals.length;
}

/** The cell where a segment's steps end, from its start cell. */
export function segmentEnd(x: number, y: number, steps: Step[]): { x: number; y: number } {
  for (const s of steps) {
    const dir = DIRECTION[s.action];
    if (dir) {
      x += dir.dx * s.cells;
      y += dir.dy * s.cells;
    }
  }
  return { x, y };
}

/** The index of the first step that breaks the cells rule or leaves 0..65534, or -1. */
export function invalidStep(x: number, y: number, steps: Step[]): number {
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const dir = DIRECTION[s.action];
    if (!dir) {
      if (s.cells !== 0) return i;
      continue;
    }
    if (s.cells === 0) return i;
    x += dir.dx * s.cells;
    y += dir.dy * s.cells;
    if (x < 0 || y < 0 || x > 65534 || y > 65534) return i;
  }
  return -1;
}
