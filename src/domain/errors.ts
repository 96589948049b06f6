/**
 * Typed domain errors. The domain throws these; each `code` is stable and says what went wrong
 * in the domain's terms. The HTTP layer maps each code to a status and the documented body
 * (http/error-codes.ts); what only the HTTP layer refuses (a method, a media type, a body it
 * cannot read) is its own error. Nothing else may be thrown on purpose from domain code.
 */
import { UniqueIndexError } from '../store/collection.js';
import { StorageFaultError } from '../store/storage-fault.js';
import { ReplicaWriteRefused } from '../store/replication.js';

/** One entry of the spec's validation error body (HTTPValidationError, spec 2.1). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export type DomainErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  /** Content over a limit of the domain (an SKU's image, a support issue's files). */
  | 'payload_too_large'
  | 'too_many_requests';

/** Base of every error the domain throws on purpose. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Input that does not satisfy a schema or rule; carries the spec's `detail[]` entries. */
export class ValidationError extends DomainError {
  constructor(readonly issues: ValidationIssue[]) {
    super('validation_failed', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
  }

  /** Shorthand for one issue. */
  static of(loc: (string | number)[], msg: string, type = 'value_error'): ValidationError {
    return new ValidationError([{ loc, msg, type }]);
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** Too many attempts; `retryAfterSeconds` goes to the Retry-After header. */
export class TooManyRequestsError extends DomainError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super('too_many_requests', message);
  }
}

/**
 * What a write the store refused means to the caller, or undefined when the store did not
 * refuse it: a unique index that already holds the value is the caller's conflict; a disk that
 * is full or failing is an operational state to wait out (docs/operations.md), nothing written;
 * a box that is no longer the active one of its pair did not acknowledge the write (its client
 * sends it again, with its idempotency key, to the box that is).
 * A bare ENOSPC (an upload spooled to a full disk before the store saw it) is the disk too.
 */
export function storeRefusal(err: unknown): ConflictError | { disk: 'full' | 'failing'; dir: string } | { notActive: string } | undefined {
  if (err instanceof UniqueIndexError) return new ConflictError(err.message);
  if (err instanceof ReplicaWriteRefused) return { notActive: err.message };
  if (err instanceof StorageFaultError) return { disk: err.full ? 'full' : 'failing', dir: err.dir };
  if ((err as { code?: unknown } | undefined)?.code === 'ENOSPC') return { disk: 'full', dir: 'the state directory' };
  return undefined;
}
