/**
 * The OpenAPI 3.1 document, generated from the route table: the same TypeBox objects that
 * validate requests describe them here, so the document cannot drift from the behaviour.
 * A schema with an `$id` (a resource, a page of one, an input kind, an enum) is written once
 * under `components.schemas` by that name and referenced wherever it occurs, so a generated
 * client gets a `Job` type and a `JobStatus` union instead of anonymous inline shapes.
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
  const components = new SchemaComponents();
  components.add(ErrorBody);
  components.add(ValidationErrorBody);
  const paths: Record<string, Json> = {};
  const templates = pathTemplates(routes.filter((r) => !r.hidden));
  for (const route of routes) {
    if (route.hidden) continue;
    const template = templates.get(route.path)!;
    const op = operation(route, components);
    if (template !== route.path) renamePathParameters(op, route.path, template);
    (paths[template] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/', description: 'This controller' }],
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key, or an access token from POST /api/v2/auth/login' },
      },
    },
    security: [{ bearer: [] }],
  };
}

function operation(route: AnyRoute, components: SchemaComponents): Json {
  const op: Json = {
    operationId: operationId(route),
    summary: route.summary,
    tags: [route.tag],
    parameters: [...parameters(route.params, 'path', components), ...parameters(route.query, 'query', components)],
    responses: responses(route, components),
  };
  if (route.description) op.description = route.description;
  if (route.deprecated) op.deprecated = true;
  if (route.permission === null) op.security = [];
  else op['x-permission'] = route.permission;
  if (route.alsoPermitted?.length) op['x-permission-also'] = [...route.alsoPermitted];
  if (route.body !== undefined) {
    op.requestBody = isMultipart(route.body)
      ? { required: true, content: { 'multipart/form-data': { schema: components.use(route.body.multipart) } } }
      : { required: !bodyOptional(route.body), content: { 'application/json': { schema: components.use(route.body), ...branchExamples(route.body) } } };
  }
  return op;
}

/** One named example per branch of a union body that gives them (POST /requests: one per input kind). */
function branchExamples(body: TSchema): Json {
  const branches = (body as { anyOf?: (TSchema & { $id?: string; title?: string; examples?: unknown[] })[] }).anyOf ?? [];
  const examples: Json = {};
  for (const [i, b] of branches.entries()) {
    if (b.examples?.length) examples[b.$id ?? `example${i + 1}`] = { summary: b.title ?? b.$id, value: b.examples[0] };
  }
  return Object.keys(examples).length > 0 ? { examples } : {};
}

function parameters(schema: TObject | undefined, where: 'path' | 'query', components: SchemaComponents): Json[] {
  if (!schema) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, prop]) => {
    const p = prop as Json;
    const param: Json = { name, in: where, required: where === 'path' || required.has(name), schema: components.use(prop) };
    if (typeof p.description === 'string') param.description = p.description;
    if (p.type === 'array') {
      param.style = 'form';
      param.explode = true; // repeat the parameter once per value (spec 4.0.1)
    }
    return param;
  });
}

/**
 * One template per path shape: OpenAPI 3.1 forbids paths that differ only by parameter names,
 * and the spec has POST /box/{carrier_id} beside PATCH /box/{box_id}. Where the names differ
 * the template says what they share (`{id}`), so no operation's parameter is named for what
 * another one takes; each says what it is (renamePathParameters). Names are not on the wire.
 */
function pathTemplates(routes: readonly AnyRoute[]): Map<string, string> {
  const byShape = new Map<string, string[]>();
  for (const { path } of routes) {
    const shape = path.replace(/\{\w+\}/g, '{}');
    const paths = byShape.get(shape) ?? [];
    if (!paths.includes(path)) paths.push(path);
    byShape.set(shape, paths);
  }
  const templates = new Map<string, string>();
  for (const paths of byShape.values()) {
    const names = paths.map((p) => [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
    let i = 0;
    const template = paths[0]!.replace(/\{(\w+)\}/g, (whole, name: string) => {
      const position = i++;
      if (names.every((n) => n[position] === name)) return whole;
      const shared = /(?:^|_)([a-z]+)$/.exec(name)?.[1];
      return `{${shared && names.every((n) => n[position]!.endsWith(shared)) ? shared : 'key'}}`;
    });
    for (const p of paths) templates.set(p, template);
  }
  return templates;
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

function responses(route: AnyRoute, components: SchemaComponents): Json {
  const out: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) out[status] = response(spec, Number(status), components);
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

function response(spec: ResponseSpec, status: number, components: SchemaComponents): Json {
  if ('contentType' in spec && typeof spec.contentType === 'string') {
    const media = spec.schema ? { schema: components.use(spec.schema as TSchema) } : {};
    return { description: spec.description, content: { [spec.contentType]: media } };
  }
  const schema = spec as TSchema & { description?: unknown };
  const description = typeof schema.description === 'string' ? schema.description : status < 300 ? 'Success' : 'Error';
  return { description, content: { 'application/json': { schema: components.use(schema) } } };
}

/** The named schemas of a document: each `$id` once, its occurrences replaced by references. */
class SchemaComponents {
  readonly schemas: Record<string, Json> = {};
  private readonly texts = new Map<string, string>();

  /** Registers a named schema (and the named ones inside it) without using it anywhere. */
  add(schema: TSchema): void {
    this.use(schema);
  }

  /** A JSON copy of `schema` for the document, with every named schema in it a `$ref`. */
  use(schema: TSchema): Json {
    return this.copy(schema) as Json;
  }

  private copy(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.copy(v));
    if (value === null || typeof value !== 'object') return value;
    const { $id, ...rest } = value as Json;
    const body: Json = {};
    for (const [key, v] of Object.entries(rest)) if (v !== undefined) body[key] = this.copy(v);
    if (typeof $id !== 'string') return body;
    const text = JSON.stringify(body);
    const known = this.texts.get($id);
    // Two different shapes under one name would make a generated client's type lie for one of them.
    if (known !== undefined && known !== text) throw new Error(`Two different schemas are named ${$id} in the OpenAPI document`);
    if (known === undefined) {
      this.texts.set($id, text);
      this.schemas[$id] = body;
    }
    return { $ref: `#/components/schemas/${$id}` };
  }
}

function operationId(route: AnyRoute): string {
  const words = route.path.replace(/^\/api\/v2\//, '').replace(/[{}]/g, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [route.method.toLowerCase(), ...words].join('_');
}
