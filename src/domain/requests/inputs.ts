/**
 * The 12 kinds of POST /api/v2/requests body (spec 4.10), as the domain receives them once
 * the HTTP layer has checked their schemas (src/http/schemas/requests.ts). Only fulfillment's
 * fields are in the spec; docs/requests.md documents the rest with examples.
 */

export interface SkuEntityInput {
  sku_id: string;
  quantity: number;
  /** Balconies the items may be brought to; default: every balcony the SKU allows. */
  balcony_ids?: number[];
}

export interface FulfillmentInput {
  type: 'FULFILLMENT';
  priority?: number;
  entities: SkuEntityInput[];
}

export interface ReplenishmentInput {
  type: 'REPLENISHMENT';
  priority?: number;
  entities: SkuEntityInput[];
}

/** New stock into empty boxes; answered with where each quantity goes. */
export interface PutawayInput {
  type: 'PUTAWAY';
  priority?: number;
  entities: SkuEntityInput[];
}

export interface FetchInput {
  type: 'FETCH';
  priority?: number;
  entities: { carrier_id: string; balcony_ids?: number[] }[];
}

export interface OnboardInput {
  type: 'ONBOARD';
  bot_id: number;
  level_id: number;
  balcony_id: number;
}

export interface OffboardInput {
  type: 'OFFBOARD';
  bot_id: number;
  balcony_id?: number;
}

export interface RfidWriteInput {
  type: 'RFID_WRITE';
  level_id: number;
  /** Tags to write; default every tag of the level. */
  tags?: { x: number; y: number }[];
  /** Read every written tag back (CHECK_RFID_TAG); default true. */
  check?: boolean;
}

export interface PauseInput {
  type: 'PAUSE';
}

export interface ResumeInput {
  type: 'RESUME';
}

export interface ChargingInput {
  type: 'RECHARGE';
  bot_id: number;
}

export interface UnchargingInput {
  type: 'UNCHARGING';
  /** The bot to take off its charger; without it, every charging bot (UNCHARGE_ALL). */
  bot_id?: number;
}

export interface CarrierOnboardingInput {
  type: 'CARRIER_ONBOARDING';
  carrier_id: string;
  balcony_id: number;
}

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

/** The 12 kinds of POST /api/v2/requests. */
export type RequestInput =
  | FulfillmentInput | ReplenishmentInput | PutawayInput | FetchInput | OnboardInput | OffboardInput | RfidWriteInput
  | PauseInput | ResumeInput | ChargingInput | UnchargingInput | CarrierOnboardingInput;

export type InputKind = RequestInput['type'];

/** What Requests.create takes: an API input, or one the brain makes itself. */
export type CreateInput = RequestInput | RecoveryInput;
