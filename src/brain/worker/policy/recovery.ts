/**
 * What happens to a bot job whose try failed, as a pure function: tried again after a backoff
 * (by a copy that takes its place, spec 3.1 "ABORTED: the system tries to recover"), handed to
 * a person after a few failed tries (ERROR, with an event), given up, or left for the next
 * brain when this one stops. Never an abort-and-copy loop: every try that was the job's own
 * failure counts, and the count is bounded.
 */
import type { JobRecord } from '../../../domain/requests/records.js';
import type { FailureCause } from '../motion/motion.js';
import { waitedFor } from '../../../domain/wall-clock.js';

/** Tries a job gets before it waits for a person. */
export const MAX_ATTEMPTS = 3;
/** Wait before the second try; each later one waits four times longer. */
const FIRST_BACKOFF_MS = 1000;
/** How long after a stopped bot's next FAULT_CLEAR a try behind it starts: time for the bot to move off. */
const AFTER_CLEAR_MS = 1000;

/**
 * Why a try failed (motion.ts says what each cause means); `lost` is not the job's fault.
 * `clearingInMs`: no path while a stopped bot of the level waits for its next FAULT_CLEAR, due
 * in that many ms; that bot may be the one in the way.
 */
export interface Failure {
  cause: FailureCause;
  reason: string;
  clearingInMs?: number;
}

export type Recovery =
  /** Abort and put a copy in its place, dispatched from `at`; `counts`: one attempt more. */
  | { kind: 'retry'; at: number; counts: boolean }
  /** ERROR: a person fixes the cause and triggers it, or gives it up. */
  | { kind: 'person' }
  /** ABORTED for good. */
  | { kind: 'give_up' }
  /** Nothing is written: the next brain takes the job up from the store. */
  | { kind: 'leave' };

/** What to do with `job` after `failure` at `now`. */
export function recover(job: JobRecord, failure: Failure, now: number): Recovery {
  if (failure.cause === 'stopping') return { kind: 'leave' };
  // Another try would find nothing there again: a person must find the carrier.
  if (failure.cause === 'no_carrier' || failure.cause === 'cancelled') return { kind: 'give_up' };
  // A cancelled job's carrier is taken home by its STORING, wherever the bot stopped.
  if (job.status === 'CANCELLING') return { kind: 'give_up' };
  if (failure.cause === 'lost') return { kind: 'retry', at: now, counts: false };
  // A stopped bot may block the only lane: tried again after its clearing, not counted. The
  // clearing's own tries are bounded (FAULT_CLEAR_TRIES), so these are too. Counted, three tries
  // 1 s and 4 s apart sent the job to a person before a 10 s clearing freed the lane.
  if (failure.cause === 'unreachable' && failure.clearingInMs !== undefined) return { kind: 'retry', at: now + failure.clearingInMs + AFTER_CLEAR_MS, counts: false };
  if (job.attempt >= MAX_ATTEMPTS) return { kind: 'person' };
  return { kind: 'retry', at: now + FIRST_BACKOFF_MS * 4 ** (job.attempt - 1), counts: true };
}

/**
 * Whether a job may be dispatched at `now` as far as its retry wait goes. The copy that waits
 * is made when its wait begins (`created_at`); one made ahead of `now` was made under a clock
 * that has since gone back, and would otherwise wait the whole step on top of its backoff.
 */
export function retryDue(job: Pick<JobRecord, 'retry_at' | 'created_at'>, now: number): boolean {
  return job.retry_at === null || waitedFor(job.created_at, job.retry_at - job.created_at, now);
}
