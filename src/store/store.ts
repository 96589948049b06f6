/**
 * The one LMDB environment of the box. Every durable fact lives here; every change goes
 * through `write`, which commits atomically and resolves only once the commit is on disk,
 * so an acknowledged change survives `kill -9` and power loss.
 */
import './string-decoding.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Collection, type CollectionDef, type Key, type SharedStructures } from './collection.js';
import { hasRoom, storageFault, type StorageFaultError } from './storage-fault.js';

/** One step of the schema; `up` runs inside a write transaction. */
export interface Migration {
  version: number;
  description: string;
  up(store: Store): void;
}

export interface StoreOptions {
  /** Directory of the environment (created when missing). */
  dir: string;
  /** Largest size the memory map may grow to. */
  mapSize?: number;
  /**
   * Read only, beside a running daemon (the technician's commands): no migration runs, and a
   * store of another schema version than this build's is refused rather than misread.
   */
  readOnly?: boolean;
}

/** A read-only open found a store of another schema version than this build's. */
export class StoreVersionError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the store is at schema version ${found}, this build reads version ${known}: ${found < known ? 'start the daemon of this version once to migrate it' : 'use the version that wrote it'}`);
    this.name = 'StoreVersionError';
  }
}

/**
 * What one committed write changed: the keys it put or removed, by collection name. Threads
 * that share the environment pass these to each other (`heard`), so each hears every commit.
 */
export type CommitNotice = Record<string, Key[]>;

/** `local`: committed by this Store; `remote`: by another thread on the same environment, told through `heard`. */
export type CommitListener = (notice: CommitNotice, origin: 'local' | 'remote') => void;

/** The store was written by a newer build (a downgrade): this one must not touch it. */
export class StoreTooNewError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the store has schema version ${found}, newer than this build knows (${known}); install a newer build or restore a backup`);
    this.name = 'StoreTooNewError';
  }
}

/** A write waiting for its commit; `resolve` and `reject` are absent for a nested write. */
interface QueuedWrite {
  fn: () => unknown;
  resolve: ((value: unknown) => void) | undefined;
  reject: ((reason: unknown) => void) | undefined;
}

/** What one write of a batch left: its callbacks for after the commit, the keys it changed, its result. */
interface WriteRun {
  after: (() => void)[];
  changed: Map<string, Set<Key>>;
  result: unknown;
}

/** The meta database's key of the shared msgpackr structures of collection `name`'s records. */
export const structuresKey = (name: string): string => `structures:${name}`;

/** Schema version of this build; a store written by a newer build is refused. */
const META_SCHEMA_VERSION = 'schema_version';

export class Store {
  private readonly root: RootDatabase;
  private readonly meta: Database<unknown, string>;
  private readonly collections = new Map<string, Collection<unknown>>();
  private writing = 0;
  /** Writes asked for in this event-loop turn, committed together at its end. */
  private queued: QueuedWrite[] = [];
  /** Settles once the writes queued so far are committed (or refused). */
  private idle: Promise<void> = Promise.resolve();
  /** Callbacks of the transaction being written, run once it is durable. */
  private committed: (() => void)[] = [];
  /** Keys the transaction being written changed, by collection. */
  private changed = new Map<string, Set<Key>>();
  private readonly commitListeners = new Set<CommitListener>();
  private readonly dir: string;
  /** The last write's disk fault, until a write succeeds again. */
  private fault: StorageFaultError | undefined;
  private readonly faultListeners = new Set<(fault: StorageFaultError | undefined) => void>();
  private readonly holdListeners = new Set<(ms: number, writes: number) => void>();
  /** A shared structure was stored in the transaction being written (its rollback must make every collection read them again). */
  private structuresSaved = false;

  private constructor(options: StoreOptions) {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    this.dir = options.dir;
    // The same options on every open: lmdb-js requires it. No noSync, no useWritemap:
    // durability matters more than write throughput on this box.
    this.root = open({
      path: path.join(options.dir, 'warehouse.mdb'),
      maxDbs: 128,
      mapSize: options.mapSize ?? 64 * 1024 ** 3,
      compression: false,
      eventTurnBatching: true,
      readOnly: options.readOnly ?? false,
    });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
  }

