/**
 * The 12 kinds of POST /api/v2/requests body (spec 4.10): the schemas the HTTP layer checks a
 * body against, and the types the domain receives, one read of the other. Plain JSON Schema
 * (TypeBox builds it), so the domain owns its inputs without knowing HTTP. Only fulfillment's
 * fields are in the spec; docs/requests.md documents the rest with examples.
 */
import Type, { type Static, type TProperties } from 'typebox';
import { TRIGGER_STATUSES, type JobType, type RequestType } from './vocabulary.js';

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

/**
 * What a kind of request does, for a client built from the OpenAPI document alone: the jobs it
 * makes (`jobs`, parents first) and which of them wait for a person at a balcony (`person`),
 * each finished with POST /api/v2/trigger/{job_id} once it is EXECUTING with
 * `details.waiting_for` = trigger. The request ends when every job has.
 */
interface Flow {
  request_type: RequestType;
  jobs: string;
  person: readonly JobType[];
}

const TRIGGER = 'POST /api/v2/trigger/{job_id} with {"TriggerStatus": "SUCCEEDED_TRIGGER"} (or SHORT_PICK_TRIGGER, DAMAGED_ITEM_TRIGGER, CANCELLED_TRIGGER with selected_quantity; see Trigger)';

/** The name of a kind's schema in the OpenAPI document: CARRIER_ONBOARDING is CarrierOnboardingInput. */
const schemaName = (type: string) => `${type.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}Input`;

const kind = <K extends string, P extends TProperties>(type: K, title: string, properties: P, example: Record<string, unknown>, flow: Flow) =>
  Type.Object({ type: Type.Literal(type), ...properties }, {
    ...strict,
    $id: schemaName(type),
    title,
    description: `${title}. Jobs: ${flow.jobs}. ${flow.person.length > 0 ? `A person finishes ${flow.person.join(', ')}: ${TRIGGER}.` : 'No job waits for a person.'} Read back as request type ${flow.request_type}.`,
    examples: [{ type, ...example }],
    'x-request-type': flow.request_type,
    'x-jobs': flow.jobs,
    'x-person-jobs': flow.person,
  });

export const FulfillmentInput = kind('FULFILLMENT', 'Fulfillment', { priority: Priority, entities: SkuEntities }, { priority: 10, entities: [{ sku_id: 'SKU-1001', quantity: 3 }] }, { request_type: 'FULFILLMENT', jobs: 'per carrier: BUFFERING of each carrier in front and STORING of it back, RETRIEVING, PICKING per box, STORING; a PACKING after every PICKING (and PICKING_ALERT)', person: ['PICKING', 'PICKING_ALERT', 'PACKING'] });
export const ReplenishmentInput = kind('REPLENISHMENT', 'Replenishment', { priority: Priority, entities: SkuEntities }, { entities: [{ sku_id: 'SKU-1001', quantity: 20 }] }, { request_type: 'REPLENISHMENT', jobs: 'per carrier: BUFFERING of each carrier in front and STORING of it back, RETRIEVING, REFILLING per box, STORING', person: ['REFILLING'] });
/** New stock into empty boxes; answered with where each quantity goes. */
export const PutawayInput = kind('PUTAWAY', 'Putaway (new stock into empty boxes)', { priority: Priority, entities: SkuEntities }, { entities: [{ sku_id: 'SKU-1001', quantity: 12 }] }, { request_type: 'REPLENISHMENT', jobs: 'as REPLENISHMENT, into empty boxes (the 201 answer\'s `placements` says which)', person: ['REFILLING'] });
export const FetchInput = kind('FETCH', 'Fetch carriers', {
  priority: Priority,
  entities: Type.Array(Type.Object({ carrier_id: Type.String({ minLength: 1, maxLength: 64 }), balcony_ids: BalconyIds }, strict), { minItems: 1, maxItems: 100 }),
}, { entities: [{ carrier_id: 'C-0001', balcony_ids: [1] }] }, { request_type: 'FETCH', jobs: 'per carrier: BUFFERING of each carrier in front and STORING of it back, RETRIEVING, CHECKING, STORING', person: ['CHECKING'] });
export const OnboardInput = kind('ONBOARD', 'Onboard a bot', { bot_id: BotId, level_id: Type.Integer({ minimum: 1 }), balcony_id: Type.Integer({ minimum: 0 }) }, { bot_id: 7, level_id: 1, balcony_id: 1 }, { request_type: 'ONBOARD', jobs: 'ONBOARDING (a person puts the bot on the balcony port), ONBOARDING_BD (the bot joins the level)', person: ['ONBOARDING'] });
export const OffboardInput = kind('OFFBOARD', 'Offboard a bot', { bot_id: BotId, balcony_id: Type.Optional(Type.Integer({ minimum: 0 })) }, { bot_id: 7, balcony_id: 1 }, { request_type: 'OFFBOARD', jobs: 'OFFBOARDING (the bot drives to the balcony), OFFBOARDING_BC (parked out of dispatch), OFFBOARDING_BD (a person takes it off; the bot leaves service)', person: ['OFFBOARDING_BD'] });
export const RfidWriteInput = kind('RFID_WRITE', 'Write (and check) RFID tags of a level', {
  level_id: Type.Integer({ minimum: 1 }),
  tags: Type.Optional(Type.Array(Cell, { minItems: 1, maxItems: 10_000, description: 'Default: every tag of the level' })),
  check: Type.Optional(Type.Boolean({ default: true, description: 'Read each tag back after writing' })),
}, { level_id: 1, tags: [{ x: 3, y: 4 }] }, { request_type: 'RFID_MAINTENANCE', jobs: 'CHANGE_RFID_WRITING_MODE (on), WRITE_RFID_TAG per tag, CHECK_RFID_TAG per tag (with `check`), CHANGE_RFID_WRITING_MODE (off), REFRESH_LEVEL', person: [] });
export const PauseInput = kind('PAUSE', 'Pause: bots get no new commands', {}, {}, { request_type: 'PAUSE', jobs: 'PAUSE', person: [] });
export const ResumeInput = kind('RESUME', 'Resume after a pause', {}, {}, { request_type: 'RESUME', jobs: 'RESUME', person: [] });
export const ChargingInput = kind('RECHARGE', 'Send a bot to a charger', { bot_id: BotId }, { bot_id: 3 }, { request_type: 'RECHARGE', jobs: 'CHARGING', person: [] });
export const UnchargingInput = kind('UNCHARGING', 'Take a bot off its charger (without bot_id: every charging bot, UNCHARGE_ALL)', { bot_id: Type.Optional(BotId) }, { bot_id: 3 }, { request_type: 'UNCHARGING', jobs: 'UNCHARGING with `bot_id`; without it UNCHARGE_ALL', person: [] });
export const CarrierOnboardingInput = kind('CARRIER_ONBOARDING', 'Bring a new carrier into storage through a balcony', {
  carrier_id: Type.String({ minLength: 1, maxLength: 64 }), balcony_id: Type.Integer({ minimum: 0 }),
}, { carrier_id: 'C-9001', balcony_id: 1 }, { request_type: 'ONBOARD', jobs: 'ONBOARDING (a person places the carrier at the balcony), STORING', person: ['ONBOARDING'] });

