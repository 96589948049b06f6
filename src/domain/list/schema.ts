/** The query parameters of a list endpoint as a TypeBox schema: for validation and OpenAPI. */
import Type, { type TObject, type TSchema } from 'typebox';
import { DEFAULT_PAGE_SIZE, paramType, type FieldTable, type FieldType, type ListOptions } from './fields.js';

const scalar = (type: FieldType): TSchema => {
  switch (type) {
    case 'integer': return Type.Integer();
    case 'number': return Type.Number();
    case 'boolean': return Type.Boolean();
    case 'datetime': return Type.String({ description: 'ISO 8601; without an offset it is local wall time of the configured zone' });
    default: return Type.String();
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
      let schema = scalar(type);
      if (op === 'eq' && field.none) schema = Type.Union([schema, Type.Literal('none')]);
      if (op === 'in') schema = Type.Array(schema);
      const description = `${name} ${OP_TEXT[op]}${op === 'eq' && field.none ? '; `none` matches rows without a value' : ''}`;
      props[`${name}__${op}`] = Type.Optional({ ...schema, description });
    }
  }
  props.page = Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, from 1' }));
  props.size = Type.Optional(Type.Integer({ minimum: 1, maximum: options.maxPageSize, default: DEFAULT_PAGE_SIZE, description: `Items per page, at most ${options.maxPageSize}` }));
  props.sort_by = Type.Optional(Type.String({ maxLength: 500, description: `Comma-separated fields, each plain or +field ascending, -field descending. Fields: ${sortable.join(', ')}` }));
  if (searchable.length > 0) {
    props.search = Type.Optional(Type.String({
      maxLength: 1000,
      description: `field:value terms (partial, case-insensitive) joined by AND / OR, one level of parentheses; *:value searches ${searchable.join(', ')}`,
    }));
  }
  return Type.Object(props);
}
