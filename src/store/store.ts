/**
 * The one LMDB environment of the box, and the narrow surface the rest of the code reaches it
 * by. Every durable fact lives here; every change goes through `write`, which commits
 * atomically and resolves only once the commit is on disk, so an acknowledged change survives
 * `kill -9` and power loss. The Store opens the environment and hands each concern to its own
 * module:
 *
 * - `commit-queue.ts`: the writes of a turn batched into one transaction, a throw undone alone;
 * - `commit-notices.ts`: what each commit changed, told to the listeners of this thread;
 * - `storage-fault.ts`: the disk's refusal of a commit, a fault until a commit stands again;
 * - `shared-structures.ts`: the field-name lists the records share, kept in the meta database;
 * - `sequences.ts`: named integer sequences;
 * - `migrate.ts`: the schema version and the run of the migrations at open (the steps: `migrations.ts`);
 * - `store-file.ts`: the file as a whole: its hot copy, statistics and page use;
 * - `replication.ts`: a replicated pair's stamps, outbox and applying of the log.
 */
import './string-decoding.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Collection, type CollectionDef } from './collection.js';
import { CommitNotices, type CommitListener, type CommitNotice } from './commit-notices.js';
import { CommitQueue, type CommitTiming } from './commit-queue.js';
import { migrate, readOnlyRefusal, schemaVersion, type Migration } from './migrate.js';
import { Sequences } from './sequences.js';
import { StructureKeeper } from './shared-structures.js';
import { backup, pageUseOf, statsOf, type PageUse, type StoreStats } from './store-file.js';
import { FaultState, type StorageFaultError } from './storage-fault.js';
import { decodeEntry, LOG_ID_KEY, ReplicationLedger, type LogEntry, type LogPoint, type ReplicationGate } from './replication.js';

export type { CommitListener, CommitNotice } from './commit-notices.js';
export type { CommitTiming } from './commit-queue.js';
export { StoreTooNewError, StoreVersionError, type Migration } from './migrate.js';
export { structuresKey } from './shared-structures.js';
export type { PageUse, StoreStats } from './store-file.js';
export { ReplicaWriteRefused, decodeEntry, encodeEntry, type LogEntry, type LogPoint, type ReplicationGate } from './replication.js';

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

