/**
 * What the store keeps about work: requests (spec 2.15) with their entities, and the jobs
 * they are split into (spec 2.16), each job naming the jobs it waits for (`parent_job_ids`).
 * Instants are epoch milliseconds. A request's status and its entity counters are derived
 * from its jobs and written in the same transaction as the job change that moves them.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { MeasurementUnit, OnEmptySkuAction } from '../site/layout.js';
import type { Cell } from '../site/load.js';
import { positionKey } from '../inventory/records.js';
import type { CreateInput } from './inputs.js';
import { BOT_JOBS, CARRIER_JOBS, PERSON_JOBS, type JobStatus, type JobType, type RequestStatus, type RequestType, type WaitingFor } from './vocabulary.js';

export {
  BOT_JOBS, CARRIER_JOBS, HOME_JOBS, JOB_STATUSES, JOB_TYPES, PERSON_JOBS, REQUEST_STATUSES, REQUEST_TYPES,
  type JobStatus, type JobType, type RequestStatus, type RequestType,
} from './vocabulary.js';

export interface EntityRecord {
  id: string;
  entity_id: string;
  entity_type: 'Sku' | 'Carrier' | 'Bot' | 'Level';
  job_type: JobType;
  sku_id: string | null;
  balcony_ids: number[];
  total_quantity: number;
  completed_quantity: number;
  succeeded_quantity: number;
  cancelled_quantity: number;
}

export interface RequestWarning {
  code: string;
  entity_id: string;
  message: string;
  missing_quantity: number;
}

/**
 * What a request was asked as: the `type` of the input posted, or RECOVERY for the brain's own.
 * The spec's request `type` has fewer values (a PUTAWAY is a REPLENISHMENT, a CARRIER_ONBOARDING
 * an ONBOARD, an RFID_WRITE an RFID_MAINTENANCE, a RECOVERY a RESUME), so it is kept beside it.
 */
export type InputType = CreateInput['type'];

export interface RequestRecord {
  id: string;
  /** The spec's request type (spec 2.15). */
  type: RequestType;
  /** What was posted; absent on requests stored before it was kept (`inputTypeOf` reads those). */
  input_type?: InputType;
  status: RequestStatus;
  priority: number;
  /** Order of arrival, 1, 2, ... (a durable sequence). */
  counter: number;
  level_id: number | null;
  bot_id: number | null;
  placing_pos: number | null;
  entities: EntityRecord[];
  warnings: RequestWarning[];
  /** A user asked to cancel it (cancel or cancel_all). */
  cancel_requested: boolean;
  /** The Idempotency-Key it was created under (scoped to the caller), if any. */
  idempotency_key: string | null;
  /** Why it was refused, for an ABORTED request that never had jobs (answered again on a retried post). */
  abort_feedback: { entity_id: string; entity_type: string; error_code: string; human_string: string }[] | null;
  /** Where a putaway's quantities go (answered again on a retried post). */
  placements: { box_id: number; carrier_id: string; sku_id: string; quantity: number }[] | null;
  created_at: number;
  updated_at: number;
}

/**
 * What a request was asked as, also for one stored before it was kept: then the brain's
 * recovery is told by its level (the only RESUME that has one), and an RFID_MAINTENANCE was an
 * RFID_WRITE. A PUTAWAY or CARRIER_ONBOARDING of then reads as the type it was planned as.
 */
export function inputTypeOf(r: Pick<RequestRecord, 'type' | 'input_type' | 'level_id'>): InputType {
  if (r.input_type !== undefined) return r.input_type;
  if (r.type === 'RESUME' && r.level_id !== null) return 'RECOVERY';
  return r.type === 'RFID_MAINTENANCE' ? 'RFID_WRITE' : r.type;
}

export { WAITING_FOR, type WaitingFor } from './vocabulary.js';

/** Why a job waits now, in one sentence a technician can act on. */
export interface JobWait {
  waiting_for: WaitingFor;
  reason: string;
}

/**
 * How far a job got, typed by what kind of work it is: a carrier moved by a bot, a bot moved
 * on its own, a person's work at a balcony, or a control job of the brain.
 */
