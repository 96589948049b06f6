/**
 * Instants the store keeps that stand for a duration: an expiry set to now plus a lifetime, a
 * retry due after a backoff, an age counted from a record's creation. They must survive a
 * restart, so they are wall-clock instants, and the wall clock can be stepped (a box that
 * booted with a wrong hardware clock, NTP correcting it by hours). A step forward only ends
 * such waits early. A step back would stretch them by the whole step; these rules bound that:
 * an end further ahead than its whole length was set under a clock that has since gone back.
 * Durations that need not survive a restart are measured on the monotonic clock instead.
 */

/** How far a wall-clock reading may fall back (NTP's small steps, one second's rounding) before it counts as a step. */
export const STEP_SLACK_MS = 60_000;

/** Whether `end`, set at most `longestMs` after the instant it was set, lies further ahead of `now` than that could. */
export function setBeforeStepBack(end: number, longestMs: number, now: number): boolean {
  return end - now > longestMs + STEP_SLACK_MS;
}

/** When something that lasts at most `longestMs` ends, seen at `now`: its own end, or `longestMs` from now when the clock went back since it was set. */
export function boundedEnd(end: number, longestMs: number, now: number): number {
  return setBeforeStepBack(end, longestMs, now) ? now + longestMs : end;
}

/** Whether a wait that began at `since` has lasted `limitMs` at `now`; one that began ahead of `now` (the clock went back since) has. */
export function waitedFor(since: number, limitMs: number, now: number): boolean {
  return now - since >= limitMs || since - now > STEP_SLACK_MS;
}
