/**
 * The error bodies of the API. Validation failures use the spec's HTTPValidationError
 * (`detail[]`); every other error is `{ detail, code, request_id }` with a readable `detail`.
 */
import Type from 'typebox';
import { RequestAbortedError } from '../domain/requests/abort.js';
import { DomainError, storeRefusal, TooManyRequestsError, ValidationError, type ValidationIssue } from '../domain/errors.js';
import { ERROR_STATUS, type ErrorCode } from './error-codes.js';

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

/** An error of the HTTP layer itself (a request it cannot take), with any code of the catalogue. */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    /** For 400s that still carry validation issues (a body that is not JSON). */
    readonly issues?: ValidationIssue[],
  ) {
    super(message);
    this.name = 'HttpError';
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
    return { status: ERROR_STATUS[err.code], body: { detail: err.message, request_id: err.requestId, entity_feedback: err.feedback }, headers: {} };
  }
  if (err instanceof ValidationError) {
    return { status: ERROR_STATUS[err.code], body: { detail: err.issues, request_id: requestId }, headers: {} };
  }
  if (err instanceof HttpError) {
    if (err.issues) return { status: ERROR_STATUS[err.code], body: { detail: err.issues, request_id: requestId }, headers: err.headers };
    return answer(err.code, err.message, requestId, err.headers);
  }
  const refusal = storeRefusal(err);
  if (refusal instanceof DomainError) return errorAnswer(refusal, requestId);
  if (refusal && 'notActive' in refusal) {
    return answer('not_active', `This controller is no longer the active one of its pair (${refusal.notActive}): the write was not acknowledged and may not have been kept. Send it again to the site's address; a request with the same Idempotency-Key is not made twice.`, requestId, { 'retry-after': '1' });
  }
  if (refusal) {
    return refusal.disk === 'full'
      ? answer('storage_full', `Storage full: nothing was written. Free space on the controller's disk (${refusal.dir}); reads keep working.`, requestId, {})
      : answer('storage_error', `The controller's disk failed the write: nothing was written. Check the disk (journalctl -k); retry later.`, requestId, { 'retry-after': '30' });
  }
  if (err instanceof DomainError) {
    return answer(err.code, err.message, requestId, err instanceof TooManyRequestsError ? { 'retry-after': String(err.retryAfterSeconds) } : {});
  }
  return answer('internal_error', 'Internal server error; the log has the details under this request id', requestId, {});
}

/** The error body every answer without validation issues has. */
function answer(code: ErrorCode, detail: string, requestId: string, headers: Record<string, string>): ErrorAnswer {
  return { status: ERROR_STATUS[code], body: { detail, code, request_id: requestId }, headers };
}