export type JobProgress =
  /**
   * RETRIEVING, STORING, BUFFERING. `phase`: on the way to the carrier, carrying it, done.
   * `staged_at`: the buffer where a retrieved carrier waits for a balcony position.
   * `in_front_of`: a buffering sets this carrier aside from in front of that one.
   */
  | { kind: 'carrier'; phase: 'to_carrier' | 'carrying' | 'done' | null; staged_at: Cell | null; in_front_of: string | null }
  /** CHARGING, UNCHARGING, OFFBOARDING_BC, OFFBOARDING, MOVING_BOT, the RFID tag jobs, CLEAR_AUTOBAHN's moves. */
  | { kind: 'bot'; phase: 'to_target' | 'done' | null }
  /** A person's job at a balcony: how it was confirmed and what it booked. */
  | { kind: 'person'; trigger_status: string | null; booked_quantity: number | null }
  /** CHANGE_RFID_WRITING_MODE: the mode it sets. */
  | { kind: 'writing_mode'; writing_mode: boolean }
  /** The brain's own jobs (PAUSE, RESUME, ONBOARDING_BD, CONNECT_TO_BOTS, REFRESH_LEVEL, UNCHARGE_ALL). */
  | { kind: 'control' };

/** The progress a new job of this type starts with; `facts` are the plan's (the mode a writing-mode job sets, the carrier a buffering clears the way to). */
export function initialProgress(type: JobType, facts: { writing_mode?: boolean; in_front_of?: string } = {}): JobProgress {
  if (CARRIER_JOBS.has(type)) {
    return { kind: 'carrier', phase: null, staged_at: null, in_front_of: facts.in_front_of ?? null };
  }
  if (PERSON_JOBS.has(type)) return { kind: 'person', trigger_status: null, booked_quantity: null };
  if (type === 'CHANGE_RFID_WRITING_MODE') return { kind: 'writing_mode', writing_mode: facts.writing_mode ?? false };
  if (BOT_JOBS.has(type)) return { kind: 'bot', phase: null };
  return { kind: 'control' };
}

/** A new job of a request with every field at its start; `fields` fill in what the job is about. */
export function newJob(
  base: { id: string; request_id: string; type: JobType; entity_id: string; entity_index: number; seq: number; now: number },
  fields: Partial<JobRecord> = {},
  facts?: Parameters<typeof initialProgress>[1],
): JobRecord {
  return {
    id: base.id, request_id: base.request_id, type: base.type, status: 'CREATED', entity_id: base.entity_id, entity_index: base.entity_index,
    carrier_id: null, box_id: null, bot_id: null, level_id: null, balcony_id: null, balcony_ids: [], sku_id: null, sku_name: null, quantity: null,
    measurement_unit: null, on_empty_sku_action: null, is_selectable: false, wait: null, ended_because: null, progress: initialProgress(base.type, facts),
    attempt: 1, recovers: null, replaced_by: null, retry_at: null, parent_job_ids: [], target: null, seq: base.seq, created_at: base.now, updated_at: base.now,
    ...fields,
  };
}

/** The progress of a copy that tries a job again: from the start, with the plan's facts kept. */
export function retriedProgress(p: JobProgress): JobProgress {
  switch (p.kind) {
    case 'carrier': return { ...p, phase: null, staged_at: null };
    case 'bot': return { kind: 'bot', phase: null };
    case 'person': return { kind: 'person', trigger_status: null, booked_quantity: null };
    default: return p;
  }
}

export interface JobRecord {
  id: string;
  request_id: string;
  type: JobType;
  status: JobStatus;
  entity_id: string;
  /** Index of the request entity the job serves (-1 for none). */
  entity_index: number;
  carrier_id: string | null;
  box_id: number | null;
  bot_id: number | null;
  level_id: number | null;
  balcony_id: number | null;
  balcony_ids: number[];
  sku_id: string | null;
  sku_name: string | null;
  quantity: number | null;
  measurement_unit: MeasurementUnit | null;
  on_empty_sku_action: OnEmptySkuAction | null;
  is_selectable: boolean;
  /** Why it waits now (null when it does not wait, or has ended). */
  wait: JobWait | null;
  /** Why it ended otherwise than as planned (cancelled, aborted), or null. */
  ended_because: string | null;
  progress: JobProgress;
  /** 1 for the first try; a copy made to recover a failed try counts on. */
  attempt: number;
  /** The failed job this one is a copy of, and the copy that took a failed job's place. */
  recovers: string | null;
  replaced_by: string | null;
  /** Not dispatched before this instant (a retry's backoff), or null. */
  retry_at: number | null;
  parent_job_ids: string[];
  /** Where a moving job takes its carrier or bot: a cell of its level. */
  target: Cell | null;
  /** Sequence number of creation: breaks ties between jobs of one instant. */
  seq: number;
  created_at: number;
  updated_at: number;
}