  /** Opens (or creates) the store, registers the collections and runs pending migrations. */
  static async open(options: StoreOptions, defs: readonly CollectionDef<never>[] = [], migrations: readonly Migration[] = []): Promise<Store> {
    const store = new Store(options);
    for (const def of defs) store.collection(def as CollectionDef<unknown>);
    if (options.readOnly) {
      const latest = Math.max(0, ...migrations.map((m) => m.version));
      if (store.schemaVersion() !== latest) {
        const found = store.schemaVersion();
        await store.root.close();
        throw new StoreVersionError(found, latest);
      }
      return store;
    }
    await store.migrate(migrations);
    return store;
  }

  /** The collection of this definition (opened on first use). */
  collection<T>(def: CollectionDef<T>): Collection<T> {
    let c = this.collections.get(def.name);
    if (!c) {
      const name = def.name;
      c = new Collection<unknown>(this.root, def as CollectionDef<unknown>, () => this.writing > 0, (key) => {
        let keys = this.changed.get(name);
        if (!keys) this.changed.set(name, (keys = new Set()));
        keys.add(key);
      }, this.sharedStructures(name));
      this.collections.set(def.name, c);
    }
    return c as Collection<T>;
  }

  /**
   * Where the records of collection `name` keep their shared msgpackr structures: in the meta
   * database, not among the records, which scans, counts and indexes read. Decoding a record
   * with shared structures costs a sixth of decoding one that carries its field names
   * (docs/benchmarks.md, "Seventh round"). A structure is stored in the transaction of the
   * first record that uses it, so any reader that sees the record sees it too.
   */
  private sharedStructures(name: string): SharedStructures {
    const key = structuresKey(name);
    return {
      getStructures: () => this.meta.get(key),
      saveStructures: (structures, isCompatible) => {
        if (this.writing === 0) throw new Error(`${name}: records are encoded only inside Store.write()`);
        if (!isCompatible(this.meta.get(key))) return false;
        this.meta.putSync(key, structures);
        this.structuresSaved = true;
        return true;
      },
    };
  }

