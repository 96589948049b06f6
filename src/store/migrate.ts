/**
 * Running the schema's migrations (the steps themselves: `migrations.ts`) and the schema
 * version a store is at. At open, every pending step runs in one synchronous transaction that a
 * throw aborts whole: a crash or a failing step mid-way leaves the old version intact, and an
 * index rebuild or a dropped database needs no undo note. A store written by a newer build is
 * refused; a read-only open (the technician's commands) refuses any other version than this
 * build's rather than misread it, and migrates nothing.
 */
import type { Database } from 'lmdb';
import type { Collection } from './collection.js';
import type { Store } from './store.js';

/** One step of the schema; `up` runs inside a write transaction. */
export interface Migration {
  version: number;
  description: string;
  up(store: Store): void;
}

/** A read-only open found a store of another schema version than this build's. */
export class StoreVersionError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the store is at schema version ${found}, this build reads version ${known}: ${found < known ? 'start the daemon of this version once to migrate it' : 'use the version that wrote it'}`);
    this.name = 'StoreVersionError';
  }
}

/** The store was written by a newer build (a downgrade): this one must not touch it. */
export class StoreTooNewError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the store has schema version ${found}, newer than this build knows (${known}); install a newer build or restore a backup`);
    this.name = 'StoreTooNewError';
  }
}

/** The meta database's key of the schema version the store is at. */
const META_SCHEMA_VERSION = 'schema_version';

/** The schema version stored in `meta` (0 for a new store). */
export function schemaVersion(meta: Database<unknown, string>): number {
  return (meta.get(META_SCHEMA_VERSION) as number | undefined) ?? 0;
}

/** Why a read-only open must not read this store (another schema version than the migrations lead to), or undefined. */
export function readOnlyRefusal(meta: Database<unknown, string>, migrations: readonly Migration[]): StoreVersionError | undefined {
  const latest = Math.max(0, ...migrations.map((m) => m.version));
  const found = schemaVersion(meta);
  return found === latest ? undefined : new StoreVersionError(found, latest);
}

/**
 * Runs the steps of `migrations` the store has not had, in order, in one transaction
 * (`inOneTransaction`), and stores the new version in it. Index rebuilds wait until the last
 * step, so a collection that several steps rebuild is written once.
 */
export async function migrate(
  store: Store,
  meta: Database<unknown, string>,
  collections: readonly Collection<unknown>[],
  inOneTransaction: (fn: () => void) => Promise<void>,
  migrations: readonly Migration[],
): Promise<void> {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const latest = sorted.at(-1)?.version ?? 0;
  const current = schemaVersion(meta);
  if (current > latest) throw new StoreTooNewError(current, latest);
  const pending = sorted.filter((m) => m.version > current);
  if (pending.length === 0) return;
  await inOneTransaction(() => {
    for (const c of collections) c.deferRebuilds(true);
    for (const m of pending) m.up(store);
    for (const c of collections) c.deferRebuilds(false);
    meta.putSync(META_SCHEMA_VERSION, latest);
  });
}
