/**
 * The job state machine of spec 3.1, and what a request's status and entity counters are
 * given its jobs (spec 3.2 leaves request transitions open; docs/requests.md says ours).
 * Pure functions: the store and the brain call them, nothing here writes.
 */
import { ConflictError } from '../errors.js';
import { isFinalJob, type EntityRecord, type JobRecord, type JobStatus, type RequestRecord, type RequestStatus } from './records.js';

// Spec 3.1, plus the moves it leaves open: into and out of CREATED (a plan that becomes
// ready, or is dropped) and out of ERROR (retried or given up), and EXECUTING -> SUCCEEDED,
// which the spec's table implies by calling SUCCEEDED final.
const NEXT: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  CREATED: ['ACCEPTED', 'CANCELLED', 'ABORTED'],
  ACCEPTED: ['EXECUTING', 'ERROR', 'CANCELLING', 'ABORTED'],
  EXECUTING: ['SUCCEEDED', 'ERROR', 'CANCELLING', 'ABORTED'],
  CANCELLING: ['CANCELLED', 'ABORTED'],
  ERROR: ['ACCEPTED', 'CANCELLING', 'ABORTED'],
  SUCCEEDED: [],
  CANCELLED: [],
  ABORTED: [],
};

/** Whether a job may move from `from` to `to`. */
export function canMove(from: JobStatus, to: JobStatus): boolean {
  return NEXT[from].includes(to);
}

/** Throws a ConflictError naming the job unless the move is allowed. */
export function assertMove(job: JobRecord, to: JobStatus): void {
  if (!canMove(job.status, to)) throw new ConflictError(`job ${job.id} (${job.type}) is ${job.status} and cannot become ${to}`);
}

/** Jobs that count for their request: an aborted job the brain replaced does not. */
function counted(job: JobRecord): boolean {
  return !(job.status === 'ABORTED' && job.replaced_by !== null);
}

/**
 * A request's status from its jobs: CREATED while every job is a plan, ACCEPTED once work is
 * queued, EXECUTING once any job runs or ended, and when every job is final: CANCELLED if a
 * user cancelled and something was cancelled, ABORTED if a job was aborted and not replaced,
 * else SUCCEEDED.
 */
export function requestStatus(request: RequestRecord, all: readonly JobRecord[]): RequestStatus {
  const list = all.filter(counted);
  if (list.length === 0) return request.cancel_requested ? 'CANCELLED' : request.status;
  if (list.every((j) => isFinalJob(j.status))) {
    const aborted = list.some((j) => j.status === 'ABORTED');
    // A job aborted for good cancels the storing of a carrier that never left: that is no cancellation of the user's.
    if (list.some((j) => j.status === 'CANCELLED') && (request.cancel_requested || !aborted)) return 'CANCELLED';
    if (aborted) return 'ABORTED';
    return 'SUCCEEDED';
  }
  if (list.some((j) => j.status === 'EXECUTING' || j.status === 'CANCELLING' || j.status === 'ERROR' || isFinalJob(j.status))) return 'EXECUTING';
  if (list.some((j) => j.status === 'ACCEPTED')) return 'ACCEPTED';
  return 'CREATED';
}

/**
 * Entity counters from the jobs that work the entity (its `job_type`, and for picking the
 * PICKING_ALERT of quantities handled outside the system): completed is the planned quantity of
 * those that succeeded, succeeded what they booked (a short pick books fewer), cancelled the
 * planned quantity of those cancelled or aborted. So total = completed + cancelled + what is
 * still open, at every moment.
 */
export function entityCounters(entity: EntityRecord, index: number, all: readonly JobRecord[]): EntityRecord {
  let completed = 0;
  let succeeded = 0;
  let cancelled = 0;
  for (const job of all) {
    if (job.entity_index !== index || !worksEntity(entity, job) || !counted(job) || !isFinalJob(job.status)) continue;
    const planned = job.quantity ?? 1;
    if (job.status === 'SUCCEEDED') {
      completed += planned;
      succeeded += job.progress.kind === 'person' && job.progress.booked_quantity !== null ? job.progress.booked_quantity : planned;
    } else cancelled += planned;
  }
  return { ...entity, completed_quantity: completed, succeeded_quantity: succeeded, cancelled_quantity: cancelled };
}

function worksEntity(entity: EntityRecord, job: JobRecord): boolean {
  return job.type === entity.job_type || (entity.job_type === 'PICKING' && job.type === 'PICKING_ALERT');
}
