/**
 * A typed collection: one LMDB sub-database of records by primary key, plus one sub-database
 * per secondary index whose keys are `[index value, primary key]` pairs. Index entries are
 * written in the same transaction as the record, so they can never disagree with it.
 *
 * Indexes are plain key ranges, not dupSort databases: lmdb-js's dupSort reads were seen to
 * return garbled values after some restarts (ordered-binary failing on them, the same on
 * every retry), and a range of composite keys needs none of that code.
 */
import type { Database, RootDatabase } from 'lmdb';

/** A put would give a unique index a second record with the same value; nothing was written. */
export class UniqueIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UniqueIndexError';
  }
}

export type Key = string | number;
export type IndexValue = string | number | boolean;

/** Upper bound of the primary keys under one index value (ordered-binary sorts it after every key used). */
const LAST_KEY = '\uffff';
/** Index entries `keysWithin` reads at a time. */
const KEYS_CHUNK = 32;
/** What an index entry stores: the key says everything. */
const PRESENT = 1;

/** Name of the database of index `index` of collection `collection`. */
export const indexDbName = (collection: string, index: string): string => `${collection}#${index}`;

/** A secondary index; `of` returns the value(s) a record is found under, or undefined for none. */
export interface IndexDef<T> {
  name: string;
  of(record: T): IndexValue | readonly IndexValue[] | undefined;
  /** At most one record per index value; a second one is refused with a UniqueIndexError. */
  unique?: boolean;
}

/**
 * msgpackr's hooks for structures shared by a database's records (each record then names its
 * field list by a number instead of carrying the names): `getStructures` reads the stored
 * lists, `saveStructures` stores a longer one inside the current write, or answers false
 * when another writer stored one meanwhile (msgpackr then merges and encodes again).
 */
export interface SharedStructures {
  getStructures(): unknown;
  saveStructures(structures: unknown[], isCompatible: (existing: unknown) => boolean): boolean;
}

/** What a collection's `changed` hook may write besides its own records: the store's other collections, inside the same write. */
export interface DerivedWrites {
  collection<U>(def: CollectionDef<U>): Collection<U>;
}

/** The definition of a collection: its name, primary key and indexes. */
export interface CollectionDef<T> {
  name: string;
  key(record: T): Key;
  indexes?: readonly IndexDef<T>[];
  /**
   * Runs inside the write after each put or remove, with the record before and after
   * (undefined: none), so records derived from this one are kept in the same transaction as
   * the change that moves them. What it writes through `store` is undone with the write; a
   * throw refuses the write. Not run by the undo itself, nor by index rebuilds.
   */
  changed?(before: T | undefined, after: T | undefined, store: DerivedWrites): void;
}

/** Records of one kind. Reads are synchronous; writes must run inside `Store.write`. */
export class Collection<T> {
  private readonly records: Database<T, Key>;
  private readonly indexes = new Map<string, { def: IndexDef<T>; db: Database<number, [IndexValue, Key]> }>();
  private rebuildsDeferred = false;
  /** A rebuild asked for while deferred: done before the indexes are next used. */
  private rebuildPending = false;

