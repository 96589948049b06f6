/**
 * When the brain's own jobs run, as a pure function: PAUSE, RESUME, ONBOARDING_BD,
 * CHANGE_RFID_WRITING_MODE, OFFBOARDING_BC, REFRESH_LEVEL and UNCHARGE_ALL at once;
 * CONNECT_TO_BOTS once every bot of its level in the database answers on the line, or after
 * CONNECT_WAIT_MS with those that do (the others are named, and wait as offline bots do).
 */
import type { JobRecord, JobType, JobWait } from '../../../domain/requests/records.js';
import type { MotionBot } from '../motion/motion.js';
import { waitedFor } from '../../../domain/wall-clock.js';

/** How long a reconnection waits for every bot of the level before it goes on with those that answer. */
export const CONNECT_WAIT_MS = 30_000;

const CONTROL_JOBS: ReadonlySet<JobType> = new Set([
  'PAUSE', 'RESUME', 'ONBOARDING_BD', 'CHANGE_RFID_WRITING_MODE', 'OFFBOARDING_BC', 'CONNECT_TO_BOTS', 'REFRESH_LEVEL', 'UNCHARGE_ALL',
]);

export interface ControlFacts {
  now: number;
  /** The job's level's bots as its motion sees them. */
  bots: readonly MotionBot[];
  /** Ids of the bots the database has on the job's level. */
  botsOnLevel: readonly number[];
}

export type ControlStep = { kind: 'not_mine' } | { kind: 'wait'; wait: JobWait } | { kind: 'run'; note?: string };

/** Whether a job is one of the brain's own (the others need no facts gathered for controlStep). */
export function isControlJob(job: JobRecord): boolean {
  return CONTROL_JOBS.has(job.type);
}

/** Whether a ready job is the brain's own, and whether it runs now. */
export function controlStep(job: JobRecord, facts: ControlFacts): ControlStep {
  if (!isControlJob(job)) return { kind: 'not_mine' };
  if (job.type !== 'CONNECT_TO_BOTS') return { kind: 'run' };
  const answering = new Set(facts.bots.filter((b) => b.online).map((b) => b.id));
  const missing = facts.botsOnLevel.filter((id) => !answering.has(id));
  if (missing.length === 0) return { kind: 'run', note: `every bot of the level answers (${facts.botsOnLevel.length})` };
  if (waitedFor(job.created_at, CONNECT_WAIT_MS, facts.now)) return { kind: 'run', note: `bot(s) ${missing.join(', ')} did not answer within ${CONNECT_WAIT_MS / 1000} s; they rejoin when they do` };
  return { kind: 'wait', wait: { waiting_for: 'line', reason: `waiting for bot(s) ${missing.join(', ')} to answer on the radio line of level ${job.level_id}` } };
}
