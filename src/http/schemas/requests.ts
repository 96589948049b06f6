/** Spec 2.15 to 2.18, 4.8 to 4.10: request inputs (12 kinds), requests, jobs, job graphs, triggers. */
import Type from 'typebox';
import { JOB_STATUSES, JOB_TYPES, REQUEST_STATUSES, REQUEST_TYPES } from '../../domain/requests/vocabulary.js';
import { Nullable, Timestamp } from './common.js';

export {
  FulfillmentInput, ReplenishmentInput, PutawayInput, FetchInput, OnboardInput, OffboardInput, RfidWriteInput, PauseInput, ResumeInput,
  ChargingInput, UnchargingInput, CarrierOnboardingInput, RequestInputSchema as RequestInputBody, TriggerBody,
} from '../../domain/requests/inputs.js';

const RequestEntity = Type.Object({
  id: Type.String(),
  entity_id: Type.String(),
  entity_type: Type.String({ description: 'Sku, Carrier, Bot or Level' }),
  job_type: Type.String(),
  sku_id: Nullable(Type.String()),
  balcony_ids: Type.Array(Type.Integer()),
  total_quantity: Type.Integer(),
  completed_quantity: Type.Integer(),
  succeeded_quantity: Type.Integer(),
  cancelled_quantity: Type.Integer(),
});

export const RequestResponse = Type.Object({
  id: Type.String(),
  type: Type.Enum([...REQUEST_TYPES]),
  status: Type.Enum([...REQUEST_STATUSES]),
  priority: Type.Integer(),
  counter: Type.Integer(),
  level_id: Nullable(Type.Integer()),
  bot_id: Nullable(Type.Integer()),
  placing_pos: Nullable(Type.Integer()),
  entities: Type.Array(RequestEntity),
  warnings: Type.Array(Type.Object({}, { additionalProperties: true })),
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
}, { $id: 'RequestResponseComposite', description: 'Request (spec 2.15)' });

export const PutawayResponse = Type.Object({
  ...RequestResponse.properties,
  placements: Type.Array(Type.Object({ box_id: Type.Integer(), carrier_id: Type.String(), sku_id: Type.String(), quantity: Type.Integer() })),
}, { $id: 'PutawayResponse', description: 'A putaway request with where each quantity goes' });

const jobFields = {
  id: Type.String(),
  request_id: Type.String(),
  type: Type.Enum([...JOB_TYPES]),
  status: Type.Enum([...JOB_STATUSES]),
  entity_id: Type.String(),
  carrier_id: Nullable(Type.String()),
  level_id: Nullable(Type.Integer()),
  balcony_id: Nullable(Type.Integer()),
  sku_id: Nullable(Type.String()),
  quantity: Nullable(Type.Integer()),
  details: Type.Object({}, { additionalProperties: true, description: 'Why the job waits (`waiting_for`, `reason`) and what it did' }),
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
};

export const JobResponse = Type.Object({
  ...jobFields,
  box_id: Nullable(Type.Integer()),
  bot_id: Nullable(Type.Integer()),
  balcony_ids: Type.Array(Type.Integer()),
  sku_name: Nullable(Type.String()),
  measurement_unit: Nullable(Type.String()),
  on_empty_sku_action: Nullable(Type.String()),
  is_selectable: Type.Boolean(),
}, { $id: 'JobResponse', description: 'Job (spec 2.16)' });

export const JobGraphResponse = Type.Object({
  request_id: Type.String(),
  nodes: Type.Array(Type.Object({ ...jobFields, type: Type.String(), status: Type.String(), parent_job_ids: Type.Array(Type.String()) })),
}, { $id: 'JobGraph', description: 'Job graph (spec 2.16)' });


export const AbortBody = Type.Object({
  detail: Type.String(),
  request_id: Type.String(),
  entity_feedback: Type.Array(Type.Object({
    entity_id: Type.String(), entity_type: Type.String(), error_code: Type.String({ description: 'Hexadecimal, 0x prefix; docs/requests.md' }), human_string: Type.String(),
  })),
}, { $id: 'RequestAborted', description: 'Request aborted by validation (spec 7)' });
