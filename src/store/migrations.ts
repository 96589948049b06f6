/** The store's schema history. Append a step for every change of stored shapes; never edit one. */
import type { Migration } from './store.js';

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'initial layout: meta database with sequences', up: () => undefined },
];