/** The body of POST /api/v2/requests: one of 12 kinds, told apart by `type`. */
const KINDS = [
  FulfillmentInput, ReplenishmentInput, PutawayInput, FetchInput, OnboardInput, OffboardInput, RfidWriteInput, PauseInput, ResumeInput,
  ChargingInput, UnchargingInput, CarrierOnboardingInput,
] as const;

export const RequestInputSchema = Type.Union([...KINDS], {
  $id: 'RequestInput',
  description: 'One of the 12 creation input kinds (spec 4.10), chosen by `type`; each kind says the jobs it makes and which wait for a person; docs/requests.md has every field with examples',
  discriminator: { propertyName: 'type', mapping: Object.fromEntries(KINDS.map((k) => [k.properties.type.const, `#/components/schemas/${schemaName(k.properties.type.const)}`])) },
});

/** Every kind a request may have been created from: the 12 of the API and the brain's own RECOVERY. */
export const INPUT_TYPES = [
  'FULFILLMENT', 'REPLENISHMENT', 'PUTAWAY', 'FETCH', 'ONBOARD', 'OFFBOARD', 'RFID_WRITE', 'PAUSE', 'RESUME', 'RECHARGE', 'UNCHARGING', 'CARRIER_ONBOARDING', 'RECOVERY',
] as const satisfies readonly CreateInput['type'][];

export type SkuEntityInput = Static<typeof SkuEntity>;
export type FetchInput = Static<typeof FetchInput>;
/** The 12 kinds of POST /api/v2/requests. */
export type RequestInput = Static<typeof RequestInputSchema>;
export type InputKind = RequestInput['type'];

/**
 * Not an API input: the brain's own request for a level (docs/requests.md): after a line
 * outage it reconnects and refreshes the level; either way it takes home the carriers left on
 * bots with no work.
 */
export interface RecoveryInput {
  type: 'RECOVERY';
  level_id: number;
  /** The line came back: CONNECT_TO_BOTS and REFRESH_LEVEL first. */
  reconnect: boolean;
  /** Carriers the store places on a bot (the highway, or under a bot holding it) with no open work. */
  stranded: readonly string[];
}

/** What Requests.create takes: an API input, or one the brain makes itself. */
export type CreateInput = RequestInput | RecoveryInput;

/** The body of POST /trigger/{job_id}: how a person finished a job at a balcony. */
export const TriggerBody = Type.Object({
  TriggerStatus: Type.Optional(Type.Enum([...TRIGGER_STATUSES], { $id: 'TriggerStatus', default: 'SUCCEEDED_TRIGGER', description: 'SUCCEEDED_TRIGGER: done as planned; SHORT_PICK_TRIGGER: fewer items were there (selected_quantity = picked); DAMAGED_ITEM_TRIGGER: items damaged (selected_quantity = good items picked; the rest leave stock too); CANCELLED_TRIGGER: not done, nothing booked' })),
  selected_entity_id: Type.Optional(Type.String({ minLength: 1, description: 'What the person scanned: the SKU, box, carrier or entity id' })),
  selected_quantity: Type.Optional(Type.Integer({ exclusiveMinimum: 0 })),
}, { ...strict, $id: 'Trigger', description: 'How a person finished a job at a balcony; an empty body is SUCCEEDED_TRIGGER' });

export type TriggerInput = Static<typeof TriggerBody>;
