/**
 * Query strings as spec 4.0.1 wants them: a repeated key gives several values, a comma is
 * part of a value (never a separator), and values are converted to the types the route's
 * query schema declares before validation.
 */
import type { TObject, TSchema } from 'typebox';
import type { ValidationIssue } from '../domain/errors.js';

export type RawQuery = Record<string, string | string[]>;

/** Parses `a=1&b=2&b=3` into `{ a: '1', b: ['2', '3'] }`. */
export function parseQuery(qs: string): RawQuery {
  const out: RawQuery = Object.create(null) as RawQuery;
  if (qs === '') return out;
  for (const pair of qs.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return out;
}

function decode(s: string): string {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  // Most keys and values have no escapes; decodeURIComponent would only copy them.
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus; // a stray % stays literal; validation judges the value
  }
}

/**
 * Converts raw strings to the schema's types where that is unambiguous. Values that do not
 * convert are left as they are, so the validator reports them with the right message.
 */
export function coerceQuery(raw: RawQuery, schema: TObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = schema.properties as Record<string, TSchema>;
  for (const key in raw) {
    // Undeclared parameters are ignored: dropping them also keeps `__proto__` and the like
    // from ever becoming keys of a plain object.
    if (!Object.hasOwn(props, key)) continue;
    out[key] = coerceValue(raw[key]!, props[key]!);
  }
  return out;
}

function coerceValue(value: string | string[], schema: TSchema): unknown {
  const s = schema as { type?: unknown; items?: TSchema; anyOf?: TSchema[] };
  if (s.type === 'array') {
    const list = Array.isArray(value) ? value : [value];
    return s.items ? list.map((v) => coerceScalar(v, s.items!)) : list;
  }
  // A scalar parameter given twice is refused (repeatedScalars); the last stands in until then.
  return coerceScalar(Array.isArray(value) ? value[value.length - 1]! : value, schema);
}

function coerceScalar(value: string, schema: TSchema): unknown {
  const s = schema as { type?: unknown; anyOf?: TSchema[]; const?: unknown };
  if (s.anyOf) {
    for (const option of s.anyOf) {
      const converted = coerceScalar(value, option);
      if (converted !== value || (option as { type?: unknown }).type === 'string' || (option as { const?: unknown }).const === value) return converted;
    }
    return value;
  }
  switch (s.type) {
    case 'integer':
      return /^[+-]?\d+$/.test(value) ? Number(value) : value;
    case 'number':
      return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return value;
    default:
      return value;
  }
}

/**
 * The `field__op` parameters a filtering endpoint does not take, as validation issues naming
 * each one and what the field does take: a typo must not pass for the unfiltered list.
 */
export function unknownFilters(raw: RawQuery, schema: TObject): ValidationIssue[] {
  const props = schema.properties as Record<string, TSchema>;
  const issues: ValidationIssue[] = [];
  for (const key in raw) {
    const cut = key.lastIndexOf('__');
    if (cut <= 0 || Object.hasOwn(props, key)) continue;
    const field = key.slice(0, cut);
    const ops = Object.keys(props).filter((p) => p.startsWith(`${field}__`) && !p.slice(field.length + 2).includes('__')).map((p) => p.slice(field.length + 2));
    const fields = [...new Set(Object.keys(props).filter((p) => p.includes('__')).map((p) => p.slice(0, p.lastIndexOf('__'))))];
    issues.push({
      loc: ['query', key],
      msg: ops.length > 0 ? `Unknown filter: ${field} can be filtered with ${ops.join(', ')}` : `Unknown filter: no field ${field} to filter on (fields: ${fields.join(', ')})`,
      type: 'extra_forbidden',
    });
  }
  return issues;
}

/**
 * Scalar parameters given more than once (`size=1&size=2`), as validation issues: which one
 * was meant cannot be told, and taking either would answer a question nobody asked.
 */
export function repeatedScalars(raw: RawQuery, schema: TObject): readonly ValidationIssue[] {
  const props = schema.properties as Record<string, TSchema & { type?: unknown }>;
  let issues: ValidationIssue[] | undefined;
  for (const key in raw) {
    const value = raw[key];
    if (!Array.isArray(value) || !Object.hasOwn(props, key) || props[key]!.type === 'array') continue;
    (issues ??= []).push({ loc: ['query', key], msg: `Given ${value.length} times: ${key} takes one value`, type: 'value_error' });
  }
  // Checked on every request with a query: nothing is allocated when nothing is wrong.
  return issues ?? NO_ISSUES;
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

/**
 * Says why a refused list value holds a comma: spec 4.0.1 takes `status__in=A&status__in=B`,
 * and `status__in=A,B` is the one value "A,B", which an integrator may not expect.
 */
export function explainCommas(issues: ValidationIssue[], raw: RawQuery): ValidationIssue[] {
  return issues.map((issue) => {
    const [where, key, index] = issue.loc;
    if (where !== 'query' || typeof key !== 'string' || typeof index !== 'number') return issue;
    const given = raw[key];
    const value = Array.isArray(given) ? given[index] : given;
    if (value === undefined || !value.includes(',')) return issue;
    return { ...issue, msg: `${issue.msg}. A comma does not separate values: repeat the parameter once per value (${key}=a&${key}=b)` };
  });
}
