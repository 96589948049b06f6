/** Turns query parameters into a checked ListQuery, or a ValidationError naming the parameter. */
import { ValidationError, type ValidationIssue } from '../errors.js';
import { parseTimeBound } from '../time.js';
import { DEFAULT_PAGE_SIZE, paramType, type FieldTable, type FieldType, type Filter, type FilterOp, type ListOptions, type ListQuery, type SortKey } from './fields.js';
import { INTEGER_TEXT, NUMBER_TEXT } from './schema.js';
import { parseSearch } from './search.js';

const INTEGER_RE = new RegExp(INTEGER_TEXT);
const NUMBER_RE = new RegExp(NUMBER_TEXT);

const OPS = new Set<FilterOp>(['eq', 'gte', 'lte', 'ilike', 'in']);

/**
 * Parses the list parameters of a request. A parameter shaped like a filter (`field__op`) that
 * the list does not have is refused, never ignored: an integration that mistyped a filter
 * would otherwise read the unfiltered list as its answer. Other unknown parameters are ignored.
 */
export function parseListQuery<T>(table: FieldTable<T>, params: Record<string, unknown>, options: ListOptions): ListQuery {
  const issues: ValidationIssue[] = [];
  const filters: Filter[] = [];
  for (const [param, raw] of Object.entries(params)) {
    const sep = param.lastIndexOf('__');
    if (sep <= 0) continue;
    const name = param.slice(0, sep);
    const op = param.slice(sep + 2) as FilterOp;
    const field = table[name];
    if (!field || !OPS.has(op) || !field.filters?.includes(op)) {
      issues.push({ loc: ['query', param], msg: unknownFilter(table, name, op), type: 'value_error' });
      continue;
    }
    try {
      const list = op === 'in' ? (Array.isArray(raw) ? raw : [raw]) : [Array.isArray(raw) ? raw[raw.length - 1] : raw];
      const values = list.map((v) => (op === 'eq' && field.none && v === 'none' ? null : convert(v, op === 'ilike' ? 'string' : field.type, paramType(field, op), options.timeZone)));
      filters.push({ field: name, op, values: op === 'ilike' ? values.map((v) => String(v).toLowerCase()) : values });
    } catch (err) {
      issues.push({ loc: ['query', param], msg: (err as Error).message, type: field.type === 'integer' ? 'int_parsing' : 'value_error' });
    }
  }

  const page = integerParam(params.page, 1, 'page', 1, Number.MAX_SAFE_INTEGER, issues);
  const size = integerParam(params.size, DEFAULT_PAGE_SIZE, 'size', 1, options.maxPageSize, issues);

  let search;
  if (params.search !== undefined && params.search !== '') {
    try {
      search = parseSearch(String(params.search), table);
    } catch (err) {
      if (err instanceof ValidationError) issues.push(...err.issues);
      else throw err;
    }
  }

  let sort: SortKey[] = [];
  const sortText = params.sort_by !== undefined && params.sort_by !== '' ? String(params.sort_by) : options.defaultSort;
  if (sortText !== undefined) {
    try {
      sort = parseSort(sortText, table);
    } catch (err) {
      issues.push({ loc: ['query', 'sort_by'], msg: (err as Error).message, type: 'value_error' });
    }
  }

  if (issues.length > 0) throw new ValidationError(issues);
  return { filters, search, sort, page, size };
}

/** Why `name__op` is no filter of this list, and what is. */
function unknownFilter<T>(table: FieldTable<T>, name: string, op: string): string {
  const field = table[name];
  if (field?.filters?.length) return `${name} has no ${op} filter; its filters: ${field.filters.map((f) => `${name}__${f}`).join(', ')}`;
  const filterable = Object.keys(table).filter((n) => table[n]!.filters?.length);
  return `Unknown filter ${name}__${op}; this list filters by: ${filterable.join(', ')}`;
}

function parseSort<T>(text: string, table: FieldTable<T>): SortKey[] {
  const keys: SortKey[] = [];
  for (const part of text.split(',')) {
    const item = part.trim();
    const descending = item.startsWith('-');
    const name = item.replace(/^[+-]/, '').trim();
    if (name === '') throw new Error(`Empty sort field in ${JSON.stringify(text)}`);
    const field = table[name];
    if (!field || field.sort === false) {
      const sortable = Object.keys(table).filter((n) => table[n]!.sort !== false);
      throw new Error(`Cannot sort by ${JSON.stringify(name)}; sortable: ${sortable.join(', ')}`);
    }
    if (keys.some((k) => k.field === name)) throw new Error(`Field ${JSON.stringify(name)} appears twice in sort_by`);
    keys.push({ field: name, descending });
  }
  return keys;
}

/** Converts a parameter value to the field's type for comparison. */
function convert(value: unknown, fieldType: FieldType, declared: FieldType, zone: string): unknown {
  if (fieldType === 'datetime') {
    if (typeof value === 'number') return value;
    return parseTimeBound(String(value), zone);
  }
  if (fieldType === 'integer' || fieldType === 'number') {
    // Strings are decimal numbers (the patterns of schema.ts), not anything Number() reads ("0x1f", " 1 ").
    const text = fieldType === 'integer' ? INTEGER_RE : NUMBER_RE;
    const n = typeof value === 'number' ? value : typeof value === 'string' && text.test(value) ? Number(value) : NaN;
    // A decimal too large for a double ("1e999") is Infinity: it matches no row, like any other value.
    if (Number.isNaN(n) || (fieldType === 'integer' && declared === 'integer' && !Number.isInteger(n))) {
      throw new Error(`Input should be a valid ${fieldType === 'integer' ? 'integer' : 'number'}, got ${JSON.stringify(value)}`);
    }
    return n;
  }
  if (fieldType === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new Error(`Input should be a valid boolean, got ${JSON.stringify(value)}`);
  }
  return String(value);
}

function integerParam(raw: unknown, fallback: number, name: string, min: number, max: number, issues: ValidationIssue[]): number {
  if (raw === undefined) return fallback;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) issues.push({ loc: ['query', name], msg: 'Input should be a valid integer', type: 'int_parsing' });
  else if (n < min) issues.push({ loc: ['query', name], msg: `Input should be greater than or equal to ${min}`, type: 'greater_than_equal' });
  else if (n > max) issues.push({ loc: ['query', name], msg: `Input should be less than or equal to ${max}`, type: 'less_than_equal' });
  else return n;
  return fallback;
}
