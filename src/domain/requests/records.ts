/**
 * What the store keeps about work: requests (spec 2.15) with their entities, and the jobs
 * they are split into (spec 2.16), each job naming the jobs it waits for (`parent_job_ids`).
 * Instants are epoch milliseconds. A request's status and its entity counters are derived
 * from its jobs and written in the same transaction as the job change that moves them.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { MeasurementUnit, OnEmptySkuAction } from '../site/layout.js';

export const REQUEST_TYPES = [
  'FULFILLMENT', 'REPLENISHMENT', 'FETCH', 'RFID_MAINTENANCE', 'ONBOARD', 'OFFBOARD', 'PAUSE', 'RESUME', 'UNCHARGING', 'RECHARGE',
] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

export const REQUEST_STATUSES = ['CREATED', 'ACCEPTED', 'EXECUTING', 'SUCCEEDED', 'CANCELLED', 'ABORTED'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export const JOB_TYPES = [
  'BUFFERING', 'RETRIEVING', 'STORING', 'PICKING', 'PICKING_ALERT', 'REFILLING', 'CHECKING', 'PACKING', 'ONBOARDING', 'ONBOARDING_BD',
  'OFFBOARDING', 'OFFBOARDING_BD', 'OFFBOARDING_BC', 'PAUSE', 'RESUME', 'MOVING_BOT', 'CONNECT_TO_BOTS', 'REFRESH_LEVEL', 'UNCHARGE_ALL',
  'CLEAR_AUTOBAHN', 'CHARGING', 'UNCHARGING', 'CHECK_RFID_TAG', 'WRITE_RFID_TAG', 'CHANGE_RFID_WRITING_MODE',
] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATUSES = ['CREATED', 'ACCEPTED', 'EXECUTING', 'CANCELLING', 'SUCCEEDED', 'CANCELLED', 'ABORTED', 'ERROR'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Jobs a person finishes at a balcony with POST /trigger/{job_id}. */
export const PERSON_JOBS: ReadonlySet<JobType> = new Set(['PICKING', 'PICKING_ALERT', 'REFILLING', 'CHECKING', 'PACKING', 'ONBOARDING', 'OFFBOARDING_BD']);

/** Jobs a bot carries out by moving. */
export const BOT_JOBS: ReadonlySet<JobType> = new Set(['BUFFERING', 'RETRIEVING', 'STORING', 'OFFBOARDING_BC', 'OFFBOARDING', 'MOVING_BOT', 'CHARGING', 'UNCHARGING', 'CHECK_RFID_TAG', 'WRITE_RFID_TAG']);

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

export interface RequestRecord {
  id: string;
  type: RequestType;
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

/** Why a job is not moving on, and what it waits for: the answer to "why is nothing moving?". */
export interface JobDetails {
  waiting_for?: 'parents' | 'bot' | 'balcony' | 'trigger' | 'carriers_in_front' | 'system_paused' | 'storage_space' | 'bot_motion';
  reason?: string;
  [key: string]: unknown;
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
  details: JobDetails;
  parent_job_ids: string[];
  /** Where a moving job takes its carrier or bot: a cell of its level. */
  target: { x: number; y: number } | null;
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
  ],
};

export const REQUEST_COLLECTIONS = [requests, jobs] as const;

const FINAL_JOB: ReadonlySet<JobStatus> = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);
const FINAL_REQUEST: ReadonlySet<RequestStatus> = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);

/** Whether a job status is final (spec 3.1). */
export function isFinalJob(status: JobStatus): boolean {
  return FINAL_JOB.has(status);
}

/** Whether a request status is terminal for pollers (spec 3.2). */
export function isFinalRequest(status: RequestStatus): boolean {
  return FINAL_REQUEST.has(status);
}