export const requests: CollectionDef<RequestRecord> = {
  name: 'requests',
  key: (r) => r.id,
  indexes: [
    { name: 'open', of: (r) => (isFinalRequest(r.status) ? undefined : 1) },
    { name: 'idempotency_key', of: (r) => r.idempotency_key ?? undefined, unique: true },
    { name: 'status', of: (r) => r.status },
    // GET /requests, newest first by default: a page read from the end of it, not every request sorted.
    { name: 'created_at', of: (r) => r.created_at },
    // GET /requests?updated_at__gte=<the last poll>, an integration's poll of what changed: those alone read.
    { name: 'updated_at', of: (r) => r.updated_at },
    // The history pruner reads the ended requests oldest first and stops at the retention's cutoff.
    { name: 'ended', of: (r) => (isFinalRequest(r.status) ? r.updated_at : undefined) },
  ],
};

export const jobs: CollectionDef<JobRecord> = {
  name: 'jobs',
  key: (j) => j.id,
  indexes: [
    { name: 'request_id', of: (j) => j.request_id },
    { name: 'open', of: (j) => (isFinalJob(j.status) ? undefined : j.level_id ?? 0) },
    { name: 'carrier_id', of: (j) => j.carrier_id ?? undefined },
    { name: 'sku_id', of: (j) => (isFinalJob(j.status) ? undefined : j.sku_id ?? undefined) },
    // GET /jobs?status__eq=EXECUTING, an integration's poll: without it, every job ever read each time.
    { name: 'status', of: (j) => j.status },
    // POST /requests asks, for each candidate carrier inside its write transaction, whether open
    // work holds it: by `carrier_id` that decoded every job the carrier ever had.
    { name: 'open_carrier', of: (j) => (isFinalJob(j.status) ? undefined : j.carrier_id ?? undefined) },
    // A bot's request (RECHARGE, OFFBOARD, ...) asks whether open work holds the bot: its own open jobs, not every open job.
    { name: 'open_bot', of: (j) => (isFinalJob(j.status) ? undefined : j.bot_id ?? undefined) },
    // GET /jobs, newest first by default: a page read from the end of it, not every job sorted.
    { name: 'created_at', of: (j) => j.created_at },
    // GET /jobs?updated_at__gte=<the last poll>, an integration's poll of what changed: those alone read.
    { name: 'updated_at', of: (j) => j.updated_at },
    // ... and which carriers are being set down in front of it in its lane: the running jobs by
    // the cell they take their carrier to, where that read every open job of the level.
    { name: 'coming_to', of: (j) => (comingTo(j) ? positionKey(j.level_id!, j.target!.x, j.target!.y) : undefined) },
  ],
};

export const REQUEST_COLLECTIONS = [requests, jobs] as const;

const FINAL_JOB: ReadonlySet<JobStatus> = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);
const FINAL_REQUEST: ReadonlySet<RequestStatus> = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);

/**
 * The spec's free-form `details` of a job (2.16): why it waits (`waiting_for`, `reason`) or
 * why it ended, its progress, and its place in a chain of retries, with nothing that is unset.
 */
export function jobDetails(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (job.wait) Object.assign(out, job.wait);
  else if (job.ended_because) out['reason'] = job.ended_because;
  for (const [key, value] of Object.entries(job.progress)) if (key !== 'kind' && value !== null) out[key] = value;
  if (job.attempt > 1) out['attempt'] = job.attempt;
  if (job.recovers) out['recovers'] = job.recovers;
  if (job.replaced_by) out['replaced_by'] = job.replaced_by;
  if (job.retry_at !== null) out['retry_at'] = new Date(job.retry_at).toISOString();
  return out;
}

/**
 * Whether a job is setting its carrier down on its target cell now: a carrier is booked to its
 * storage space only as it is lifted, so until then it stands in front of deeper carriers
 * without the store showing it there (lanes.ts).
 */
export function comingTo(j: JobRecord): boolean {
  // Loose checks: migrations index records of older layouts, which may lack these fields.
  return j.carrier_id != null && j.target != null && j.level_id != null && (j.status === 'EXECUTING' || j.status === 'CANCELLING');
}

/** Whether a job status is final (spec 3.1). */
export function isFinalJob(status: JobStatus): boolean {
  return FINAL_JOB.has(status);
}

/** Whether a request status is terminal for pollers (spec 3.2). */
export function isFinalRequest(status: RequestStatus): boolean {
  return FINAL_REQUEST.has(status);
}
