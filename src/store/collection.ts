/**
 * A typed collection: one LMDB sub-database of records by primary key, plus one dupSort
 * sub-database per secondary index (index value -> primary keys). Index entries are written
 * in the same transaction as the record, so they can never disagree with it.
 */
import type { Database, RootDatabase } from 'lmdb';
import { ConflictError } from '../domain/errors.js';

export type Key = string | number;
export type IndexValue = string | number | boolean;

/** A secondary index; `of` returns the value(s) a record is found under, or undefined for none. */
export interface IndexDef<T> {
  name: string;
  of(record: T): IndexValue | readonly IndexValue[] | undefined;
  /** At most one record per index value; a second one is refused with a ConflictError. */
  unique?: boolean;
}

/** The definition of a collection: its name, primary key and indexes. */
export interface CollectionDef<T> {
  name: string;
  key(record: T): Key;
  indexes?: readonly IndexDef<T>[];
}

/** Records of one kind. Reads are synchronous; writes must run inside `Store.write`. */
export class Collection<T> {
  private readonly records: Database<T, Key>;
  private readonly indexes = new Map<string, { def: IndexDef<T>; db: Database<Key, IndexValue> }>();

  constructor(
    root: RootDatabase,
    readonly def: CollectionDef<T>,
    private readonly inWrite: () => boolean,
  ) {
    this.records = root.openDB<T, Key>({ name: def.name });
    for (const index of def.indexes ?? []) {
      const db = root.openDB<Key, IndexValue>({ name: `${def.name}~${index.name}`, dupSort: true, encoding: 'ordered-binary' });
      this.indexes.set(index.name, { def: index, db });
    }
  }

  /** The record with this primary key, or undefined. */
  get(key: Key): T | undefined {
    return this.records.get(key);
  }

  /** Whether a record with this key exists. */
  has(key: Key): boolean {
    return this.records.doesExist(key);
  }

  /** Whether the collection has an index of this name. */
  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Primary keys of the records found under `value` in index `name`. */
  keysBy(name: string, value: IndexValue): Key[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`collection ${this.def.name} has no index ${name}`);
    // Read to the end at once: inside a write, lmdb-js reads a record through the buffer an
    // open cursor is using (seen as garbled keys in later reads). Every caller wants them all.
    return [...index.db.getValues(value)];
  }

  /** Number of records under `value` in index `name`, without reading them. */
  countBy(name: string, value: IndexValue): number {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`collection ${this.def.name} has no index ${name}`);
    return index.db.getValuesCount(value);
  }

  /** Records found under `value` in index `name`. */
  *findBy(name: string, value: IndexValue): Iterable<T> {
    for (const key of this.keysBy(name, value)) {
      const record = this.records.get(key);
      if (record !== undefined) yield record;
    }
  }

  /** The single record under `value` in a (usually unique) index, or undefined. */
  findOne(name: string, value: IndexValue): T | undefined {
    for (const record of this.findBy(name, value)) return record;
    return undefined;
  }

  /** Every record in primary-key order. */
  *scan(): Iterable<T> {
    const range = this.records.getRange();
    for (const { value } of this.inWrite() ? [...range] : range) yield value;
  }

  /** Records from key `start` upward (or downward from it with `reverse`), in key order. */
  *range(start?: Key, reverse = false): Iterable<T> {
    const options = start === undefined ? { reverse } : { start, reverse };
    const range = this.records.getRange(options);
    for (const { value } of this.inWrite() ? [...range] : range) yield value;
  }

  /** Number of records (reads LMDB's own statistics; no scan). */
  count(): number {
    return this.records.getCount();
  }

  /** Inserts or replaces a record and its index entries. Call only inside Store.write. */
  put(record: T): void {
    this.assertInWrite();
    const key = this.def.key(record);
    const previous = this.records.get(key);
    for (const { def, db } of this.indexes.values()) {
      const before = previous === undefined ? [] : valuesOf(def, previous);
      const after = valuesOf(def, record);
      for (const value of before) if (!after.includes(value)) db.removeSync(value, key);
      for (const value of after) {
        if (before.includes(value)) continue;
        // Read to the end before throwing: a cursor left open mid-range inside a write is
        // suspected of garbling later reads of the same transaction batch.
        if (def.unique && [...db.getValues(value)].some((other) => other !== key)) {
          throw new ConflictError(`${this.def.name}: ${def.name} ${JSON.stringify(value)} is already used`);
        }
        db.putSync(value, key);
      }
    }
    this.records.putSync(key, record);
  }

  /** Removes a record and its index entries; returns the removed record. Call only inside Store.write. */
  remove(key: Key): T | undefined {
    this.assertInWrite();
    const previous = this.records.get(key);
    if (previous === undefined) return undefined;
    for (const { def, db } of this.indexes.values()) {
      for (const value of valuesOf(def, previous)) db.removeSync(value, key);
    }
    this.records.removeSync(key);
    return previous;
  }

  private assertInWrite(): void {
    if (!this.inWrite()) throw new Error(`${this.def.name}: writes must run inside Store.write()`);
  }
}

function valuesOf<T>(def: IndexDef<T>, record: T): IndexValue[] {
  const v = def.of(record);
  if (v === undefined) return [];
  return Array.isArray(v) ? [...new Set(v as IndexValue[])] : [v as IndexValue];
}
