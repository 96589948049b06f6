/**
 * The OpenAPI 3.1 document, generated from the route table: the same TypeBox objects that
 * validate requests describe them here, so the document cannot drift from the behaviour.
 */
import type { TObject, TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from './error-codes.js';
import { ErrorBody, ValidationErrorBody } from './errors.js';
import { bodyOptional, isMultipart, successStatus, type AnyRoute, type ResponseSpec } from './route.js';

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
}

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const VALIDATION_REF = { $ref: '#/components/schemas/HTTPValidationError' };

/** Builds the document for every visible route. */
export function openApiDocument(routes: readonly AnyRoute[], info: ApiInfo): Json {
  const paths: Record<string, Json> = {};
  // OpenAPI 3.1 forbids paths that differ only by parameter names, and the spec has POST
  // /box/{carrier_id} beside PATCH /box/{box_id}: one template per shape, the first route's;
  // a later route's path parameters take its names by position (names are not on the wire).
  const templates = new Map<string, string>();
  for (const route of routes) {
    if (route.hidden) continue;
    const shape = route.path.replace(/\{\w+\}/g, '{}');
    const template = templates.get(shape) ?? route.path;
    templates.set(shape, template);
    const op = operation(route);
    if (template !== route.path) renamePathParameters(op, route.path, template);
    (paths[template] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/', description: 'This controller' }],
    paths,
    components: {
      schemas: { Error: plain(ErrorBody), HTTPValidationError: plain(ValidationErrorBody) },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key, or an access token from POST /api/v2/auth/login' },
      },
    },
    security: [{ bearer: [] }],
  };
}

function operation(route: AnyRoute): Json {
  const op: Json = {
    operationId: operationId(route),
    summary: route.summary,
    tags: [route.tag],
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    responses: responses(route),
  };
  if (route.description) op.description = route.description;
  if (route.deprecated) op.deprecated = true;
  if (route.permission === null) op.security = [];
  else op['x-permission'] = route.permission;
  if (route.alsoPermitted?.length) op['x-permission-also'] = [...route.alsoPermitted];
  if (route.body !== undefined) {
    op.requestBody = isMultipart(route.body)
      ? { required: true, content: { 'multipart/form-data': { schema: plain(route.body.multipart) } } }
      : { required: !bodyOptional(route.body), content: { 'application/json': { schema: plain(route.body) } } };
  }
  return op;
}

function parameters(schema: TObject | undefined, where: 'path' | 'query'): Json[] {
  if (!schema) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, prop]) => {
    const p = plain(prop);
    const param: Json = { name, in: where, required: where === 'path' || required.has(name), schema: p };
    if (typeof p.description === 'string') param.description = p.description;
    if (p.type === 'array') {
      param.style = 'form';
      param.explode = true; // repeat the parameter once per value (spec 4.0.1)
    }
    return param;
  });
}

/** Gives the path parameters of `op` (declared for `path`) the names of `template`, saying what the spec calls them. */
function renamePathParameters(op: Json, path: string, template: string): void {
  const names = (p: string) => [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const from = names(path);
  const to = names(template);
  for (const param of op.parameters as Json[]) {
    const i = param.in === 'path' ? from.indexOf(param.name as string) : -1;
    if (i < 0 || from[i] === to[i]) continue;
    param.description = `${typeof param.description === 'string' ? `${param.description} ` : ''}(the spec's \`${from[i]}\`: the ${from[i]!.replace(/_id$/, '').replace(/_/g, ' ')} id)`;
    param.name = to[i];
  }
}

function responses(route: AnyRoute): Json {
  const out: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) out[status] = response(spec, Number(status));
  const hasInput = route.params !== undefined || route.query !== undefined || route.body !== undefined;
  // Each answer the framework may give on its own, under its code's status.
  const add = (code: ErrorCode, description: string, schema: Json): void => {
    out[ERROR_STATUS[code]] ??= { description, content: { 'application/json': { schema } } };
  };
  if (route.body !== undefined) {
    // Malformed JSON is answered in the validation shape (one issue of type `json_invalid` at
    // loc ["body"], as FastAPI words it) so clients read it with their validation-error code;
    // malformed multipart and a bad Content-Length use the plain error body (docs/decisions.md).
    const unparsed: ErrorCode = 'bad_request';
    add(unparsed, 'The body cannot be parsed. Not JSON: the validation error body with one issue of type `json_invalid`; '
      + `malformed multipart or a wrong Content-Length: the error body (code ${unparsed})`, { anyOf: [VALIDATION_REF, ERROR_REF] });
    add('payload_too_large', 'The body is larger than the limit', ERROR_REF);
    add('unsupported_media_type', 'Wrong Content-Type', ERROR_REF);
    // Bodies in flight are bounded (src/http/body-budget.ts): a client must be told it may retry.
    if (isMultipart(route.body)) add('too_many_requests', 'The caller\'s uploads in flight would pass `upload_quota_bytes`; retry after `Retry-After` seconds', ERROR_REF);
    add('unavailable', 'The box is taking too many request bodies at once (uploads: `upload_total_bytes`); retry after `Retry-After` seconds', ERROR_REF);
  }
  const full: ErrorCode = 'storage_full';
  if (route.method !== 'GET') add(full, `Storage full: nothing was written (code ${full}); reads keep working`, ERROR_REF);
  if (route.permission !== null) {
    add('unauthorized', 'Missing, malformed, expired or revoked credentials', ERROR_REF);
    add('forbidden', `The caller lacks the permission ${route.permission}`, ERROR_REF);
  }
  if (hasInput) add('validation_failed', 'Validation error', VALIDATION_REF);
  add('internal_error', 'Unexpected server error (logged with the request id)', ERROR_REF);
  if (!Object.keys(out).some((s) => s === String(successStatus(route)))) out[successStatus(route)] = { description: 'Success' };
  return out;
}

function response(spec: ResponseSpec, status: number): Json {
  const description = status < 300 ? 'Success' : 'Error';
  if ('contentType' in spec && typeof spec.contentType === 'string') {
    const ref = (spec.schema as { $id?: string } | undefined)?.$id;
    const media = ref === 'Error' ? { schema: ERROR_REF } : spec.schema ? { schema: plain(spec.schema) } : {};
    return { description: spec.description, content: { [spec.contentType]: media } };
  }
  const schema = spec as TSchema & { $id?: string };
  if (schema.$id === 'Error') return { description, content: { 'application/json': { schema: ERROR_REF } } };
  if (schema.$id === 'HTTPValidationError') return { description, content: { 'application/json': { schema: VALIDATION_REF } } };
  const p = plain(schema);
  return { description: typeof p.description === 'string' ? p.description : description, content: { 'application/json': { schema: p } } };
}

/** A JSON copy of a TypeBox schema without the ids used for component references. */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$id' ? undefined : value))) as Json;
}

function operationId(route: AnyRoute): string {
  const words = route.path.replace(/^\/api\/v2\//, '').replace(/[{}]/g, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [route.method.toLowerCase(), ...words].join('_');
}
