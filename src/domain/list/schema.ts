/** The query parameters of a list endpoint as a TypeBox schema: for validation and OpenAPI. */
import Type, { type TObject, type TSchema } from 'typebox';
import { TIME_BOUND_PATTERN } from '../time.js';
import { DEFAULT_PAGE_SIZE, paramType, type FieldTable, type FieldType, type ListOptions } from './fields.js';

/** A decimal integer / number written as a string: what the engine compares a numeric field with. */
export const INTEGER_TEXT = '^[+-]?[0-9]+$';
export const NUMBER_TEXT = '^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$';

/**
 * The schema of one filter value: the declared parameter type, narrowed to what the engine
 * accepts for the field. A string parameter on a numeric field (the spec types some of them
 * string) carries the pattern of a decimal number, and timestamp bounds the pattern of
 * parseTimeBound, so the document says exactly what the daemon takes.
 */
const scalar = (type: FieldType, fieldType: FieldType): TSchema => {
  switch (type) {
    case 'integer': return Type.Integer();
    case 'number': return Type.Number();
    case 'boolean': return Type.Boolean();
    case 'datetime': return Type.String({ pattern: TIME_BOUND_PATTERN, description: 'ISO 8601 date or date-time (years 1000 to 9999); without an offset it is local wall time of the configured zone' });
    default:
      if (fieldType === 'integer') return Type.String({ pattern: INTEGER_TEXT });
      if (fieldType === 'number') return Type.String({ pattern: NUMBER_TEXT });
      return Type.String();
  }
};

const OP_TEXT = { eq: 'equals', gte: 'at least (inclusive)', lte: 'at most (inclusive)', ilike: 'contains, case-insensitive (% is a wildcard)', in: 'one of; repeat the parameter once per value' } as const;

/** Every query parameter of a list endpoint over `table`. */
export function listQuerySchema<T>(table: FieldTable<T>, options: Pick<ListOptions, 'maxPageSize'>): TObject {
  const props: Record<string, TSchema> = {};
  const searchable: string[] = [];
  const sortable: string[] = [];
  for (const [name, field] of Object.entries(table)) {
    if (field.search) searchable.push(name);
    if (field.sort !== false) sortable.push(name);
    for (const op of field.filters ?? []) {
      const type = paramType(field, op);
      let schema = field.values && (op === 'eq' || op === 'in') ? field.values : scalar(type, op === 'ilike' ? 'string' : field.type);
      if (op === 'eq' && field.none) schema = Type.Union([schema, Type.Literal('none')]);
      if (op === 'in') schema = Type.Array(schema);
      const description = `${name} ${OP_TEXT[op]}${op === 'eq' && field.none ? '; `none` matches rows without a value' : ''}`;
      // A named schema (an enum with an `$id`) stays itself, so the document references it;
      // the parameter's own words go around it.
      props[`${name}__${op}`] = Type.Optional('$id' in schema ? Type.Intersect([schema], { description }) : { ...schema, description });
    }
  }
  props.page = Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' }));
  props.size = Type.Optional(Type.Integer({ minimum: 1, maximum: options.maxPageSize, default: DEFAULT_PAGE_SIZE, description: `Items per page, at most ${options.maxPageSize}` }));
  const key = `\\s*[+-]?\\s*(${sortable.map(escapeRegex).join('|')})\\s*`;
  props.sort_by = Type.Optional(Type.String({
    maxLength: 500,
    pattern: `^(${key}(,${key})*)?$`,
    description: `Comma-separated fields, each plain or +field ascending, -field descending (each field at most once). Fields: ${sortable.join(', ')}`,
  }));
  if (searchable.length > 0) {
    props.search = Type.Optional(Type.String({
      maxLength: 1000,
      description: `field:value terms (partial, case-insensitive) joined by AND / OR, one level of parentheses; *:value searches ${searchable.join(', ')}`,
    }));
  }
  return Type.Object(props);
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
