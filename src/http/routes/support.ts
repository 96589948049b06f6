/** Spec 4.2 `POST /api/v2/support/create_issue`, and where this box shows the issues it stored. */
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { isCreator, type ForwardingStatus, type IssuePayload, type IssueRecord, type SupportOutbox } from '../../domain/support/outbox.js';
import { stampPair } from '../../domain/time.js';
import { ErrorBody } from '../errors.js';
import { Reply, route, type AnyRoute, type Caller, type UploadedFile } from '../route.js';
import { CreateIssueForm, CreateIssueResponse, IssueFileParams, IssueKeyParam, SupportIssuePayload, SupportIssueResponse } from '../schemas/support.js';
import { compile } from '../validation.js';

export interface SupportRouteDeps {
  outbox: SupportOutbox;
  /** Zone of the legacy timestamp fields (config `timezone`); default Europe/Berlin, the config default. */
  timeZone?: string;
}

const PERMISSION = 'support:create_issue';
/** Support managers: they read every issue. Reporters read only the issues they created. */
const MANAGER = 'support:view';
const issueUrl = (key: string) => `/api/v2/support/issues/${key}`;

/**
 * An issue the caller may read. Someone else's issue is 404 to a reporter, as an unknown key
 * is: whether a key exists is not theirs to learn (issues hold other people's contact data).
 */
async function readable(outbox: SupportOutbox, key: string, caller: Caller): Promise<{ issue: IssueRecord; status: ForwardingStatus }> {
  const stored = await outbox.get(key);
  if (!caller.permissions.has(MANAGER) && !isCreator(stored.issue, caller)) throw new NotFoundError(`No support issue ${key}`);
  return stored;
}

const READ_RULE = `Readable by support managers (\`${MANAGER}\`: every issue) and by the caller who created it (with \`${PERMISSION}\`); `
  + 'another reporter\'s issue answers 404, as an unknown key does.';

/** The support routes: create an issue, read it back, download its files. */
export function supportRoutes(deps: SupportRouteDeps): AnyRoute[] {
  const { outbox } = deps;
  const zone = deps.timeZone ?? 'Europe/Berlin';
  const payloadSchema = compile(SupportIssuePayload);

  /** The `payload` field: JSON, then the schema; every issue is reported under body.payload. */
  const parsePayload = (text: string): IssuePayload => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      // 422, not the 400 of a non-JSON request body: the request itself parsed, one field is wrong.
      throw ValidationError.of(['body', 'payload'], `JSON decode error: ${(err as Error).message}`, 'json_invalid');
    }
    if (!payloadSchema.check(value)) {
      throw new ValidationError(payloadSchema.issues(value, 'payload').map((i) => ({ ...i, loc: ['body', ...i.loc] })));
    }
    return value;
  };

  const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));
  const forwardingView = (s: ForwardingStatus) => ({
    status: s.status, attempts: s.attempts, last_error: s.last_error,
    ...stampPair('last_attempt_at', ms(s.last_attempt_at), zone),
    ...stampPair('next_attempt_at', ms(s.next_attempt_at), zone),
    ...stampPair('forwarded_at', ms(s.forwarded_at), zone),
    remote_key: s.remote_key, remote_url: s.remote_url,
  });
  const issueView = (issue: IssueRecord, status: ForwardingStatus) => ({
    key: issue.key,
    url: issueUrl(issue.key),
    ...(stampPair('created_at', Date.parse(issue.created_at), zone) as { created_at: string; created_at_utc: string }),
    created_by: issue.created_by,
    payload: issue.payload,
    files: issue.files.map((f) => ({ ...f, url: `${issueUrl(issue.key)}/files/${f.name}` })),
    forwarding: forwardingView(status),
  });

  return [
    route({
      method: 'POST', path: '/api/v2/support/create_issue', tag: 'System', permission: PERMISSION,
      summary: 'Report an issue to support, with attachments; stored on this box and forwarded when a support endpoint is configured',
      description: 'The `payload` field is a JSON string (SupportIssuePayload, see docs/support.md). A payload that is not JSON or breaks its schema answers 422 '
        + 'under `body.payload`; too many files 422 under `body.files`; a file or the files together over their limit 413.',
      body: { multipart: CreateIssueForm },
      responses: { 201: CreateIssueResponse, 413: ErrorBody },
      handler: async ({ body, caller, log }) => {
        const payload = parsePayload(body.payload as string);
        const files = (body.files as UploadedFile[] | undefined) ?? [];
        const issue = await outbox.create({
          payload, files, createdBy: caller.kind === 'anonymous' ? null : { kind: caller.kind, ...(caller.id !== undefined ? { id: caller.id } : {}) },
        });
        // Key and sizes only: the payload may hold a contact address, files may hold anything.
        log.info({ key: issue.key, severity: issue.payload.severity, files: issue.files.length, bytes: issue.files.reduce((n, f) => n + f.bytes, 0) }, 'support issue stored');
        return { key: issue.key, url: issueUrl(issue.key) };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/support/issues/{key}', tag: 'System', permission: MANAGER, alsoPermitted: [PERMISSION],
      summary: 'A support issue stored on this box: its payload, files (size, sha256) and forwarding status',
      description: READ_RULE,
      params: IssueKeyParam,
      responses: { 200: SupportIssueResponse, 403: ErrorBody, 404: ErrorBody },
      handler: async ({ params, caller }) => {
        const { issue, status } = await readable(outbox, params.key, caller);
        return issueView(issue, status);
      },
    }),
    route({
      method: 'GET', path: '/api/v2/support/issues/{key}/files/{name}', tag: 'System', permission: MANAGER, alsoPermitted: [PERMISSION],
      summary: 'The bytes of a support issue attachment (always as a download, never rendered)',
      description: READ_RULE,
      params: IssueFileParams,
      responses: { 200: { description: 'The file as uploaded', contentType: 'application/octet-stream' }, 403: ErrorBody, 404: ErrorBody },
      handler: async ({ params, caller }) => {
        await readable(outbox, params.key, caller);
        const { file, data } = await outbox.readFile(params.key, params.name);
        // Served from the API's own origin: an uploaded HTML or SVG must never run there, so
        // the claimed type is not echoed (the framework adds nosniff and no-store to every such answer).
        return new Reply(data, 'application/octet-stream', 200, { 'content-disposition': `attachment; filename="${file.name}"` });
      },
    }),
  ];
}
