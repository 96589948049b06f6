/**
 * The route table's vocabulary. A route declares everything about an endpoint in one place:
 * method, path, schemas of its inputs and outputs, permission key and documentation. The
 * framework validates inputs before the handler runs and the OpenAPI document is generated
 * from the same objects.
 */
import type { Readable } from 'node:stream';
import type { Static, TObject, TSchema } from 'typebox';
import type { Logger } from '../log/logger.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * A file received in a multipart body. It stays on disk (the request's spool file) until the
 * answer is sent: handlers stream it where it belongs rather than holding it in memory.
 */
export interface UploadedFile {
  filename: string;
  type: string;
  /** Bytes in the file. */
  size: number;
  /** Its bytes, read from disk. */
  stream(): Readable;
  /** Its first `n` bytes (fewer when the file is shorter), e.g. to tell its type. */
  head(n: number): Promise<Buffer>;
  /** All its bytes in memory: only for files the route has bounded to a small size. */
  read(): Promise<Buffer>;
}

/** A multipart/form-data body: text fields are strings, binary fields are UploadedFile(s). */
export interface MultipartBody {
  multipart: TObject;
}

/** A non-JSON success answer (plain text, files, HTML). */
export class Reply {
  constructor(
    readonly body: string | Buffer,
    readonly contentType: string,
    readonly status = 200,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/**
 * A JSON success answer the handler serialized itself (a list assembled from per-row pieces):
 * sent as is with the route's success status. With `checkResponses` the server parses it and
 * checks it against the route's schema like any answer, and, when `fresh` is given, requires
 * it to be byte for byte `JSON.stringify(fresh())`, so a stale piece fails the tests.
 */
export class JsonReply {
  constructor(
    readonly json: string,
    readonly fresh?: () => unknown,
  ) {}
}

export type { Caller } from '../domain/auth/caller.js';
import type { Caller } from '../domain/auth/caller.js';

/** The permission value of routes any authenticated caller may use (their own identity, say). */
export const AUTHENTICATED = '@authenticated';

/** What a handler receives: validated inputs and request facts, never a uWS object. */
export interface RequestContext<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
  headers: Readonly<Record<string, string>>;
  requestId: string;
  caller: Caller;
  remoteAddress: string;
  /** Aborted when the client disconnects before the answer is sent. */
  signal: AbortSignal;
  /** The logger, with this request's id on every line. */
  log: Logger;
}

/** What a WebSocket handler may do with its socket: send text, close. */
export interface StreamSocket {
  /** Queues a text message; false once the client is too far behind (drop it). */
  send(text: string): boolean;
  close(code: number, reason: string): void;
}

/** A running WebSocket handler; `close` is called once the socket is gone. */
export interface StreamSession {
  close(): void;
}

/** A response entry: a JSON schema, or a described non-JSON payload. */
export type ResponseSpec = TSchema | { description: string; contentType: string; schema?: TSchema };

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;
type BodyOf<S> = S extends MultipartBody ? Record<string, string | UploadedFile | UploadedFile[] | undefined> : StaticOr<S, undefined>;

export interface RouteSpec<P extends TObject | undefined, Q extends TObject | undefined, B extends TSchema | MultipartBody | undefined> {
  method: Method;
  /** OpenAPI-style path, e.g. `/api/v2/box/{box_id}`. */
  path: string;
  summary: string;
  tag: string;
  description?: string;
  deprecated?: boolean;
  /** Left out of the OpenAPI document (the documentation UI's own files). */
  hidden?: boolean;
  /** Permission key the caller must hold; AUTHENTICATED for any valid identity; null for the few public endpoints. */
  permission: string | null;
  /**
   * Other keys that also let a caller in; the handler then decides what each one may see
   * (the creator of a support issue reads their own issues with `support:create_issue`).
   */
  alsoPermitted?: readonly string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Success status and schema, plus any extra statuses this route answers on purpose. */
  responses: Record<number, ResponseSpec>;
  handler(ctx: RequestContext<StaticOr<P, Record<string, never>>, StaticOr<Q, Record<string, never>>, BodyOf<B>>): unknown;
  /**
   * Makes the route a WebSocket endpoint as well: an upgrade request passes the same checks,
   * then this runs with the socket. `handler` answers plain GETs (426 Upgrade Required).
   */
  websocket?(ctx: RequestContext<StaticOr<P, Record<string, never>>, StaticOr<Q, Record<string, never>>, undefined>, socket: StreamSocket): StreamSession;
}

/** A route with its types erased, as the router keeps it. */
export type AnyRoute = RouteSpec<TObject | undefined, TObject | undefined, TSchema | MultipartBody | undefined>;

/**
 * Declares a route; gives the handler its input types. A JSON body is an allow-list: every object
 * in it that names its fields takes no other (a read-only `id` or `total_quantity` is refused
 * with 422, not stored), unless it says otherwise; the OpenAPI document says the same.
 */
export function route<P extends TObject | undefined = undefined, Q extends TObject | undefined = undefined, B extends TSchema | MultipartBody | undefined = undefined>(
  spec: RouteSpec<P, Q, B>,
): AnyRoute {
  if (spec.body === undefined || isMultipart(spec.body)) return spec as unknown as AnyRoute;
  return { ...spec, body: strict(spec.body as TSchema) } as unknown as AnyRoute;
}

/** A copy of a schema whose objects with named fields forbid others where they do not decide themselves. */
function strict<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(strict) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = strict(value);
  if (out['type'] === 'object' && out['properties'] !== undefined && out['additionalProperties'] === undefined && out['patternProperties'] === undefined) {
    out['additionalProperties'] = false;
  }
  return out as T;
}

/** Whether a body spec is multipart. */
export function isMultipart(body: TSchema | MultipartBody | undefined): body is MultipartBody {
  return body !== undefined && 'multipart' in body && typeof (body as MultipartBody).multipart === 'object';
}

/** The success status of a route: the lowest 2xx it declares. */
export function successStatus(r: AnyRoute): number {
  const codes = Object.keys(r.responses).map(Number).filter((s) => s >= 200 && s < 300);
  return codes.length > 0 ? Math.min(...codes) : 200;
}

/** Whether a JSON body may be left out: an object none of whose fields is required (an empty body means the defaults). */
export function bodyOptional(body: AnyRoute['body']): boolean {
  if (body === undefined || isMultipart(body)) return false;
  const schema = body as { type?: unknown; required?: unknown[] };
  return schema.type === 'object' && (schema.required ?? []).length === 0;
}
