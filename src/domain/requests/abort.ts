/**
 * A request refused for the warehouse's state (spec 7, "Request aborted by validation"): the
 * body names every entity that failed with a stable 0x code. docs/requests.md lists the codes.
 */
import { DomainError } from '../errors.js';

/** The abort codes; never reused for another meaning. */
export const ABORT = {
  unknownSku: { code: '0x5001', text: 'SKU does not exist' },
  insufficientQuantity: { code: '0x5002', text: 'not enough fulfillable quantity' },
  unknownCarrier: { code: '0x5003', text: 'carrier does not exist' },
  noBalcony: { code: '0x5004', text: 'no balcony is allowed for this SKU on the levels that hold it' },
  insufficientRoom: { code: '0x5005', text: 'not enough room in boxes for this quantity' },
  unknownBot: { code: '0x5006', text: 'bot does not exist on this site' },
  unknownBalcony: { code: '0x5007', text: 'balcony does not exist' },
  unknownLevel: { code: '0x5008', text: 'level does not exist' },
  carrierExists: { code: '0x5009', text: 'a carrier with this id exists already' },
  deletedSku: { code: '0x500A', text: 'SKU is deleted' },
  duplicateEntity: { code: '0x500B', text: 'the same entity appears twice in the request' },
  carrierBusy: { code: '0x500C', text: 'carrier is held by another open request' },
  botBusy: { code: '0x500D', text: 'bot has open work already' },
  noStorageSpace: { code: '0x500E', text: 'no free storage space on the level' },
  botNotOnboarded: { code: '0x500F', text: 'bot is not on the level (offboarded)' },
  botOnboarded: { code: '0x5010', text: 'bot is on a level already' },
  balconyLevel: { code: '0x5011', text: 'balcony is not on the level' },
  unknownTag: { code: '0x5012', text: 'no RFID tag at this cell' },
  noCharger: { code: '0x5013', text: 'the level has no charger' },
} as const;

export type AbortReason = (typeof ABORT)[keyof typeof ABORT];

export interface EntityFeedback {
  entity_id: string;
  entity_type: string;
  error_code: string;
  human_string: string;
}

/** Collects per-entity failures; `throwIfAny` raises them together. */
export class AbortCollector {
  readonly feedback: EntityFeedback[] = [];

  /** Records that `entity` failed for `reason`, with `detail` appended to the human string. */
  add(entityType: string, entityId: string, reason: AbortReason, detail = ''): void {
    this.feedback.push({ entity_id: entityId, entity_type: entityType, error_code: reason.code, human_string: detail ? `${reason.text}: ${detail}` : reason.text });
  }

  get failed(): boolean {
    return this.feedback.length > 0;
  }
}

/** The request was refused; it is recorded as ABORTED under `requestId` with the feedback. */
export class RequestAbortedError extends DomainError {
  constructor(
    readonly requestId: string,
    readonly feedback: EntityFeedback[],
  ) {
    super('conflict', `request ${requestId} aborted: ${feedback.map((f) => `${f.entity_type} ${f.entity_id}: ${f.human_string} (${f.error_code})`).join('; ')}`);
  }
}
