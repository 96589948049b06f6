/** Spec 2.15 to 2.18, 4.8 to 4.10: request inputs (12 kinds), requests, jobs, job graphs, triggers. */
import Type, { type TProperties } from 'typebox';
import { JOB_STATUSES, JOB_TYPES, REQUEST_STATUSES, REQUEST_TYPES } from '../../domain/requests/records.js';
import { TRIGGER_STATUSES } from '../../domain/requests/requests.js';
import { Nullable, Timestamp } from './common.js';

const strict = { additionalProperties: false } as const;
const Priority = Type.Optional(Type.Number({ minimum: 0, maximum: 100, default: 10, description: 'Spec 3.4: 5 low, 10 normal (default), 20 high; above 10 is taken first. A number, stored rounded to the nearest integer' }));
const BotId = Type.Integer({ minimum: 1 });
const BalconyIds = Type.Optional(Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 64, description: 'Balconies the work may go to; default every allowed one' }));
const SkuEntity = Type.Object({
  sku_id: Type.String({ minLength: 1, maxLength: 128 }),
  quantity: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  balcony_ids: BalconyIds,
}, strict);
const SkuEntities = Type.Array(SkuEntity, { minItems: 1, maxItems: 500 });
const Cell = Type.Object({ x: Type.Integer({ minimum: 0, maximum: 65535 }), y: Type.Integer({ minimum: 0, maximum: 65535 }) }, strict);

const kind = <K extends string, P extends TProperties>(type: K, title: string, properties: P, example: Record<string, unknown>) =>
  Type.Object({ type: Type.Literal(type), ...properties }, { ...strict, title, examples: [{ type, ...example }] });

export const FulfillmentInput = kind('FULFILLMENT', 'Fulfillment', { priority: Priority, entities: SkuEntities }, { priority: 10, entities: [{ sku_id: 'SKU-1001', quantity: 3 }] });
export const ReplenishmentInput = kind('REPLENISHMENT', 'Replenishment', { priority: Priority, entities: SkuEntities }, { entities: [{ sku_id: 'SKU-1001', quantity: 20 }] });
export const PutawayInput = kind('PUTAWAY', 'Putaway (new stock into empty boxes)', { priority: Priority, entities: SkuEntities }, { entities: [{ sku_id: 'SKU-1001', quantity: 12 }] });
export const FetchInput = kind('FETCH', 'Fetch carriers', {
  priority: Priority,
  entities: Type.Array(Type.Object({ carrier_id: Type.String({ minLength: 1, maxLength: 64 }), balcony_ids: BalconyIds }, strict), { minItems: 1, maxItems: 100 }),
}, { entities: [{ carrier_id: 'C-0001', balcony_ids: [1] }] });
export const OnboardInput = kind('ONBOARD', 'Onboard a bot', { bot_id: BotId, level_id: Type.Integer({ minimum: 1 }), balcony_id: Type.Integer({ minimum: 0 }) }, { bot_id: 7, level_id: 1, balcony_id: 1 });
export const OffboardInput = kind('OFFBOARD', 'Offboard a bot', { bot_id: BotId, balcony_id: Type.Optional(Type.Integer({ minimum: 0 })) }, { bot_id: 7, balcony_id: 1 });
export const RfidWriteInput = kind('RFID_WRITE', 'Write (and check) RFID tags of a level', {
  level_id: Type.Integer({ minimum: 1 }),
  tags: Type.Optional(Type.Array(Cell, { minItems: 1, maxItems: 10_000, description: 'Default: every tag of the level' })),
  check: Type.Optional(Type.Boolean({ default: true, description: 'Read each tag back after writing' })),
}, { level_id: 1, tags: [{ x: 3, y: 4 }] });
export const PauseInput = kind('PAUSE', 'Pause: bots get no new commands', {}, {});
export const ResumeInput = kind('RESUME', 'Resume after a pause', {}, {});
export const ChargingInput = kind('RECHARGE', 'Send a bot to a charger', { bot_id: BotId }, { bot_id: 3 });
export const UnchargingInput = kind('UNCHARGING', 'Take a bot off its charger (without bot_id: every charging bot, UNCHARGE_ALL)', { bot_id: Type.Optional(BotId) }, { bot_id: 3 });
export const CarrierOnboardingInput = kind('CARRIER_ONBOARDING', 'Bring a new carrier into storage through a balcony', {
  carrier_id: Type.String({ minLength: 1, maxLength: 64 }), balcony_id: Type.Integer({ minimum: 0 }),
}, { carrier_id: 'C-9001', balcony_id: 1 });

/** The body of POST /api/v2/requests: one of 12 kinds, told apart by `type`. */
export const RequestInputBody = Type.Union([
  FulfillmentInput, ReplenishmentInput, PutawayInput, FetchInput, OnboardInput, OffboardInput, RfidWriteInput, PauseInput, ResumeInput,
  ChargingInput, UnchargingInput, CarrierOnboardingInput,
], { description: 'One of the 12 creation input kinds (spec 4.10), chosen by `type`; docs/requests.md has every field with examples' });

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

export const TriggerBody = Type.Object({
  TriggerStatus: Type.Optional(Type.Enum([...TRIGGER_STATUSES], { default: 'SUCCEEDED_TRIGGER', description: 'SUCCEEDED_TRIGGER: done as planned; SHORT_PICK_TRIGGER: fewer items were there (selected_quantity = picked); DAMAGED_ITEM_TRIGGER: items damaged (selected_quantity = good items picked; the rest leave stock too); CANCELLED_TRIGGER: not done, nothing booked' })),
  selected_entity_id: Type.Optional(Type.String({ minLength: 1, description: 'What the person scanned: the SKU, box, carrier or entity id' })),
  selected_quantity: Type.Optional(Type.Integer({ exclusiveMinimum: 0 })),
}, strict);

export const AbortBody = Type.Object({
  detail: Type.String(),
  request_id: Type.String(),
  entity_feedback: Type.Array(Type.Object({
    entity_id: Type.String(), entity_type: Type.String(), error_code: Type.String({ description: 'Hexadecimal, 0x prefix; docs/requests.md' }), human_string: Type.String(),
  })),
}, { $id: 'RequestAborted', description: 'Request aborted by validation (spec 7)' });
