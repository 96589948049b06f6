/** The store's schema history. Append a step for every change of stored shapes; never edit one. */
import type { Migration } from './store.js';

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'initial layout: meta database with sequences', up: () => undefined },
  {
    version: 2,
    description: 'secondary indexes as ranges of [value, key] entries instead of dupSort databases',
    up: (store) => {
      for (const c of store.registered()) {
        c.rebuildIndexes();
        for (const index of c.def.indexes ?? []) store.dropDatabase(`${c.def.name}~${index.name}`, { dupSort: true });
      }
    },
  },
];
