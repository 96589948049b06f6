/**
 * A property-based API fuzzer driven by the served OpenAPI document (the checks of Schemathesis,
 * which is not installable here, rebuilt on fast-check and ajv).
 *
 * For every operation it derives fast-check arbitraries from the parameter and body schemas
 * (TypeBox output is JSON Schema 2020-12) and sends
 *   - positive cases: valid by the document; they must be accepted (2xx) or refused with a
 *     documented semantic error (404, 409, 403, 429; 401 only on public operations, whose
 *     credentials are the input; 422 only when the issue is not a schema keyword the document
 *     already expresses);
 *   - negative cases: invalid by the document (wrong type, missing required, extra property,
 *     out of range, malformed JSON); they must get a 4xx;
 *   - one request per secured operation without credentials: it must get 401.
 * Every answer is checked: no 5xx, the status is documented for the operation, and a JSON body
 * validates against the schema documented for that status.
 */
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

type Json = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  id: string;
  op: Json;
}

export interface FuzzCase {
  kind: 'positive' | 'negative' | 'no-auth';
  /** What was done to make a negative case negative. */
  mutation?: string;
  method: string;
  /** The filled path with its query string. */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export interface Finding {
  check: 'server_error' | 'undocumented_status' | 'schema_violation' | 'positive_rejected' | 'negative_accepted' | 'auth_ignored';
  operation: string;
  fuzzCase: FuzzCase;
  status: number;
  message: string;
  answer: string;
}

/** A case the run must not send, and why (keeps its credential and the site usable). */
export type Guard = (op: Operation, c: { kind: FuzzCase['kind']; params: Json; query: Json; body: unknown }) => string | undefined;

/** Pattern keywords use JavaScript regexes with the Unicode flag, as TypeBox compiles them. */
const regex = (p: string): RegExp => new RegExp(p, 'u');

/** Strings matching a pattern; fast-check cannot build lookaheads: those are checked afterwards. */
function matching(pattern: string): fc.Arbitrary<string> {
  const full = regex(pattern);
  const bare = pattern.replace(/\(\?[=!][^()]*\)/g, '');
  return bare === pattern ? fc.stringMatching(full) : fc.stringMatching(regex(bare)).filter((v) => full.test(v));
}

export class Fuzzer {
  readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, unicodeRegExp: true });
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' });
  }

  /** Every operation of the document. */
  operations(): Operation[] {
    const out: Operation[] = [];
    for (const [path, item] of Object.entries(this.doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        out.push({ method: method.toUpperCase(), path, id: `${method.toUpperCase()} ${path}`, op: op as Json });
      }
    }
    return out;
  }

  /** A validator for the document's schema at `pointer` (a JSON pointer into the document). */
  validator(pointer: string): ValidateFunction {
    let v = this.validators.get(pointer);
    if (!v) this.validators.set(pointer, (v = this.ajv.compile({ $ref: `openapi.json#${pointer}` })));
    return v;
  }

  resolve(schema: Json): Json {
    let s = schema;
    while (s && typeof s.$ref === 'string') {
      const parts = (s.$ref as string).replace(/^#\//, '').split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
      s = parts.reduce<any>((node, key) => node?.[key], this.doc);
    }
    return s;
  }

  // ---- arbitraries from JSON Schema -------------------------------------------------------

  /** Values valid by `schema` (before the ajv filter that removes the rare miss). */
  arb(schema: Json | boolean | undefined, depth = 0): fc.Arbitrary<unknown> {
    if (schema === undefined || schema === true) return fc.jsonValue({ maxDepth: 1 });
    if (schema === false) return fc.constant(undefined);
    const s = this.resolve(schema);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    // An object whose branches only name more required properties (reset_password: otp or old_password).
    if (Array.isArray(s.anyOf) && s.properties) {
      return fc.oneof(...(s.anyOf as Json[]).map((b) => this.object({ ...s, anyOf: undefined, required: [...new Set([...(s.required ?? []), ...(b.required ?? [])])] }, depth)));
    }
    if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as Json[]).map((b) => this.arb(b, depth + 1)));
    if (Array.isArray(s.oneOf)) return fc.oneof(...(s.oneOf as Json[]).map((b) => this.arb(b, depth + 1)));
    if (Array.isArray(s.allOf) && s.allOf.length > 0) return this.arb({ ...s.allOf[0], ...s, allOf: undefined }, depth + 1);
    const type = Array.isArray(s.type) ? (s.type as string[]) : s.type === undefined ? undefined : [s.type as string];
    if (!type) return s.properties ? this.object(s, depth) : fc.jsonValue({ maxDepth: 1 });
    return fc.oneof(...type.map((t) => this.typed(t, s, depth)));
  }

  private typed(type: string, s: Json, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null': return fc.constant(null);
      case 'boolean': return fc.boolean();
      case 'integer': {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? Math.floor(s.exclusiveMinimum) + 1 : -Number.MAX_SAFE_INTEGER);
        const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? Math.ceil(s.exclusiveMaximum) - 1 : Number.MAX_SAFE_INTEGER);
        return fc.bigInt({ min: BigInt(Math.ceil(min)), max: BigInt(Math.floor(max)) }).map(Number);
      }
      case 'number': {
        const d = fc.double({ min: s.minimum ?? s.exclusiveMinimum ?? -1e12, max: s.maximum ?? s.exclusiveMaximum ?? 1e12, noNaN: true, noDefaultInfinity: true });
        return d.filter((n) => (s.exclusiveMinimum === undefined || n > s.exclusiveMinimum) && (s.exclusiveMaximum === undefined || n < s.exclusiveMaximum));
      }
      case 'string': return this.string(s);
      case 'array': {
        const minLength = s.minItems ?? 0;
        const maxLength = Math.min(s.maxItems ?? minLength + 3, minLength + (depth > 4 ? 0 : 3));
        const items = this.arb(s.items, depth + 1);
        return s.uniqueItems
          ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
          : fc.array(items, { minLength, maxLength });
      }
      case 'object': return this.object(s, depth);
      default: return fc.jsonValue({ maxDepth: 1 });
    }
  }

  private string(s: Json): fc.Arbitrary<string> {
    // A string that holds JSON of a given schema (contentMediaType + contentSchema).
    if (s.contentMediaType === 'application/json' && s.contentSchema) return this.arb(s.contentSchema as Json).map((v) => JSON.stringify(v));
    const minLength: number = s.minLength ?? 0;
    const maxLength: number = s.maxLength ?? (s.format !== undefined || s.pattern !== undefined ? Infinity : minLength + 24);
    const fits = (v: string): boolean => {
      const n = [...v].length;
      return n >= minLength && n <= maxLength;
    };
    let base: fc.Arbitrary<string>;
    switch (s.format) {
      case 'date-time':
        base = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).chain((d) =>
          fc.constantFrom(d.toISOString(), d.toISOString().replace('Z', '+00:00'), d.toISOString().replace(/\.\d+Z$/, 'Z')));
        break;
      case 'email': base = fc.emailAddress(); break;
      case 'uuid': base = fc.uuid(); break;
      case 'binary': base = fc.constant('binary'); break;
      default:
        base = typeof s.pattern === 'string'
          ? matching(s.pattern as string)
          : fc.oneof(
            fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 24), unit: 'grapheme-ascii' }),
            fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 12), unit: 'grapheme' }),
          );
    }
    if (typeof s.pattern === 'string' && s.format !== undefined) base = base.filter((v) => regex(s.pattern as string).test(v));
    return base.filter(fits);
  }

  private object(s: Json, depth: number): fc.Arbitrary<Json> {
    const props = (s.properties ?? {}) as Json;
    const required = new Set<string>(s.required ?? []);
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, sub] of Object.entries(props)) {
      if (!required.has(name) && depth > 5) continue;
      record[name] = this.arb(sub as Json, depth + 1);
    }
    const known = fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
    const extras: fc.Arbitrary<Json>[] = [];
    if (s.patternProperties) {
      for (const [pattern, sub] of Object.entries(s.patternProperties as Json)) {
        extras.push(fc.dictionary(matching(pattern), this.arb(sub as Json, depth + 1), { maxKeys: depth > 4 ? 0 : 3 }));
      }
    } else if (s.additionalProperties !== false && s.additionalProperties !== undefined && Object.keys(props).length === 0) {
      extras.push(fc.dictionary(fc.string({ maxLength: 12 }), this.arb(s.additionalProperties as Json, depth + 1), { maxKeys: depth > 4 ? 0 : 3 }));
    }
    const minProps: number = s.minProperties ?? 0;
    const all = fc.tuple(known, ...extras).map(([k, ...e]) => Object.assign({}, ...e, k) as Json);
    return minProps > 0 ? all.filter((o) => Object.keys(o).length >= minProps) : all;
  }

  // ---- cases ------------------------------------------------------------------------------

  private params(op: Operation, where: 'path' | 'query'): Json[] {
    return ((op.op.parameters ?? []) as Json[]).filter((p) => p.in === where);
  }

  private bodySpec(op: Operation): { type: string; schema: Json; pointer: string } | undefined {
    const content = op.op.requestBody?.content as Json | undefined;
    if (!content) return undefined;
    const type = Object.keys(content)[0]!;
    return { type, schema: content[type].schema as Json, pointer: `/paths/${esc(op.path)}/${op.method.toLowerCase()}/requestBody/content/${esc(type)}/schema` };
  }

  /** Valid inputs of an operation: path and query parameters, body. */
  inputs(op: Operation): fc.Arbitrary<{ params: Json; query: Json; body: unknown }> {
    const pathRec: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of this.params(op, 'path')) {
      const s = this.resolve(p.schema as Json);
      // A path segment cannot be empty, and `.`/`..` are resolved away by URL rules.
      pathRec[p.name] = (s.type === 'string' ? this.arb({ ...s, minLength: Math.max(1, s.minLength ?? 0) }) : this.arb(s))
        .filter((v) => v !== '.' && v !== '..');
    }
    const queryRec: Record<string, fc.Arbitrary<unknown>> = {};
    const requiredQuery: string[] = [];
    for (const p of this.params(op, 'query')) {
      queryRec[p.name] = this.arb(p.schema as Json).filter((v) => v !== null);
      if (p.required) requiredQuery.push(p.name);
    }
    const body = this.bodySpec(op);
    const bodyArb: fc.Arbitrary<unknown> = body ? this.arb(body.schema) : fc.constant(undefined);
    const validBody = body && body.type === 'application/json' ? this.validator(body.pointer) : undefined;
    return fc.record({
      params: fc.record(pathRec),
      query: fc.record(queryRec, { requiredKeys: requiredQuery }),
      // A generated body the document refuses after all (a value matching two oneOf branches,
      // say) is marked rather than filtered away: a filter that rarely passes would spin forever.
      body: validBody ? bodyArb.map((b) => (validBody(b) ? b : GENERATOR_MISS)) : bodyArb,
    }) as fc.Arbitrary<{ params: Json; query: Json; body: unknown }>;
  }

  /** Negative inputs: one thing made invalid by the document, with the name of the mutation. */
  negatives(op: Operation): fc.Arbitrary<{ params: Json; query: Json; body: unknown; mutation: string; raw?: string }> | undefined {
    const choices: fc.Arbitrary<{ params: Json; query: Json; body: unknown; mutation: string; raw?: string }>[] = [];
    const base = this.inputs(op);
    const body = this.bodySpec(op);
    if (body?.type === 'application/json') {
      const valid = this.validator(body.pointer);
      const schema = this.resolve(body.schema);
      choices.push(base.map((b) => ({ ...b, mutation: 'malformed JSON', raw: '{"unterminated": ' })));
      choices.push(fc.tuple(base, fc.constantFrom<unknown>([], 42, 'text', null, true)).map(([b, v]) => ({ ...b, body: v, mutation: `body ${JSON.stringify(v)}` })));
      // When the mutation happens to leave the body valid (or none applies), a body of the wrong type stands in.
      choices.push(fc.tuple(base, fc.nat()).map(([b, n]) => {
        const m = mutateBody(b, n, schema, this);
        return m.mutation !== '' && !valid(m.body) ? m : { ...b, body: 42, mutation: 'body 42' };
      }));
    } else if (body?.type === 'multipart/form-data') {
      const required: string[] = this.resolve(body.schema).required ?? [];
      if (required.length > 0) choices.push(base.map((b) => ({ ...b, body: omit(b.body as Json, required[0]!), mutation: `multipart without ${required[0]}` })));
    }
    const scalarParams = [...this.params(op, 'path'), ...this.params(op, 'query')];
    for (const p of scalarParams) {
      // An empty path segment names another route (or none): that is a routing question, not this parameter's.
      const bad = badStrings(this.resolve(p.schema as Json)).filter((v) => !this.acceptsRaw(p, v) && !(p.in === 'path' && v.trim() === ''));
      if (bad.length === 0) continue;
      choices.push(fc.tuple(base, fc.constantFrom(...bad)).map(([b, v]) => {
        const params = { ...b.params };
        const query = { ...b.query };
        (p.in === 'path' ? params : query)[p.name] = new RawValue(v);
        return { ...b, params, query, mutation: `${p.in} ${p.name}=${JSON.stringify(v)}` };
      }));
    }
    for (const p of this.params(op, 'query').filter((q) => q.required)) {
      choices.push(base.map((b) => ({ ...b, query: omit(b.query, p.name as string), mutation: `without query ${p.name}` })));
    }
    return choices.length > 0 ? fc.oneof(...choices) : undefined;
  }

  /** Whether the raw query/path string `v` is valid for parameter `p` once coerced as a server would. */
  acceptsRaw(p: Json, v: string): boolean {
    const s = this.resolve(p.schema as Json);
    const value = s.type === 'array' ? [coerce(v, this.resolve(s.items ?? {}))] : coerce(v, s);
    return this.ajv.validate(absolute(s), value) as boolean;
  }

  /** Turns inputs into a request. */
  request(op: Operation, kind: FuzzCase['kind'], inputs: { params: Json; query: Json; body: unknown; mutation?: string; raw?: string }, token: string | undefined): FuzzCase {
    let url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(wire(inputs.params[name])));
    const pairs: string[] = [];
    for (const [name, value] of Object.entries(inputs.query)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(wire(v))}`);
    }
    if (pairs.length > 0) url += `?${pairs.join('&')}`;
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    const c: FuzzCase = { kind, method: op.method, url, headers };
    if (inputs.mutation) c.mutation = inputs.mutation;
    const body = this.bodySpec(op);
    if (body?.type === 'application/json') {
      headers['content-type'] = 'application/json';
      c.body = inputs.raw ?? JSON.stringify(inputs.body);
    } else if (body?.type === 'multipart/form-data') {
      const boundary = 'fuzzboundary7d1';
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      c.body = multipartBody(inputs.body as Json, this.resolve(body.schema), boundary);
    }
    return c;
  }

  // ---- checks -----------------------------------------------------------------------------

  /** 422 issues that speak of the site's state or of rules no schema keyword states: documented per case. */
  private semantic(op: Operation, i: Json): boolean {
    const msg = String(i.msg);
    // The grammar of `search` (field:value terms, AND/OR, parentheses): no schema keyword can state it.
    if (i.loc?.[0] === 'query' && i.loc?.[1] === 'search') return true;
    // A field named twice in sort_by: the description says "each field at most once"; a pattern could only say it with a backreference.
    if (i.loc?.[1] === 'sort_by' && /appears twice/.test(msg)) return true;
    // DELETE /bot refuses ids of bots that do not exist or have open requests: which ids those are is the site's state.
    if (op.id === 'DELETE /api/v2/bot' && /are unknown or have open requests/.test(msg)) return true;
    // Two path ids that must differ: a rule across parameters, which no schema keyword states.
    if (op.id === 'POST /api/v2/box/swap/{source_box_id}/{target_box_id}' && /cannot be swapped with itself/.test(msg)) return true;
    // A KPI window's bounds against each other (from before to, at most 31 days): a rule across parameters too.
    if (op.id.startsWith('GET /api/v2/kpi') && /from must be before to|the window spans more than/.test(msg)) return true;
    return false;
  }

  /** What is wrong with an answer, if anything. */
  check(op: Operation, c: FuzzCase, a: Answer): Omit<Finding, 'operation' | 'fuzzCase' | 'answer'>[] {
    const out: Omit<Finding, 'operation' | 'fuzzCase' | 'answer'>[] = [];
    const fail = (check: Finding['check'], message: string): void => void out.push({ check, status: a.status, message });
    if (a.status >= 500) fail('server_error', `status ${a.status}`);
    const responses = op.op.responses as Json;
    const key = [String(a.status), `${String(a.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) fail('undocumented_status', `status ${a.status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
    else {
      const content = responses[key].content as Json | undefined;
      const type = String(a.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (content && type !== '' && a.status !== 204) {
        if (!(type in content)) fail('schema_violation', `content-type ${type} is not documented for ${a.status} (documented: ${Object.keys(content).join(', ')})`);
        else if (type === 'application/json' && content[type].schema) {
          const v = this.validator(`/paths/${esc(op.path)}/${op.method.toLowerCase()}/responses/${key}/content/application~1json/schema`);
          if (a.json === undefined) fail('schema_violation', 'the body is not JSON');
          else if (!v(a.json)) fail('schema_violation', this.ajv.errorsText(v.errors, { separator: '; ' }));
        }
      }
    }
    const secured = !(Array.isArray(op.op.security) && op.op.security.length === 0);
    if (c.kind === 'negative' && (a.status < 400 || a.status >= 500)) fail('negative_accepted', `${c.mutation ?? 'negative case'} answered ${a.status}`);
    if (c.kind === 'no-auth' && a.status !== 401) fail('auth_ignored', `no credentials answered ${a.status}`);
    if (c.kind === 'positive') {
      // Refusals of the input as such; other documented 4xx are semantic (not found, conflict,
      // rate limit, upgrade required...). 401 is semantic on public operations, whose input is the credential.
      const syntactic = [400, 405, 413, 415, 422, ...(secured ? [401] : [])];
      if (syntactic.includes(a.status)) {
        if (a.status !== 422) fail('positive_rejected', `a case valid by the document answered ${a.status}`);
        else {
          const schemaLike = schemaIssues(a.json, (i) => this.semantic(op, i));
          if (schemaLike.length > 0) fail('positive_rejected', `a case valid by the document was refused as invalid: ${schemaLike.join('; ')}`);
        }
      }
    }
    return out;
  }
}

/** 422 issues naming a schema keyword: the document should have said so. */
const SCHEMA_TYPES = /^(\w+_type|missing|extra_forbidden|greater_than(_equal)?|less_than(_equal)?|string_too_(short|long)|string_pattern_mismatch|enum|literal_error|union_error|too_(short|long))$/;
/**
 * Issues of a 422 that the document should have prevented: a schema keyword's, or any issue
 * with a path or query parameter (a parameter's schema can say what the daemon checks), less
 * the documented semantic ones.
 */
function schemaIssues(body: unknown, semantic: (issue: Json) => boolean): string[] {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (!Array.isArray(detail)) return [];
  return detail
    .filter((i: Json) => !semantic(i) && (SCHEMA_TYPES.test(String(i.type)) || i.loc?.[0] === 'query' || i.loc?.[0] === 'path'))
    .map((i: Json) => `${(i.loc as unknown[]).join('.')}: ${i.msg} (${i.type})`);
}

/** Stands for a generated body that turned out invalid: such positive cases are not sent. */
export const GENERATOR_MISS = Symbol('generator miss');

/** A raw string sent as is for a parameter (a negative value). */
class RawValue {
  constructor(readonly value: string) {}
}

function wire(v: unknown): string {
  if (v instanceof RawValue) return v.value;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function esc(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function omit(o: Json, key: string): Json {
  const copy = { ...o };
  delete copy[key];
  return copy;
}

/** The coercion a server applies to query and path strings by schema type. */
/** A copy of a schema taken out of the document whose `#/...` references still point into it. */
function absolute(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `openapi.json${value}` : value))) as Json;
}

