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
  {
    version: 3,
    description: 'requests and jobs indexed by status (GET /jobs?status__eq=EXECUTING read every job)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'requests' || c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
];
