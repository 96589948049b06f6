/** Spec 2.15 to 2.18, 4.8 to 4.10: request inputs (12 kinds), requests, jobs, job graphs, triggers. */
import Type from 'typebox';
import { MeasurementUnit, OnEmptySkuAction } from '../../domain/inventory/inputs.js';
import { INPUT_TYPES } from '../../domain/requests/inputs.js';
import { JOB_STATUSES, JOB_TYPES, PERSON_JOBS, REQUEST_STATUSES, REQUEST_TYPES, WAITING_FOR } from '../../domain/requests/vocabulary.js';
import { Nullable, Timestamp } from './common.js';

export {
  FulfillmentInput, ReplenishmentInput, PutawayInput, FetchInput, OnboardInput, OffboardInput, RfidWriteInput, PauseInput, ResumeInput,
  ChargingInput, UnchargingInput, CarrierOnboardingInput, RequestInputSchema as RequestInputBody, TriggerBody,
} from '../../domain/requests/inputs.js';

export const RequestTypeSchema = Type.Enum([...REQUEST_TYPES], {
  $id: 'RequestType', description: 'The spec\'s request type (2.17): a PUTAWAY reads REPLENISHMENT, a CARRIER_ONBOARDING ONBOARD, an RFID_WRITE RFID_MAINTENANCE; `input_type` keeps what was posted',
});
export const RequestStatusSchema = Type.Enum([...REQUEST_STATUSES], { $id: 'RequestStatus', description: 'Spec 3.1; SUCCEEDED, CANCELLED and ABORTED are final' });
export const JobTypeSchema = Type.Enum([...JOB_TYPES], { $id: 'JobType', description: `Spec 2.18. A person finishes ${[...PERSON_JOBS].join(', ')} with POST /api/v2/trigger/{job_id}` });
export const JobStatusSchema = Type.Enum([...JOB_STATUSES], { $id: 'JobStatus', description: 'Spec 3.1; SUCCEEDED, CANCELLED and ABORTED are final; ERROR waits for a person (`details.waiting_for` = person)' });
export const WaitingForSchema = Type.Enum([...WAITING_FOR], {
  $id: 'WaitingFor',
  description: 'What a job that does not move on waits for. `trigger`: a person at the balcony finishes it with POST /api/v2/trigger/{job_id} (PICKING, PICKING_ALERT, REFILLING, CHECKING, PACKING, ONBOARDING, OFFBOARDING_BD; a PACKING follows each PICKING and waits for its own trigger); `person`: a job in ERROR, tried again or given up with the same call; the rest clear on their own',
});

const JobDetails = Type.Object({
  waiting_for: Type.Optional(WaitingForSchema),
  reason: Type.Optional(Type.String({ description: 'Why it waits, or why it ended, in one sentence' })),
  attempt: Type.Optional(Type.Integer({ minimum: 2, description: 'A retry: which attempt this job is' })),
  recovers: Type.Optional(Type.String({ description: 'A retry: the failed job it tries again' })),
  replaced_by: Type.Optional(Type.String({ description: 'The job that tries this failed one again' })),
  retry_at: Type.Optional(Type.String({ format: 'date-time', description: 'When a failed bot job is tried again' })),
  trigger_status: Type.Optional(Type.String({ description: 'A person\'s job: how it was triggered' })),
  booked_quantity: Type.Optional(Type.Integer({ description: 'A pick or refill: the quantity its trigger booked' })),
}, {
  $id: 'JobDetails', additionalProperties: true,
  description: 'Why the job waits (`waiting_for`, `reason`) and what it did (its progress, `attempt`, `recovers`, `replaced_by`, `retry_at`)',
});

const RequestEntity = Type.Object({
  id: Type.String(),
  entity_id: Type.String(),
  entity_type: Type.Enum(['Sku', 'Carrier', 'Bot', 'Level'], { $id: 'EntityType' }),
  job_type: JobTypeSchema,
  sku_id: Nullable(Type.String()),
  balcony_ids: Type.Array(Type.Integer()),
  total_quantity: Type.Integer(),
  completed_quantity: Type.Integer(),
  succeeded_quantity: Type.Integer(),
  cancelled_quantity: Type.Integer(),
}, { $id: 'RequestEntity' });

export const RequestResponse = Type.Object({
  id: Type.String(),
  type: RequestTypeSchema,
  input_type: Type.Enum([...INPUT_TYPES], { $id: 'InputType', description: 'Beyond the spec: the `type` that was posted (RECOVERY: the brain\'s own, after a line outage)' }),
  status: RequestStatusSchema,
  priority: Type.Integer(),
  counter: Type.Integer(),
  level_id: Nullable(Type.Integer()),
  bot_id: Nullable(Type.Integer()),
  placing_pos: Nullable(Type.Integer()),
  entities: Type.Array(RequestEntity),
  warnings: Type.Array(Type.Object({}, { additionalProperties: true })),
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
}, { $id: 'Request', description: 'Request (spec 2.15)' });

const Placement = Type.Object({ box_id: Type.Integer(), carrier_id: Type.String(), sku_id: Type.String(), quantity: Type.Integer() }, { $id: 'Placement', description: 'Where a putaway puts a quantity' });

export const RequestCreated = Type.Object({
  ...RequestResponse.properties,
  placements: Type.Array(Placement, { description: 'PUTAWAY: where each quantity goes. Every other kind: empty' }),
}, { $id: 'RequestCreated', description: 'The request as created (spec 2.15), with `placements`. The jobs each kind makes and the ones that wait for a person are in the description of POST /api/v2/requests and in `x-jobs` of each input kind' });

const jobFields = {
  id: Type.String(),
  request_id: Type.String(),
  type: JobTypeSchema,
  status: JobStatusSchema,
  entity_id: Type.String(),
  carrier_id: Nullable(Type.String()),
  level_id: Nullable(Type.Integer()),
  balcony_id: Nullable(Type.Integer()),
  sku_id: Nullable(Type.String()),
  quantity: Nullable(Type.Integer()),
  details: JobDetails,
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
};

export const JobResponse = Type.Object({
  ...jobFields,
  box_id: Nullable(Type.Integer()),
  bot_id: Nullable(Type.Integer()),
  balcony_ids: Type.Array(Type.Integer()),
  sku_name: Nullable(Type.String()),
  measurement_unit: Nullable(MeasurementUnit),
  on_empty_sku_action: Nullable(OnEmptySkuAction),
  is_selectable: Type.Boolean(),
}, { $id: 'Job', description: 'Job (spec 2.16). One with `details.waiting_for` = trigger waits for POST /api/v2/trigger/{job_id}' });

export const JobGraphResponse = Type.Object({
  request_id: Type.String(),
  nodes: Type.Array(Type.Object({ ...jobFields, parent_job_ids: Type.Array(Type.String()) }, { $id: 'JobGraphNode' })),
}, { $id: 'JobGraph', description: 'Job graph (spec 2.16)' });


export const AbortBody = Type.Object({
  detail: Type.String(),
  request_id: Type.String(),
  entity_feedback: Type.Array(Type.Object({
    entity_id: Type.String(), entity_type: Type.String(), error_code: Type.String({ description: 'Hexadecimal, 0x prefix; docs/requests.md' }), human_string: Type.String(),
  }, { $id: 'EntityFeedback' })),
}, { $id: 'RequestAborted', description: 'Request aborted by validation (spec 7)' });