function coerce(v: string, s: Json): unknown {
  if (Array.isArray(s.anyOf)) {
    for (const branch of s.anyOf as Json[]) {
      const c = coerce(v, branch);
      if (c !== v) return c;
    }
    return v;
  }
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.includes('integer') && /^[+-]?\d+$/.test(v)) return Number(v);
  if (types.includes('number') && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (types.includes('boolean') && ['true', 'false', '1', '0'].includes(v)) return v === 'true' || v === '1';
  return v;
}

/** Strings that some schema would refuse: wrong types, out of range, bad formats. */
function badStrings(s: Json): string[] {
  const item = s.type === 'array' ? (s.items ?? {}) : s;
  const out = ['abc', '1.5', '-1', '', 'not-a-date', '99999999999999999999', 'true', ' '];
  if (typeof item.minimum === 'number') out.push(String(item.minimum - 1));
  if (typeof item.maximum === 'number') out.push(String(item.maximum + 1));
  if (typeof item.maxLength === 'number' && item.maxLength < 300) out.push('x'.repeat(item.maxLength + 1));
  return out;
}

function mutateBody(b: { params: Json; query: Json; body: unknown }, n: number, schema: Json, f: Fuzzer): { params: Json; query: Json; body: unknown; mutation: string } {
  const body = b.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ...b, mutation: '' };
  // A union (POST /requests): mutate the fields the generated body has.
  const union = !schema.properties && (schema.anyOf ?? schema.oneOf);
  const props = (union ? Object.fromEntries(Object.keys(body).map((k) => [k, {}])) : schema.properties ?? {}) as Json;
  const required: string[] = union ? Object.keys(body) : schema.required ?? [];
  const names = Object.keys(props);
  const options: (() => { body: Json; mutation: string })[] = [];
  if (required.length > 0) options.push(() => ({ body: omit(body as Json, required[n % required.length]!), mutation: `without ${required[n % required.length]}` }));
  if (schema.additionalProperties === false || union) options.push(() => ({ body: { ...(body as Json), fuzz_extra_field: 1 }, mutation: 'extra property fuzz_extra_field' }));
  if (names.length > 0) {
    options.push(() => {
      const name = names[n % names.length]!;
      const t = f.resolve(props[name] as Json).type;
      const wrong = t === 'string' ? 12345 : t === 'array' ? 'not a list' : t === 'object' ? ['not', 'an', 'object'] : t === undefined ? { fuzz: [] } : 'not a number';
      return { body: { ...(body as Json), [name]: wrong }, mutation: `${name}: ${JSON.stringify(wrong)}` };
    });
  }
  if (options.length === 0) return { ...b, mutation: '' };
  return { ...b, ...options[Math.floor(n / 7) % options.length]!() };
}

function multipartBody(fields: Json, schema: Json, boundary: string): Buffer {
  const chunks: Buffer[] = [];
  const part = (name: string, value: string | Buffer, filename?: string): void => {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"`;
    if (filename !== undefined) head += `; filename="${filename}"`;
    head += filename !== undefined ? '\r\nContent-Type: application/octet-stream\r\n' : '\r\n';
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(value), Buffer.from('\r\n'));
  };
  for (const [name, value] of Object.entries(fields ?? {})) {
    const s = (schema.properties ?? {})[name] as Json | undefined;
    const binary = s?.format === 'binary' || s?.items?.format === 'binary';
    for (const v of Array.isArray(value) ? value : [value]) {
      if (binary) part(name, Buffer.from('fuzz file contents\n'), 'fuzz.txt');
      else part(name, typeof v === 'string' ? v : JSON.stringify(v));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}
