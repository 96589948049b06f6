/**
 * Compiled validation of route inputs, reporting in the spec's validation error body
 * (FastAPI/pydantic style: `loc`, `msg`, `type`), so existing clients read it as before.
 */
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ValidationIssue } from '../domain/errors.js';

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** A compiled schema: `check` is the hot path, `issues` explains a failure. */
export interface Validator<T = unknown> {
  check(value: unknown): value is T;
  issues(value: unknown, location: string): ValidationIssue[];
}

/** Compiles a schema once, at route registration. */
export function compile<S extends TSchema>(schema: S): Validator<Static<S>> {
  const compiled = Compile(schema);
  const tagged = discriminated(schema);
  return {
    check: (value): value is Static<S> => compiled.Check(value),
    issues: (value, location) => (tagged ? tagged.issues(value, location) : toIssues([...compiled.Errors(value)] as SchemaError[], location)),
  };
}

/**
 * A union of objects told apart by one constant property (POST /requests by `type`) explains a
 * failure in the words of the branch that property names, or of the property alone when it is
 * missing or unknown: not with the errors of every branch at once.
 */
function discriminated(schema: TSchema): { issues(value: unknown, location: string): ValidationIssue[] } | undefined {
  const branches = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!branches || branches.length < 2) return undefined;
  const constants = (b: TSchema) => Object.entries((b as { properties?: Record<string, { const?: unknown }> }).properties ?? {}).filter(([, p]) => typeof p.const === 'string');
  const tag = constants(branches[0]!)[0]?.[0];
  if (tag === undefined) return undefined;
  const byTag = new Map<unknown, Validator>();
  for (const b of branches) {
    const value = (b as { properties?: Record<string, { const?: unknown }> }).properties?.[tag]?.const;
    if (typeof value !== 'string' || byTag.has(value)) return undefined;
    byTag.set(value, compile(b));
  }
  const allowed = [...byTag.keys()].map((v) => JSON.stringify(v)).join(', ');
  // Fields no branch takes are named even without a branch: they are wrong whatever `type` is.
  const known = new Set(branches.flatMap((b) => Object.keys((b as { properties?: object }).properties ?? {})));
  return {
    issues(value, location) {
      const given = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[tag] : undefined;
      const branch = byTag.get(given);
      if (branch) return branch.issues(value, location);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [{ loc: [location], msg: 'Input should be a valid dictionary', type: 'dict_type' }];
      const extra = Object.keys(value).filter((k) => !known.has(k)).map((k) => ({ loc: [location, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }));
      return [
        given === undefined
          ? { loc: [location, tag], msg: 'Field required', type: 'missing' }
          : { loc: [location, tag], msg: `Input should be ${allowed}`, type: 'union_tag_invalid' },
        ...extra,
      ];
    },
  };
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'int', number: 'float', string: 'string', boolean: 'bool', object: 'dict', array: 'list', null: 'none',
};

function toIssues(errors: SchemaError[], location: string): ValidationIssue[] {
  const anyOfPaths = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/anyOf/`);
  const issues: ValidationIssue[] = [];
  for (const e of errors) {
    // Branch errors of a union are folded into the union's own message; `false` schemas
    // repeat what additionalProperties already says.
    if (anyOfPaths.some((p) => e.schemaPath.startsWith(p)) || e.keyword === 'boolean') continue;
    const loc: (string | number)[] = [location, ...pointer(e.instancePath)];
    switch (e.keyword) {
      case 'required':
        for (const name of (e.params.requiredProperties as string[] | undefined) ?? []) {
          issues.push({ loc: [...loc, name], msg: 'Field required', type: 'missing' });
        }
        break;
      case 'additionalProperties':
        for (const name of (e.params.additionalProperties as string[] | undefined) ?? []) {
          issues.push({ loc: [...loc, name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        }
        break;
      case 'type': {
        const t = String(e.params.type);
        const name = TYPE_NAMES[t] ?? t;
        issues.push({ loc, msg: `Input should be a valid ${t === 'integer' ? 'integer' : t}`, type: `${name}_type` });
        break;
      }
      case 'anyOf': {
        const allowed = errors
          .filter((b) => b.schemaPath.startsWith(`${e.schemaPath}/anyOf/`) && b.keyword === 'const')
          .map((b) => JSON.stringify(b.params.allowedValue));
        issues.push(allowed.length > 0
          ? { loc, msg: `Input should be ${allowed.join(' or ')}`, type: 'literal_error' }
          : { loc, msg: 'Input does not match any allowed form', type: 'union_error' });
        break;
      }
      default:
        issues.push({ loc, ...describe(e) });
    }
  }
  return issues;
}

function describe(e: SchemaError): { msg: string; type: string } {
  const limit = e.params.limit;
  switch (e.keyword) {
    case 'minLength': return { msg: `String should have at least ${String(limit)} characters`, type: 'string_too_short' };
    case 'maxLength': return { msg: `String should have at most ${String(limit)} characters`, type: 'string_too_long' };
    case 'minimum': return { msg: `Input should be greater than or equal to ${String(limit)}`, type: 'greater_than_equal' };
    case 'maximum': return { msg: `Input should be less than or equal to ${String(limit)}`, type: 'less_than_equal' };
    case 'exclusiveMinimum': return { msg: `Input should be greater than ${String(limit)}`, type: 'greater_than' };
    case 'exclusiveMaximum': return { msg: `Input should be less than ${String(limit)}`, type: 'less_than' };
    case 'minItems': return { msg: `List should have at least ${String(limit)} items`, type: 'too_short' };
    case 'maxItems': return { msg: `List should have at most ${String(limit)} items`, type: 'too_long' };
    case 'pattern': return { msg: `String should match pattern '${String(e.params.pattern)}'`, type: 'string_pattern_mismatch' };
    case 'format': return { msg: `Input should be a valid ${String(e.params.format)}`, type: 'value_error' };
    case 'enum': return { msg: `Input should be ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`, type: 'enum' };
    case 'const': return { msg: `Input should be ${JSON.stringify(e.params.allowedValue)}`, type: 'literal_error' };
    case 'minProperties': return { msg: `Object should have at least ${String(limit)} fields`, type: 'too_short' };
    case 'maxProperties': return { msg: `Object should have at most ${String(limit)} fields`, type: 'too_long' };
    default: return { msg: e.message, type: 'value_error' };
  }
}

function pointer(path: string): (string | number)[] {
  if (path === '') return [];
  return path.slice(1).split('/').map((p) => {
    const s = p.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(s) ? Number(s) : s;
  });
}