  /**
   * Runs `fn` in a write transaction and resolves once it is durable. If `fn` throws, nothing
   * it wrote is kept and the error is rethrown.
   *
   * Writes asked for in one event-loop turn commit together (one fsync for all of them): a
   * synchronous commit blocks the event loop for its fsync, so under load, committing each
   * write alone left every other request waiting on the disk once per write. `fn` runs at the
   * end of the turn, not during this call.
   */
  write<R>(fn: () => R): Promise<R> {
    // Inside another write (a service that writes calling one that writes): part of that
    // transaction, as a child that a throw rolls back alone, as before batching.
    if (this.writing > 0) return this.commit([{ fn, resolve: undefined, reject: undefined }]) as Promise<R>;
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) this.idle = new Promise<void>((done) => setImmediate(() => {
        const batch = this.queued;
        this.queued = [];
        void this.commit(batch).finally(done);
      }));
    });
  }

  /**
   * Commits `batch` in one transaction. When one of its writes throws, the transaction is
   * aborted and each write is tried again alone, so only the one that threw is refused.
   * Writes without `resolve` (nested) return their result; the others settle their promise.
   */
  private async commit(batch: readonly QueuedWrite[]): Promise<unknown> {
    const runs: WriteRun[] = [];
    let threw: { error: unknown } | undefined;
    const began = performance.now();
    let held = 0;
    if (this.writing === 0) this.structuresSaved = false;
    try {
      this.root.transactionSync(() => {
        for (const write of batch) {
          const run: WriteRun = { after: [], changed: new Map(), result: undefined };
          const outer = this.committed;
          const outerChanged = this.changed;
          this.committed = run.after;
          this.changed = run.changed;
          this.writing++;
          try {
            run.result = write.fn();
          } catch (error) {
            threw = { error };
            throw error;
          } finally {
            this.writing--;
            this.committed = outer;
            this.changed = outerChanged;
          }
          runs.push(run);
        }
      });
      // The writes, the commit and its fsync, all on the event loop: what every other request waited.
      held = performance.now() - began;
      await this.root.flushed;
    } catch (err) {
      // A child's rollback keeps the flag: what the outer transaction stored may still be rolled back.
      if (this.structuresSaved) for (const c of this.collections.values()) c.forgetStructures();
      if (threw && batch.length > 1) {
        // Each alone, in the order asked: their transactions begin before this returns.
        await Promise.all(batch.map((write) => this.commit([write])));
        return undefined;
      }
      // A throw of `fn` is its caller's; a disk that refuses the commit is a StorageFaultError, not a bug.
      const fault = threw ? undefined : storageFault(err, this.dir);
      if (fault) this.setFault(fault);
      const error = threw ? threw.error : fault ?? err;
      const nested = batch.find((write) => !write.reject);
      for (const write of batch) write.reject?.(error);
      if (nested) throw error;
      return undefined;
    }
    if (this.fault && (!this.fault.full || hasRoom(this.dir))) this.setFault(undefined);
    // Heard once the commit stands, so a failing listener cannot make it look refused; a
    // nested write's time is its outer commit's.
    if (this.writing === 0) {
      for (const listener of this.holdListeners) {
        try {
          listener(held, batch.length);
        } catch (err) {
          process.emitWarning(`commit-held listener failed: ${(err as Error).stack ?? String(err)}`);
        }
      }
    }
    const changed = new Map<string, Set<Key>>();
    for (const run of runs) {
      for (const [name, keys] of run.changed) {
        const all = changed.get(name);
        if (all) for (const key of keys) all.add(key);
        else changed.set(name, keys);
      }
    }
    if (changed.size > 0) this.announce(Object.fromEntries([...changed].map(([name, keys]) => [name, [...keys]])), 'local');
    for (const run of runs) {
      for (const callback of run.after) {
        try {
          callback();
        } catch (err) {
          // The change is committed: a failing listener must not make it look refused.
          process.emitWarning(`afterCommit callback failed: ${(err as Error).stack ?? String(err)}`);
        }
      }
    }
    batch.forEach((write, i) => write.resolve?.(runs[i]!.result));
    return batch.length === 1 ? runs[0]!.result : undefined;
  }

  /**
   * Runs `callback` once the current write is durable (live notifications that must never
   * announce what a crash could still take back); dropped if the write is rolled back.
   * Call only inside `write`.
   */
  afterCommit(callback: () => void): void {
    if (this.writing === 0) throw new Error('afterCommit must run inside Store.write()');
    this.committed.push(callback);
  }

  /** The disk fault that refused the last write, until one succeeds again. */
  storageFault(): StorageFaultError | undefined {
    return this.fault;
  }

  /** Hears when writes start failing for the disk (a fault) and when one succeeds again (undefined). */
  onStorageFault(listener: (fault: StorageFaultError | undefined) => void): () => void {
    this.faultListeners.add(listener);
    return () => this.faultListeners.delete(listener);
  }

  /** Hears how long each commit held the event loop (its writes, the commit, the disk's fsync), in ms, and how many writes it carried. */
  onCommitHeld(listener: (ms: number, writes: number) => void): () => void {
    this.holdListeners.add(listener);
    return () => this.holdListeners.delete(listener);
  }

  /** Tries a tiny write (after space was freed): clears the fault if the disk takes it. */
  async probeWrite(): Promise<boolean> {
    try {
      await this.write(() => this.meta.putSync('probe', Date.now()));
      return true;
    } catch {
      return false;
    }
  }

  private setFault(fault: StorageFaultError | undefined): void {
    const changed = (fault === undefined) !== (this.fault === undefined) || (fault && this.fault && fault.full !== this.fault.full);
    this.fault = fault;
    if (!changed) return;
    for (const listener of this.faultListeners) {
      try {
        listener(fault);
      } catch (err) {
        process.emitWarning(`storage fault listener failed: ${(err as Error).stack ?? String(err)}`);
      }
    }
  }

  /** Hears what every write changed once it is durable, this store's and (through `heard`) other threads'. */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Another thread committed `notice` on this environment: its listeners here hear it as `remote`. */
  heard(notice: CommitNotice): void {
    // This thread's read snapshot may predate that commit until the next event turn: listeners
    // read the changed keys now, so they must see it.
    this.root.resetReadTxn();
    this.announce(notice, 'remote');
  }

  private announce(notice: CommitNotice, origin: 'local' | 'remote'): void {
    for (const listener of this.commitListeners) {
      try {
        listener(notice, origin);
      } catch (err) {
        process.emitWarning(`commit listener failed: ${(err as Error).stack ?? String(err)}`);
      }
    }
  }

  /** The next value of a named integer sequence (1, 2, ...). Call only inside `write`. */
  nextId(sequence: string): number {
    if (this.writing === 0) throw new Error('nextId must run inside Store.write()');
    const key = `seq:${sequence}`;
    const next = ((this.meta.get(key) as number | undefined) ?? 0) + 1;
    this.meta.putSync(key, next);
    return next;
  }

  /** Makes the next value of a sequence larger than `value` (after importing ids). Call only inside `write`. */
  raiseSequence(sequence: string, value: number): void {
    if (this.writing === 0) throw new Error('raiseSequence must run inside Store.write()');
    if (this.sequence(sequence) < value) this.meta.putSync(`seq:${sequence}`, value);
  }

  /** The current value of a named sequence (0 before its first use). */
  sequence(sequence: string): number {
    return (this.meta.get(`seq:${sequence}`) as number | undefined) ?? 0;
  }

  /** The schema version stored in the environment (0 for a new one). */
  schemaVersion(): number {
    return (this.meta.get(META_SCHEMA_VERSION) as number | undefined) ?? 0;
  }

  /** The registered collections. */
  registered(): Collection<unknown>[] {
    return [...this.collections.values()];
  }

  /** Deletes a database of an earlier layout, whatever its flags were. Call only inside `write`. */
  dropDatabase(name: string, options: { dupSort?: boolean } = {}): void {
    if (this.writing === 0) throw new Error('dropDatabase must run inside Store.write()');
    this.root.openDB({ name, ...options }).dropSync();
  }

  /** Record counts of the registered collections, by name. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, c] of this.collections) out[name] = c.count();
    return out;
  }

  /** A consistent copy of the environment, free pages left out (a hot backup; readers and writers go on). */
  async backup(file: string): Promise<void> {
    await this.root.backup(file, true);
  }

  /** Forgets the read snapshot: the next read sees what other processes committed since. */
  refresh(): void {
    this.root.resetReadTxn();
  }

  /** Environment statistics for diagnostics. */
  stats(): { entries: number; pageSize: number; mapSize: number; lastPage: number } {
    const s = this.root.getStats() as { entryCount: number; pageSize: number; mapSize: number; lastPageNumber: number };
    return { entries: s.entryCount, pageSize: s.pageSize, mapSize: s.mapSize, lastPage: s.lastPageNumber };
  }

  /** Closes the environment after pending writes are flushed. */
  async close(): Promise<void> {
    await this.idle;
    await this.root.flushed;
    await this.root.close();
  }

  private async migrate(migrations: readonly Migration[]): Promise<void> {
    const sorted = [...migrations].sort((a, b) => a.version - b.version);
    const latest = sorted.at(-1)?.version ?? 0;
    const current = this.schemaVersion();
    if (current > latest) throw new StoreTooNewError(current, latest);
    const pending = sorted.filter((m) => m.version > current);
    if (pending.length === 0) return;
    // All pending steps in one transaction: a crash mid-way leaves the old version intact.
    await this.write(() => {
      for (const m of pending) m.up(this);
      this.meta.putSync(META_SCHEMA_VERSION, latest);
    });
  }
}
