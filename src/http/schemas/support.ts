/**
 * Schemas of the support endpoints (spec 4.2 `create_issue`; the issue payload's fields are
 * "not shown" there, so docs/support.md documents the ones chosen here).
 */
import Type from 'typebox';
import { DEFAULT_SUPPORT_LIMITS } from '../../domain/support/outbox.js';
import { FILE_NAME_PATTERN, KEY_PATTERN } from '../../domain/support/names.js';
import { Binary } from '../multipart.js';
import { IssuePayloadSchema as SupportIssuePayload } from '../../domain/support/payload.js';
import { Nullable } from './common.js';

/** The JSON inside the `payload` form field. */
export { SupportIssuePayload };

/** Longest `payload` text: room for 20,000 characters of description even when \u-escaped. */
export const PAYLOAD_MAX_CHARS = 256 * 1024;

const { maxFiles, maxFileBytes, maxTotalBytes } = DEFAULT_SUPPORT_LIMITS;

/** The multipart form of `POST /api/v2/support/create_issue`. */
export const CreateIssueForm = Type.Object({
  // contentMediaType/contentSchema (JSON Schema 2020-12, OpenAPI 3.1) say what the string holds:
  // the route parses it and checks it against SupportIssuePayload (422 under body.payload).
  payload: Type.String({ maxLength: PAYLOAD_MAX_CHARS, contentMediaType: 'application/json', contentSchema: SupportIssuePayload, description: 'JSON-stringified SupportIssuePayload' }),
  files: Type.Optional(Type.Array(Binary('An attachment (log, photo, export)'), {
    maxItems: maxFiles,
    description: `At most ${maxFiles} files, ${maxFileBytes >> 20} MiB each, ${maxTotalBytes >> 20} MiB together (defaults)`,
  })),
});

export const CreateIssueResponse = Type.Object({
  key: Type.String({ pattern: KEY_PATTERN, description: 'The issue key, SUP-<yyyymmdd UTC>-<6 characters>' }),
  url: Type.String({ description: 'Where this box shows the issue (GET, same credentials), as an absolute path' }),
});

export const IssueKeyParam = Type.Object({ key: Type.String({ pattern: KEY_PATTERN, description: 'Issue key' }) });

export const IssueFileParams = Type.Object({
  key: Type.String({ pattern: KEY_PATTERN, description: 'Issue key' }),
  name: Type.String({ pattern: FILE_NAME_PATTERN, description: 'Stored file name, as listed in the issue' }),
});

const legacy = (description: string) => Nullable(Type.String({ description: `${description}; legacy naive local wall time of the configured zone` }));
const utc = (description: string) => Nullable(Type.String({ format: 'date-time', description: `${description}; ISO 8601 with offset` }));

const StoredFileResponse = Type.Object({
  name: Type.String({ description: 'Safe name the file is stored and served under' }),
  original_name: Type.String({ description: 'The name the client sent' }),
  type: Type.String({ description: 'Media type the client claimed (files are always served as attachments)' }),
  bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  url: Type.String({ description: 'Where to download the bytes' }),
});

const ForwardingResponse = Type.Object({
  status: Type.Union([Type.Literal('pending'), Type.Literal('forwarded')], { description: 'pending until the support endpoint accepted the issue' }),
  attempts: Type.Integer({ minimum: 0 }),
  last_error: Nullable(Type.String()),
  last_attempt_at: legacy('Last attempt'),
  last_attempt_at_utc: utc('Last attempt'),
  next_attempt_at: legacy('Next attempt'),
  next_attempt_at_utc: utc('Next attempt'),
  forwarded_at: legacy('Accepted by the support endpoint'),
  forwarded_at_utc: utc('Accepted by the support endpoint'),
  remote_key: Nullable(Type.String({ description: 'The key the support endpoint gave, when it answered one' })),
  remote_url: Nullable(Type.String()),
});

export const SupportIssueResponse = Type.Object(
  {
    key: Type.String(),
    url: Type.String(),
    created_at: Type.String({ description: 'Legacy naive local wall time of the configured zone' }),
    created_at_utc: Type.String({ format: 'date-time' }),
    created_by: Nullable(Type.Object({ kind: Type.String(), id: Type.Optional(Type.Integer()) })),
    payload: SupportIssuePayload,
    files: Type.Array(StoredFileResponse),
    forwarding: ForwardingResponse,
  },
  { description: 'A support issue as stored on this box' },
);