export class Store {
  private readonly root: RootDatabase;
  private readonly meta: Database<unknown, string>;
  private readonly collections = new Map<string, Collection<unknown>>();
  private readonly notices: CommitNotices;
  private readonly faults: FaultState;
  private readonly structures: StructureKeeper;
  private readonly queue: CommitQueue;
  private readonly sequences: Sequences;
  private readonly ledger: ReplicationLedger;

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
      // Each batch of writes is one explicit transaction (`commit-queue.ts`), asynchronous while
      // the disk stalls: no batch of the event turn besides, whose commit promise nobody would
      // await (an unhandled rejection when the disk refuses it).
      eventTurnBatching: false,
      readOnly: options.readOnly ?? false,
    });
    this.meta = this.root.openDB<unknown, string>({ name: 'meta' });
    this.notices = new CommitNotices(this.root);
    this.structures = new StructureKeeper(this.meta, this.collections, () => this.queue.inWrite());
    this.ledger = new ReplicationLedger(this.root, this.meta, this.collections);
    this.queue = new CommitQueue(this.root, this.meta, this.faults, this.notices, this.structures, this.ledger);
    this.sequences = new Sequences(this.meta, this.queue);
  }

  /** Opens (or creates) the store, registers the collections and runs pending migrations. */
  static async open(options: StoreOptions, defs: readonly CollectionDef<never>[] = [], migrations: readonly Migration[] = []): Promise<Store> {
    const store = new Store(options);
    for (const def of defs) store.collection(def as CollectionDef<unknown>);
    if (options.readOnly) {
      const refusal = readOnlyRefusal(store.meta, migrations);
      if (refusal) {
        await store.root.close();
        throw refusal;
      }
      return store;
    }
    await migrate(store, store.meta, store.registered(), (fn) => store.queue.atOpen(fn), migrations);
    return store;
  }

  /** The collection of this definition (opened on first use). */
  collection<T>(def: CollectionDef<T>): Collection<T> {
    let c = this.collections.get(def.name);
    if (!c) {
      const name = def.name;
      c = new Collection<unknown>(this.root, def as CollectionDef<unknown>, () => this.queue.inWrite(), (key, undo) => this.queue.noteChange(name, key, undo), this.structures.of(name), this);
      this.collections.set(def.name, c);
    }
    return c as Collection<T>;
  }

  /** Runs `fn` in this turn's write transaction and resolves once it is durable; if `fn` throws, nothing it wrote is kept. */
  write<R>(fn: () => R): Promise<R> {
    return this.queue.write(fn);
  }

  /** Runs `callback` once the current write is durable; dropped if the write is rolled back. Call only inside `write`. */
  afterCommit(callback: () => void): void {
    this.queue.afterCommit(callback);
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
    return this.queue.onCommitHeld(listener);
  }

  /** Tries a tiny write (after space was freed): clears the fault if the disk takes it. */
  async probeWrite(): Promise<boolean> {
    try {
      await this.write(() => this.queue.putMeta('probe', Date.now()));
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
    return this.sequences.next(sequence);
  }

  /** Makes the next value of a sequence larger than `value` (after importing ids). Call only inside `write`. */
  raiseSequence(sequence: string, value: number): void {
    this.sequences.raise(sequence, value);
  }

  /** The current value of a named sequence (0 before its first use). */
  sequence(sequence: string): number {
    return this.sequences.current(sequence);
  }

  /** The schema version stored in the environment (0 for a new one). */
  schemaVersion(): number {
    return schemaVersion(this.meta);
  }

  /** The registered collections. */
  registered(): Collection<unknown>[] {
    return [...this.collections.values()];
  }

  /** Deletes a database of an earlier layout, whatever its flags were. Call only inside `write`. */
  dropDatabase(name: string, options: { dupSort?: boolean } = {}): void {
    if (!this.queue.inWrite()) throw new Error('dropDatabase must run inside a migration');
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
    await backup(this.root, file);
  }

  /** Forgets the read snapshot: the next read sees what other processes committed since. */
  refresh(): void {
    this.root.resetReadTxn();
  }

  /** Environment statistics for diagnostics. */
  stats(): StoreStats {
    return statsOf(this.root);
  }

  /** How the store file's pages are used: what the trees hold, and what is free below its high-water mark. */
  pageUse(): PageUse {
    return pageUseOf(this.root, this.meta, this.collections.values());
  }

  /**
   * Stamps every later batch of this thread for a replicated log and holds its writes' promises
   * until `gate` says the batch is in it (undefined: stops, a single box or a standby).
   */
  replicateTo(gate: ReplicationGate | undefined): void {
    this.ledger.use(gate);
  }

  /** The last replicated log entry the store holds (seq 0 before any). */
  logPoint(): LogPoint {
    return this.ledger.point();
  }

  /** The id of the replicated log this store continues, if any. */
  logId(): string | undefined {
    return this.meta.get(LOG_ID_KEY) as string | undefined;
  }

  /** Marks the store as continuing log `id` (the box that starts a log, before its writes are stamped). */
  async joinLog(id: string): Promise<void> {
    await this.write(() => this.queue.putMeta(LOG_ID_KEY, id));
  }

  /** Stamped batches from `from` on, in order, at most `limit` (their bytes are the log entries). */
  outbox(from: number, limit: number): { seq: number; bytes: Buffer }[] {
    return this.ledger.pending(from, limit);
  }

  /** Forgets the outbox's batches before `seq`: the log has them up to it (the one at `seq` stays, as the outbox's anchor in the log). */
  async sent(seq: number): Promise<void> {
    await this.write(() => this.ledger.sent(seq));
  }

  /** A standby applies the replicated log's entries (encoded), in order; resolves to how many were new. */
  applyLog(entries: readonly (LogEntry | Uint8Array)[]): Promise<number> {
    const decoded = entries.map((e) => (e instanceof Uint8Array ? decodeEntry(e) : e));
    return this.write(() => this.ledger.apply(decoded, (key, value) => this.queue.putMeta(key, value)));
  }

  /** Closes the environment after pending writes are flushed. */
  async close(): Promise<void> {
    await this.queue.settled();
    await this.root.flushed;
    await this.root.close();
  }
}