  constructor(
    root: RootDatabase,
    readonly def: CollectionDef<T>,
    private readonly inWrite: () => boolean,
    /**
     * Notes a key the current write changed (the store announces it once the write is
     * durable) and how to reverse the change (the store undoes a write that throws).
     */
    private readonly touched: (key: Key, undo: () => void) => void = () => undefined,
    /** Where msgpackr keeps the field-name lists its records share (`SharedStructures`); none: each record carries its own. */
    structures?: SharedStructures,
    /** The collections a `changed` hook writes to; none: the hook is not run. */
    private readonly derived?: DerivedWrites,
  ) {
    this.records = root.openDB<T, Key>({ name: def.name, ...structures });
    for (const index of def.indexes ?? []) {
      const db = root.openDB<number, [IndexValue, Key]>({ name: indexDbName(def.name, index.name), encoding: 'ordered-binary' });
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

  /**
   * Drops the shared structures this thread holds in memory, so they are read again from the
   * store before the next record is encoded or an unknown one decoded. After a write that was
   * rolled back: a structure it added lives on in memory though it was never stored, and a
   * record encoded with it later would be unreadable (or, once another writer stores a
   * different structure under that number, misread).
   */
  forgetStructures(): void {
    const { encoder } = this.records as unknown as { encoder?: { structures?: unknown[] } };
    if (encoder?.structures) encoder.structures = Object.assign([], { uninitialized: true, sharedLength: 0 });
  }

  /** Primary keys of the records found under `value` in index `name`. */
  keysBy(name: string, value: IndexValue): Key[] {
    const out: Key[] = [];
    // Read to the end at once: no cursor stays open across other reads of a write.
    for (const [v, key] of this.index(name).getKeys(rangeOf(value))) if (v === value) out.push(key);
    return out;
  }

  /**
   * Primary keys of the entries whose value in index `name` lies within `bounds`, in index
   * order, read a chunk at a time as the caller takes them: one that stops early reads only a
   * few past what it took. No cursor stays open between chunks, so other reads and writes may
   * come between.
   */
  *keysWithin(name: string, bounds: ValueBounds): Iterable<Key> {
    const index = this.index(name);
    const range = boundedRange(bounds, false);
    let after: [IndexValue, Key] | undefined;
    for (;;) {
      const entries = [...index.getKeys({ ...range, ...(after && { start: after }), limit: KEYS_CHUNK + (after ? 1 : 0) })];
      // The chunk starts at the entry the last one ended with (taken already), unless it went meanwhile.
      const fresh = after && entries.length > 0 && entries[0]![0] === after[0] && entries[0]![1] === after[1] ? entries.slice(1) : entries;
      for (const [, key] of fresh) yield key;
      if (entries.length < KEYS_CHUNK + (after ? 1 : 0)) return;
      after = entries.at(-1);
    }
  }

  /** Number of records whose value in index `name` lies within `bounds`, without reading them. */
  countWithin(name: string, bounds: ValueBounds): number {
    return this.index(name).getKeysCount(boundedRange(bounds, false));
  }

  /** Number of records under `value` in index `name`, without reading them. */
  countBy(name: string, value: IndexValue): number {
    return this.index(name).getKeysCount(rangeOf(value));
  }

  /** Records found under `value` in index `name`. */
  *findBy(name: string, value: IndexValue): Iterable<T> {
    for (const key of this.keysBy(name, value)) {
      const record = this.records.get(key);
      if (record !== undefined) yield record;
    }
  }

  /**
   * Every record in the order of index `name`'s values, as runs of records under one value,
   * each run in key order; `descending` walks the values from the last (the runs keep key
   * order). With `bounds`, only the values from `low` to `high` (both included; either may be
   * absent). Lazy: a reader that stops early reads only the records it took.
   */
  *runsBy(name: string, descending: boolean, bounds: ValueBounds = {}): Iterable<T[]> {
    const range = this.index(name).getKeys({ ...boundedRange(bounds, descending), reverse: descending });
    let value: IndexValue | undefined;
    let keys: Key[] = [];
    const run = (): T[] => {
      if (descending) keys.reverse();
      const records: T[] = [];
      for (const key of keys) {
        const record = this.records.get(key);
        if (record !== undefined) records.push(record);
      }
      keys = [];
      return records;
    };
    for (const [v, key] of this.inWrite() ? [...range] : range) {
      if (v !== value && keys.length > 0) yield run();
      value = v;
      keys.push(key);
    }
    if (keys.length > 0) yield run();
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

  /** Number of records, from LMDB's own statistics of the database (its entries): no scan. */
  count(): number {
    // Not getCount(): that walks every key (12.7 ms at 300,000 records, against 0.02 for this).
    return (this.records.getStats() as { entryCount: number }).entryCount;
  }

  /** Pages of the store file that this collection's records and indexes hold. */
  pages(): number {
    let n = pagesOf(this.records);
    for (const { db } of this.indexes.values()) n += pagesOf(db);
    return n;
  }

  /** Inserts or replaces a record and its index entries. Call only inside Store.write. */
  put(record: T): void {
    this.assertInWrite();
    const key = this.def.key(record);
    const previous = this.records.get(key);
    // Checked before anything is written: a refused put changes nothing.
    for (const { def } of this.indexes.values()) {
      if (!def.unique) continue;
      const before = previous === undefined ? [] : valuesOf(def, previous);
      for (const value of valuesOf(def, record)) {
        if (before.includes(value)) continue;
        if (this.keysBy(def.name, value).some((other) => other !== key)) {
          throw new UniqueIndexError(`${this.def.name}: ${def.name} ${JSON.stringify(value)} is already used`);
        }
      }
    }
    // The undo first: it also mends a change that throws half-way (moving back undoes what was done).
    this.touched(key, () => this.replace(key, record, previous));
    this.replace(key, previous, record);
    if (this.def.changed && this.derived) this.def.changed(previous, record, this.derived);
  }

  /**
   * Leaves `key` holding `value` (undefined: no record), index entries with it, as the active
   * box's replicated batch says: no uniqueness check and no `changed` hook, since the active
   * box did both and the batch carries what they wrote. Call only inside Store.write.
   */
  replicate(key: Key, value: T | undefined): void {
    this.assertInWrite();
    const previous = this.records.get(key);
    if (previous === undefined && value === undefined) return;
    this.touched(key, () => this.replace(key, value, previous));
    this.replace(key, previous, value);
  }

  /** Removes a record and its index entries; returns the removed record. Call only inside Store.write. */
  remove(key: Key): T | undefined {
    this.assertInWrite();
    const previous = this.records.get(key);
    if (previous === undefined) return undefined;
    this.touched(key, () => this.replace(key, undefined, previous));
    this.replace(key, previous, undefined);
    if (this.def.changed && this.derived) this.def.changed(previous, undefined, this.derived);
    return previous;
  }

  /** Moves the record under `key` from `from` to `to` (undefined: none), index entries with it. */
  private replace(key: Key, from: T | undefined, to: T | undefined): void {
    if (this.rebuildPending) this.writeIndexes();
    for (const { def, db } of this.indexes.values()) {
      const before = from === undefined ? [] : valuesOf(def, from);
      const after = to === undefined ? [] : valuesOf(def, to);
      for (const value of before) if (!after.includes(value)) db.removeSync([value, key]);
      for (const value of after) if (!before.includes(value)) db.putSync([value, key], PRESENT);
    }
    if (to === undefined) this.records.removeSync(key);
    else this.records.putSync(key, to);
  }

  /**
   * Writes every index entry anew from the records (a migration step). Call only inside a
   * write. While the store runs its migrations (`deferRebuilds`) the rebuild waits until they
   * end, or until the collection is next written or its indexes read, so that an upgrade over
   * several steps that each rebuild (6 and 8: requests and jobs) writes the entries once.
   */
  rebuildIndexes(): void {
    this.assertInWrite();
    if (this.rebuildsDeferred) this.rebuildPending = true;
    else this.writeIndexes();
  }

  /** Makes `rebuildIndexes` wait (the migrations at open), or, when turned off, do what waited. */
  deferRebuilds(on: boolean): void {
    this.rebuildsDeferred = on;
    if (!on && this.rebuildPending) this.writeIndexes();
  }

  private writeIndexes(): void {
    this.rebuildPending = false;
    for (const { db } of this.indexes.values()) db.clearSync();
    const records = [...this.records.getRange()];
    for (const { key, value } of records) {
      for (const { def, db } of this.indexes.values()) for (const v of valuesOf(def, value)) db.putSync([v, key], PRESENT);
    }
  }

  private index(name: string): Database<number, [IndexValue, Key]> {
    if (this.rebuildPending) this.writeIndexes();
    const index = this.indexes.get(name);
    if (!index) throw new Error(`collection ${this.def.name} has no index ${name}`);
    return index.db;
  }

  private assertInWrite(): void {
    if (!this.inWrite()) throw new Error(`${this.def.name}: writes must run inside Store.write()`);
  }
}

/**
 * Orders string keys as LMDB does (their UTF-8 bytes). JavaScript compares UTF-16 code units,
 * which differs only where a character beyond U+FFFF (a surrogate pair, 0xD800-0xDFFF) meets
 * one of U+E000-U+FFFF: UTF-8 puts the former after.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
    if (y >= 0xd800) y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** Index values from `low` to `high`, both included; an absent one does not bound. */
export interface ValueBounds {
  low?: IndexValue;
  high?: IndexValue;
}

/** The key range of the entries within `bounds`, given from the end it is walked from. */
function boundedRange({ low, high }: ValueBounds, descending: boolean): { start?: IndexValue[]; end?: IndexValue[] } {
  // [v] sorts before every [v, key], and [v, LAST_KEY] after them; the end is not included.
  const lower = low === undefined ? undefined : [low];
  const upper = high === undefined ? undefined : [high, LAST_KEY];
  return descending ? { ...(upper && { start: upper }), ...(lower && { end: lower }) } : { ...(lower && { start: lower }), ...(upper && { end: upper }) };
}

/** The key range of every entry under one index value. */
function rangeOf(value: IndexValue): { start: [IndexValue]; end: [IndexValue, string] } {
  return { start: [value], end: [value, LAST_KEY] };
}

/** Pages one database's tree holds: its branches, leaves and the overflow pages of large values. */
export function pagesOf(db: { getStats(): unknown }): number {
  const s = db.getStats() as { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
  return s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
}

function valuesOf<T>(def: IndexDef<T>, record: T): IndexValue[] {
  const v = def.of(record);
  if (v === undefined) return [];
  return Array.isArray(v) ? [...new Set(v as IndexValue[])] : [v as IndexValue];
}
