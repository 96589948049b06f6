/**
 * The error bodies of the API. Validation failures use the spec's HTTPValidationError
 * (`detail[]`); every other error is `{ detail, code, request_id }` with a readable `detail`.
 */
import Type from 'typebox';
import { RequestAbortedError } from '../domain/requests/abort.js';
import { StorageFaultError } from '../store/storage-fault.js';
import { UniqueIndexError } from '../store/collection.js';
import { ConflictError, DomainError, TooManyRequestsError, ValidationError, type DomainErrorCode, type ValidationIssue } from '../domain/errors.js';

export const STATUS_OF: Record<DomainErrorCode, number> = {
  validation_failed: 422,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  upgrade_required: 426,
  unavailable: 503,
  not_implemented: 501,
};

/** Schema of the validation error body (spec 2.1). */
export const ValidationErrorBody = Type.Object(
  {
    detail: Type.Array(Type.Object({
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
      type: Type.String(),
    })),
    request_id: Type.Optional(Type.String()),
  },
  { $id: 'HTTPValidationError', description: 'Validation error (spec 2.1)' },
);

/** Schema of every other error body. */
export const ErrorBody = Type.Object(
  {
    detail: Type.String({ description: 'What went wrong, for a person' }),
    code: Type.String({ description: 'Stable machine-readable error code' }),
    request_id: Type.String({ description: 'Also in the X-Request-Id header and the log' }),
  },
  { $id: 'Error' },
);

/**
 * A route's own documented error answer: the error body under a description saying when the
 * route gives that status (`responses: { 404: documentedError('No such role') }`).
 */
export function documentedError(description: string): { description: string; contentType: string; schema: typeof ErrorBody } {
  return { description, contentType: 'application/json', schema: ErrorBody };
}

/** An HTTP-level error raised by the framework itself (not by domain code). */
export class HttpError extends DomainError {
  constructor(
    code: DomainErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    /** For 400s that still carry validation issues (a body that is not JSON). */
    readonly issues?: ValidationIssue[],
  ) {
    super(code, message);
  }
}

export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** Turns anything thrown while serving a request into the status and body to send. */
export function errorAnswer(err: unknown, requestId: string): ErrorAnswer {
  if (err instanceof RequestAbortedError) {
    // Spec 7's abort body: request_id names the refused request (stored as ABORTED), not the HTTP exchange.
    return { status: STATUS_OF[err.code], body: { detail: err.message, request_id: err.requestId, entity_feedback: err.feedback }, headers: {} };
  }
  if (err instanceof ValidationError) {
    return { status: 422, body: { detail: err.issues, request_id: requestId }, headers: {} };
  }
  if (err instanceof HttpError && err.issues) {
    return { status: STATUS_OF[err.code], body: { detail: err.issues, request_id: requestId }, headers: err.headers };
  }
  // The disk, not a bug: an operational state the caller can wait out (docs/operations.md).
  // An upload spooled to a full disk fails with the bare ENOSPC before the store sees it.
  if ((err as NodeJS.ErrnoException | undefined)?.code === 'ENOSPC') return errorAnswer(new StorageFaultError(true, 'the state directory', err), requestId);
  // A unique index refused a second record: the caller's conflict, not a bug.
  if (err instanceof UniqueIndexError) return errorAnswer(new ConflictError(err.message), requestId);
  if (err instanceof StorageFaultError) {
    return err.full
      ? { status: 507, body: { detail: `Storage full: nothing was written. Free space on the controller's disk (${err.dir}); reads keep working.`, code: 'storage_full', request_id: requestId }, headers: {} }
      : { status: 503, body: { detail: `The controller's disk failed the write: nothing was written. Check the disk (journalctl -k); retry later.`, code: 'storage_error', request_id: requestId }, headers: { 'retry-after': '30' } };
  }
  if (err instanceof DomainError) {
    const headers = err instanceof HttpError ? err.headers : err instanceof TooManyRequestsError ? { 'retry-after': String(err.retryAfterSeconds) } : {};
    return { status: STATUS_OF[err.code], body: { detail: err.message, code: err.code, request_id: requestId }, headers };
  }
  return {
    status: 500,
    body: { detail: 'Internal server error; the log has the details under this request id', code: 'internal_error', request_id: requestId },
    headers: {},
  };
}
