/** A store collection as a list source: listed fields map to its indexes or its primary key. */
import type { Collection, IndexValue, Key } from '../../store/collection.js';
import type { ListSource } from './fields.js';

/**
 * Wraps a collection. `indexes` maps a list field to the collection index that finds rows by
 * it, or to null for the primary key.
 */
export function collectionSource<T>(collection: Collection<T>, indexes: Record<string, string | null>): ListSource<T> {
  return {
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
