/**
 * The words of work (spec 2.15, 2.16): request and job types and statuses, the job families
 * and the trigger statuses. No imports, so the browser console builds from the same lists the
 * daemon keeps and sends.
 */

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

/** Jobs that move a carrier: a bot goes to it, lifts it, takes it to a target and lowers it (or holds it at a balcony). */
export const CARRIER_JOBS: ReadonlySet<JobType> = new Set(['RETRIEVING', 'STORING', 'BUFFERING', 'CLEAR_AUTOBAHN']);

/** Carrier jobs that take a carrier home: a cancel leaves them be, so no carrier is forgotten outside storage. */
export const HOME_JOBS: ReadonlySet<JobType> = new Set(['STORING', 'CLEAR_AUTOBAHN']);

/** Jobs a bot carries out by moving. */
export const BOT_JOBS: ReadonlySet<JobType> = new Set(['BUFFERING', 'RETRIEVING', 'STORING', 'OFFBOARDING', 'MOVING_BOT', 'CLEAR_AUTOBAHN', 'CHARGING', 'UNCHARGING', 'CHECK_RFID_TAG', 'WRITE_RFID_TAG']);

/** How a person finishes a job at a balcony (POST /trigger/{job_id}). */
export const TRIGGER_STATUSES = ['SUCCEEDED_TRIGGER', 'SHORT_PICK_TRIGGER', 'DAMAGED_ITEM_TRIGGER', 'CANCELLED_TRIGGER'] as const;
export type TriggerStatus = (typeof TRIGGER_STATUSES)[number];

/** What a job that does not move on waits for (its `details.waiting_for`): the answer to "why is nothing moving?". */
export const WAITING_FOR = [
  'parents', 'bot', 'line', 'balcony', 'trigger', 'carriers_in_front', 'system_paused', 'storage_space', 'bot_motion', 'retry', 'person',
] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];
