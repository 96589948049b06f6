/** A store collection as a list source: listed fields map to its indexes or its primary key. */
import type { Collection, IndexValue, Key } from '../../store/collection.js';
import type { ListSource } from './fields.js';

/**
 * Wraps a collection. `indexes` maps a list field to the collection index that finds rows by
 * it, or to null for the primary key; `orders` maps a list field to the index that keeps the
 * rows in its order (the index's value being the field's, never missing), so a sorted page is
 * read from the top of it instead of sorting every row.
 */
export function collectionSource<T>(collection: Collection<T>, indexes: Record<string, string | null>, orders: Record<string, string> = {}): ListSource<T> {
  const key = collection.def.key;
  const defined = new Set((collection.def.indexes ?? []).map((i) => i.name));
  for (const index of [...Object.values(indexes), ...Object.values(orders)]) {
    if (index !== null && !defined.has(index)) throw new Error(`collection ${collection.def.name} has no index ${index}`);
  }
  const ordered = Object.keys(orders).length > 0;
  return {
    ...(ordered && {
      ordered: (field: string, descending: boolean) => (field in orders ? collection.runsBy(orders[field]!, descending) : undefined),
      // The store's order is its keys' order: ties are broken by the key itself.
      rank: (row: T) => key(row),
      within(field: string, low: unknown, high: unknown) {
        if (!(field in orders)) return undefined;
        const index = orders[field]!;
        const bounds = { low: low as IndexValue | undefined, high: high as IndexValue | undefined };
        const all = () => [...collection.runsBy(index, false, bounds)].flat();
        return {
          *[Symbol.iterator]() {
            for (const run of collection.runsBy(index, false, bounds)) yield* run;
          },
          toArray: all,
          inOrderOf: (name: string, descending: boolean) => (name === field ? collection.runsBy(index, descending, bounds) : undefined),
          get size() {
            return collection.countWithin(index, bounds);
          },
        };
      },
    }),
    lookup(field, values) {
      if (!(field in indexes)) return undefined;
      const index = indexes[field];
      return (function* () {
        for (const value of values) {
          if (index === null) {
            const row = collection.get(value as Key);
            if (row !== undefined) yield row;
          } else {
            yield* collection.findBy(index!, value as IndexValue);
          }
        }
      })();
    },
    scan: () => collection.scan(),
    get size() {
      return collection.count();
    },
    countLookup(field, values) {
      if (!(field in indexes)) return undefined;
      const index = indexes[field];
      let n = 0;
      for (const value of values) n += index === null ? (collection.has(value as Key) ? 1 : 0) : collection.countBy(index!, value as IndexValue);
      return n;
    },
  };
}
