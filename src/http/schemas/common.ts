/** Shapes shared by many endpoints: nullable fields, timestamp pairs, the paginated envelope. */
import Type, { type TSchema } from 'typebox';

import { Nullable } from '../../domain/nullable.js';

export { Nullable };

const legacy = Type.String({ description: 'Legacy: naive local wall time of the configured zone (default Europe/Berlin). Use the _utc twin.' });
const utc = Type.String({ format: 'date-time', description: 'ISO 8601 with explicit offset' });

/** The legacy field and its `_utc` twin (spec 2.1). */
export function Timestamp<N extends string>(name: N, nullable = false) {
  return {
    [name]: nullable ? Nullable(legacy) : legacy,
    [`${name}_utc`]: nullable ? Nullable(utc) : utc,
  } as unknown as Record<N | `${N}_utc`, TSchema>;
}

/** The paginated envelope of spec 2.1; named `Page_Job_` in the document when its item is named `Job`. */
export function Page<T extends TSchema>(item: T) {
  const id = (item as { $id?: unknown }).$id;
  return Type.Object({
    items: Type.Array(item),
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 1 }),
    size: Type.Integer({ minimum: 1 }),
    pages: Type.Integer({ minimum: 0 }),
  }, typeof id === 'string' ? { $id: `Page_${id}_` } : {});
}
