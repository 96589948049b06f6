/**
 * A balcony LED sequence as the spec gives it (steps of one or more colours and a duration)
 * turned into what the LED controller plays: one colour per step. A step of several colours
 * plays them in turn, sharing its duration, so a two-colour step of 1 s blinks.
 */
import { ValidationError } from '../errors.js';

export interface LedStepInput {
  colors: number[][];
  /** Seconds. */
  duration: number;
}

export interface LedColourStep {
  r: number;
  g: number;
  b: number;
  duration_ms: number;
}

/** The controller's limits: most steps, and the shortest and longest step in milliseconds. */
export interface LedLimits {
  maxSteps: number;
  minMs: number;
  maxMs: number;
}

/** The controller's steps for a sequence; a sequence it cannot play is a 422 naming the step. */
export function ledColourSteps(status: readonly LedStepInput[], limits: LedLimits): LedColourStep[] {
  const out: LedColourStep[] = [];
  status.forEach((step, i) => {
    const share = Math.round((step.duration * 1000) / step.colors.length);
    if (share < limits.minMs) {
      throw ValidationError.of(['body', 'status', i, 'duration'], `${step.colors.length} colours in ${step.duration} s leave each less than the controller's shortest step of ${limits.minMs} ms`);
    }
    for (const [r, g, b] of step.colors) out.push({ r: r!, g: g!, b: b!, duration_ms: Math.min(share, limits.maxMs) });
  });
  if (out.length > limits.maxSteps) {
    throw ValidationError.of(['body', 'status'], `${out.length} colours in all: the LED controller plays at most ${limits.maxSteps}`);
  }
  return out;
}
