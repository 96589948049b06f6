/**
 * Every error code the API sends, with the HTTP status it goes with: the one list, as fastify's
 * `FST_ERR_*` codes are. An error answer is `{ detail, code, request_id }` with `code` spelled as
 * here; a validation failure (`validation_failed`, and a `bad_request` body that is not JSON) is
 * answered with the validation body instead (`detail[]`, spec 2.1), which names no code. The
 * domain raises some of these codes (DomainErrorCode, domain/errors.ts); the others are the HTTP
 * layer's own. Statuses are looked up here and nowhere else.
 */
import type { DomainErrorCode } from '../domain/errors.js';

export const ERROR_STATUS = {
  /** The request cannot be parsed: a body that is not JSON or not multipart, a wrong Content-Length. */
  bad_request: 400,
  /** Missing, malformed, expired or revoked credentials. */
  unauthorized: 401,
  /** The caller lacks the permission or the authority. */
  forbidden: 403,
  not_found: 404,
  /** A method the path does not take; the answer's `Allow` names those it takes. */
  method_not_allowed: 405,
  /** The state of a record refuses the change (a unique name taken, an aborted request). */
  conflict: 409,
  /** A body, or a file in it, larger than its limit. */
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** Path, query or body fail their schema or a rule. */
  validation_failed: 422,
  /** A WebSocket endpoint asked without an upgrade. */
  upgrade_required: 426,
  /** Too many attempts, or uploads in flight; `Retry-After` says when to come back. */
  too_many_requests: 429,
  /** A bug: the log has the details under the request id. */
  internal_error: 500,
  /** A method this server knows for no resource. */
  not_implemented: 501,
  /** Shutting down, too many bodies at once, or a part not built; `Retry-After` where a retry helps. */
  unavailable: 503,
  /** The disk failed a write: nothing was written. */
  storage_error: 503,
  /** This box is no longer the active one of its replicated pair: the write was not acknowledged; `Retry-After`, then the site's address. */
  not_active: 503,
  /** The disk is full: nothing was written; reads keep working. */
  storage_full: 507,
} as const satisfies Record<DomainErrorCode, number> & Record<string, number>;

/** A code an error answer carries. */
export type ErrorCode = keyof typeof ERROR_STATUS;
