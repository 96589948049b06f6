/**
 * The one LMDB environment of the box. Every durable fact lives here; every change goes
 * through `write`, which commits atomically and resolves only once the commit is on disk,
 * so an acknowledged change survives `kill -9` and power loss.
 */
import './string-decoding.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Collection, pagesOf, type CollectionDef, type Key } from './collection.js';
import { BATCH_BUDGET_MS, commitsOffLoop, ON_LOOP, paceAfterLoopCommit, type CommitPace } from './commit-pace.js';
import { CommitNotices, type CommitListener, type CommitNotice } from './commit-notices.js';
import { Listeners } from './listeners.js';
import { StructureKeeper } from './shared-structures.js';
import { FaultState, type StorageFaultError } from './storage-fault.js';

export type { CommitListener, CommitNotice } from './commit-notices.js';
export { structuresKey } from './shared-structures.js';

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

/** The store was written by a newer build (a downgrade): this one must not touch it. */
export class StoreTooNewError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the store has schema version ${found}, newer than this build knows (${known}); install a newer build or restore a backup`);
    this.name = 'StoreTooNewError';
  }
}

/** Pages of the store file by use (`Store.pageUse`). */
export interface PageUse {
  pageSize: number;
  lastPage: number;
  usedPages: number;
  freePages: number;
}

/** A write waiting for its commit. */
interface QueuedWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * One write of a batch, as it runs: its callbacks for after the commit, the keys it changed,
 * how to reverse each change (newest last), the promises of writes nested in it, and its
 * result or what it threw.
 */
interface WriteRun {
  after: (() => void)[];
  changed: Map<string, Set<Key>>;
  undo: (() => void)[];
  nested: { resolve: () => void; reject: (reason: unknown) => void }[];
  result: unknown;
  error: { thrown: unknown } | undefined;
}

/**
 * What a commit cost: ms its writes ran (on the event loop), ms from their end until the commit
 * was durable (LMDB's lock, its commit and the disk's fsync), whether that part held the event
 * loop too (`commit-pace.ts`), and how many writes it carried.
 */
export interface CommitTiming {
  writesMs: number;
  diskMs: number;
  onLoop: boolean;
  writes: number;
}

/** A write about to run: nothing changed, noted or nested yet. */
function newRun(): WriteRun {
  return { after: [], changed: new Map(), undo: [], nested: [], result: undefined, error: undefined };
}

/** Reverses a run's changes back to the first `mark` of them, newest first. */
function undoTo(run: WriteRun, mark: number): void {
  for (let i = run.undo.length - 1; i >= mark; i--) run.undo[i]!();
  run.undo.length = mark;
}

/** The error a refused commit stands for: lmdb-js may reject with a wrapper whose `commitError` promise holds the cause. */
async function commitCause(err: unknown): Promise<unknown> {
  const inner = (err as { commitError?: Promise<unknown> } | undefined)?.commitError;
  if (!(inner instanceof Promise)) return err;
  try {
    await inner;
    return err;
  } catch (cause) {
    return cause;
  }
}

/** Schema version of this build; a store written by a newer build is refused. */
const META_SCHEMA_VERSION = 'schema_version';

export class Store {
  private readonly root: RootDatabase;
  private readonly meta: Database<unknown, string>;
  private readonly collections = new Map<string, Collection<unknown>>();
  /** The write running now (inside a transaction), if any. */
  private run: WriteRun | undefined;
  /** Writes for the next batch, at the end of this turn: any a batch left past its budget, then those asked since. */
  private queued: QueuedWrite[] = [];
  /** Settles once the writes of the batch booked last are committed (or refused). */
  private idle: Promise<void> = Promise.resolve();
  /** A batch is booked for the end of this turn. */
  private batchBooked = false;
  private readonly notices: CommitNotices;
  private readonly faults: FaultState;
  private readonly holdListeners = new Listeners<CommitTiming>('commit listener');
  private readonly structures: StructureKeeper;
  /** Whether batches commit on the event loop or on lmdb-js's write thread (`commit-pace.ts`). */
  private pace: CommitPace = ON_LOOP;
  /** Batches committing on lmdb-js's write thread now. */
  private offLoopInFlight = 0;

  private constructor(options: StoreOptions) {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    this.faults = new FaultState(options.dir);
    // The same options on every open: lmdb-js requires it. No noSync, no useWritemap:
    // durability matters more than write throughput on this box.
    this.root = open({
      path: path.join(options.dir, 'warehouse.mdb'),
      maxDbs: 128,
      mapSize: options.mapSize ?? 64 * 1024 ** 3,
      compression: false,
      // Each batch of writes is one explicit transaction (`commit`), asynchronous while the
      // disk stalls: no batch of the event turn besides, whose commit promise nobody would
      // await (an unhandled rejection when the disk refuses it).
      eventTurnBatching: false,
      readOnly: options.readOnly ?? false,
    });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
    this.notices = new CommitNotices(this.root);
    this.structures = new StructureKeeper(this.meta, this.collections, () => this.run !== undefined);
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
      c = new Collection<unknown>(this.root, def as CollectionDef<unknown>, () => this.run !== undefined, (key, undo) => {
        const run = this.run!;
        let keys = run.changed.get(name);
        if (!keys) run.changed.set(name, (keys = new Set()));
        keys.add(key);
        run.undo.push(undo);
      }, this.structures.of(name));
      this.collections.set(def.name, c);
    }
    return c as Collection<T>;
  }

  /**
   * Runs `fn` in a write transaction and resolves once it is durable. If `fn` throws, nothing
   * it wrote is kept and the error is rethrown.
   *
   * Writes asked for in one event-loop turn commit together at its end (one fsync for all of
   * them): `fn` runs on this thread then, not during this call. The commit runs on the event
   * loop while the disk keeps up, and on lmdb-js's write thread for a while after it did not
   * (`commit-pace.ts`). On the loop, a batch whose writes have run `BATCH_BUDGET_MS` commits
   * those, and the rest go first into the next turn's batch: writes still commit in the order
   * they were asked.
   */
  write<R>(fn: () => R): Promise<R> {
    if (this.run) return this.nestedWrite(this.run, fn);
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.bookBatch();
    });
  }

  /** Commits the queued writes as one batch at the end of this event-loop turn. */
  private bookBatch(): void {
    if (this.batchBooked) return;
    this.batchBooked = true;
    this.idle = new Promise<void>((done) => setImmediate(() => {
      this.batchBooked = false;
      const batch = this.queued;
      this.queued = [];
      void this.commit(batch).finally(done);
    }));
  }

  /**
   * A write called inside another's (a service that writes calling one that writes): it runs
   * at once in that transaction, a throw undoes only its own changes, and its promise settles
   * with the outer write's commit.
   */
  private nestedWrite<R>(run: WriteRun, fn: () => R): Promise<R> {
    const undoMark = run.undo.length;
    const afterMark = run.after.length;
    let result: R;
    try {
      result = fn();
    } catch (error) {
      undoTo(run, undoMark);
      run.after.length = afterMark;
      return Promise.reject(error);
    }
    return new Promise<R>((resolve, reject) => run.nested.push({ resolve: () => resolve(result), reject }));
  }

  /**
   * Commits `batch` in one transaction, on the loop or on lmdb-js's write thread as the pace
   * says, and settles each write's promise once the commit is durable. A write that throws is
   * undone alone (its changes reversed in the transaction, from the undo list its collections
   * kept) and refused; the others stand. No child transactions: inside those, reads came back
   * garbled after some `kill -9` restarts (docs/decisions.md, "Store").
   */
  private async commit(batch: readonly QueuedWrite[]): Promise<void> {
    const runs: WriteRun[] = [];
    let writesMs = 0;
    let written = 0;
    let savedStructures = false;
    const offLoop = commitsOffLoop(this.pace, performance.now(), this.offLoopInFlight);
    const runBatch = () => {
      const began = performance.now();
      this.structures.batchBegins();
      for (const write of batch) {
        runs.push(this.runWrite(write.fn));
        if (!offLoop && performance.now() - began > BATCH_BUDGET_MS) break;
      }
      savedStructures = this.structures.batchWritten();
      written = performance.now();
      writesMs = written - began;
    };
    try {
      if (offLoop) {
        this.offLoopInFlight++;
        try {
          await this.root.transactionAsync(runBatch);
        } finally {
          this.offLoopInFlight--;
        }
      } else {
        const began = performance.now();
        try {
          this.root.transactionSync(runBatch);
        } finally {
          // Past its budget the batch stopped early: the writes it left go first in the next one.
          if (runs.length > 0 && runs.length < batch.length) {
            this.queued.unshift(...batch.slice(runs.length));
            batch = batch.slice(0, runs.length);
            this.bookBatch();
          }
        }
        const now = performance.now();
        // What the loop waited beyond the writes: LMDB's lock (the brain's commits), the commit, the fsync.
        this.pace = paceAfterLoopCommit(this.pace, now - began - writesMs, now);
      }
      await this.root.flushed;
    } catch (err) {
      // The disk refused the commit: nothing of the batch is kept.
      if (savedStructures) this.structures.forget();
      const error = this.faults.refused(await commitCause(err));
      batch.forEach((write, i) => {
        for (const nested of runs[i]?.nested ?? []) nested.reject(error);
        write.reject(error);
      });
      return;
    }
    this.faults.stood();
    // Heard once the commit stands, so a failing listener cannot make it look refused.
    if (this.holdListeners.listening()) this.holdListeners.tell({ writesMs, diskMs: performance.now() - written, onLoop: !offLoop, writes: batch.length });
    const kept = runs.filter((run) => run.error === undefined);
    this.notices.committed(kept);
    for (const run of kept) {
      for (const callback of run.after) {
        try {
          callback();
        } catch (err) {
          // The change is committed: a failing listener must not make it look refused.
          process.emitWarning(`afterCommit callback failed: ${(err as Error).stack ?? String(err)}`);
        }
      }
    }
    batch.forEach((write, i) => {
      const run = runs[i]!;
      if (run.error) {
        write.reject(run.error.thrown);
      } else {
        for (const nested of run.nested) nested.resolve();
        write.resolve(run.result);
      }
    });
  }

  /** Runs one write's function inside the transaction; a throw undoes what it changed. */
  private runWrite(fn: () => unknown): WriteRun {
    const run = newRun();
    this.run = run;
    try {
      run.result = fn();
    } catch (thrown) {
      run.error = { thrown };
      try {
        undoTo(run, 0);
      } catch (err) {
        // Only a store that refuses every write (its transaction already failed, so the commit
        // fails too and keeps nothing) or an index function that throws gets here.
        process.emitWarning(`a refused write could not be undone: ${(err as Error).stack ?? String(err)}`);
      }
      for (const nested of run.nested) nested.reject(thrown);
    } finally {
      this.run = undefined;
    }
    return run;
  }

  /**
   * Runs `fn` in one synchronous transaction that a throw aborts whole (LMDB's own rollback):
   * for the migrations at open, whose index rebuilds and dropped databases no undo list could
   * reverse. Blocks the event loop for its commit; nothing else runs yet at open.
   */
  private async writeAtOpen(fn: () => void): Promise<void> {
    const run = newRun();
    try {
      this.root.transactionSync(() => {
        this.run = run;
        try {
          fn();
        } finally {
          this.run = undefined;
        }
      });
    } catch (err) {
      this.structures.forget();
      for (const nested of run.nested) nested.reject(err);
      throw err;
    }
    await this.root.flushed;
    for (const nested of run.nested) nested.resolve();
  }

  /**
   * Runs `callback` once the current write is durable (live notifications that must never
   * announce what a crash could still take back); dropped if the write is rolled back.
   * Call only inside `write`.
   */
  afterCommit(callback: () => void): void {
    if (!this.run) throw new Error('afterCommit must run inside Store.write()');
    this.run.after.push(callback);
  }

  /** The disk fault that refused the last write, until one succeeds again. */
  storageFault(): StorageFaultError | undefined {
    return this.faults.current();
  }

  /** Hears when writes start failing for the disk (a fault) and when one succeeds again (undefined). */
  onStorageFault(listener: (fault: StorageFaultError | undefined) => void): () => void {
    return this.faults.onChange(listener);
  }

  /** Hears what each commit cost once it is durable (`CommitTiming`). */
  onCommitHeld(listener: (timing: CommitTiming) => void): () => void {
    return this.holdListeners.add(listener);
  }

  /** Tries a tiny write (after space was freed): clears the fault if the disk takes it. */
  async probeWrite(): Promise<boolean> {
    try {
      await this.write(() => this.putMeta('probe', Date.now()));
      return true;
    } catch {
      return false;
    }
  }

  /** Hears what every write changed once it is durable, this store's and (through `heard`) other threads'. */
  onCommit(listener: CommitListener): () => void {
    return this.notices.on(listener);
  }

  /** Another thread committed `notice` on this environment: its listeners here hear it as `remote`. */
  heard(notice: CommitNotice): void {
    this.notices.heard(notice);
  }

  /** The next value of a named integer sequence (1, 2, ...). Call only inside `write`. */
  nextId(sequence: string): number {
    if (!this.run) throw new Error('nextId must run inside Store.write()');
    const key = `seq:${sequence}`;
    const next = ((this.meta.get(key) as number | undefined) ?? 0) + 1;
    this.putMeta(key, next);
    return next;
  }

  /** Makes the next value of a sequence larger than `value` (after importing ids). Call only inside `write`. */
  raiseSequence(sequence: string, value: number): void {
    if (!this.run) throw new Error('raiseSequence must run inside Store.write()');
    if (this.sequence(sequence) < value) this.putMeta(`seq:${sequence}`, value);
  }

  /** Sets a value of the meta database inside the current write, undone with it. */
  private putMeta(key: string, value: unknown): void {
    const previous = this.meta.get(key);
    this.meta.putSync(key, value);
    this.run!.undo.push(() => (previous === undefined ? this.meta.removeSync(key) : this.meta.putSync(key, previous)));
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
    if (!this.run) throw new Error('dropDatabase must run inside a migration');
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

  /**
   * How the store file's pages are used: `lastPage` is its high-water mark (the file never
   * shrinks), `usedPages` what the trees hold now, `freePages` the rest, which LMDB hands to
   * later writes before it grows the file. Databases of earlier layouts that a migration left
   * are counted as free, as are the free list's own few pages.
   */
  pageUse(): PageUse {
    const s = this.root.getStats() as { pageSize: number; lastPageNumber: number };
    // The main tree holds the named databases' roots; two meta pages head the file.
    let used = 2 + pagesOf(this.root) + pagesOf(this.meta);
    for (const c of this.collections.values()) used += c.pages();
    const pages = s.lastPageNumber + 1;
    return { pageSize: s.pageSize, lastPage: s.lastPageNumber, usedPages: Math.min(used, pages), freePages: Math.max(0, pages - used) };
  }

  /** Closes the environment after pending writes are flushed. */
  async close(): Promise<void> {
    // A batch past its budget books another for the writes it left.
    for (let idle = this.idle; ; idle = this.idle) {
      await idle;
      if (idle === this.idle) break;
    }
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
    await this.writeAtOpen(() => {
      for (const c of this.collections.values()) c.deferRebuilds(true);
      for (const m of pending) m.up(this);
      for (const c of this.collections.values()) c.deferRebuilds(false);
      this.meta.putSync(META_SCHEMA_VERSION, latest);
    });
  }
}
