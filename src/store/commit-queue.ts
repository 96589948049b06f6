/**
 * The store's commit queue: the writes asked for in one event-loop turn run together at its end
 * in one LMDB transaction, and each write's promise settles once that commit is durable (one
 * fsync for all of them), so an acknowledged change survives `kill -9` and power loss.
 *
 * A write that throws is undone alone: each change notes how to reverse itself before it is
 * made, and a write's notes are played back newest first inside the same transaction; the
 * batch's other writes commit. No child transactions: inside those, reads came back garbled
 * after some `kill -9` restarts (docs/decisions.md, "Store").
 */
import type { Database, RootDatabase } from 'lmdb';
import type { Key } from './collection.js';
import { BATCH_BUDGET_MS, commitsOffLoop, ON_LOOP, paceAfterLoopCommit, type CommitPace } from './commit-pace.js';
import type { CommitNotices } from './commit-notices.js';
import { Listeners } from './listeners.js';
import type { StructureKeeper } from './shared-structures.js';
import type { FaultState } from './storage-fault.js';
import { ReplicaWriteRefused, type ReplicationLedger } from './replication.js';

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
  /** Keys of the meta database it set or removed. */
  meta: Set<string>;
  undo: (() => void)[];
  nested: { resolve: () => void; reject: (reason: unknown) => void }[];
  result: unknown;
  error: { thrown: unknown } | undefined;
}

/** A write about to run: nothing changed, noted or nested yet. */
function newRun(): WriteRun {
  return { after: [], changed: new Map(), meta: new Set(), undo: [], nested: [], result: undefined, error: undefined };
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

/** The writes of one environment on this thread, batched into its transactions. */
export class CommitQueue {
  /** The write running now (inside a transaction), if any. */
  private run: WriteRun | undefined;
  /** Writes for the next batch, at the end of this turn: any a batch left past its budget, then those asked since. */
  private queued: QueuedWrite[] = [];
  /** Settles once the writes of the batch booked last are committed (or refused). */
  private idle: Promise<void> = Promise.resolve();
  /** A batch is booked for the end of this turn. */
  private batchBooked = false;
  /** Whether batches commit on the event loop or on lmdb-js's write thread (`commit-pace.ts`). */
  private pace: CommitPace = ON_LOOP;
  /** Batches committing on lmdb-js's write thread now. */
  private offLoopInFlight = 0;
  private readonly holdListeners = new Listeners<CommitTiming>('commit listener');

  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, string>,
    private readonly faults: FaultState,
    private readonly notices: CommitNotices,
    private readonly structures: StructureKeeper,
    private readonly ledger: ReplicationLedger,
  ) {}

  /** Whether a write runs now, inside a transaction. */
  inWrite(): boolean {
    return this.run !== undefined;
  }

  /**
   * Runs `fn` in a write transaction and resolves once it is durable. If `fn` throws, nothing
   * it wrote is kept and the error is rethrown.
   *
   * Writes asked for in one event-loop turn commit together at its end: `fn` runs on this
   * thread then, not during this call. The commit runs on the event loop while the disk keeps
   * up, and on lmdb-js's write thread for a while after it did not (`commit-pace.ts`). On the
   * loop, a batch whose writes have run `BATCH_BUDGET_MS` commits those, and the rest go first
   * into the next turn's batch: writes still commit in the order they were asked.
   */
  write<R>(fn: () => R): Promise<R> {
    if (this.run) return this.nestedWrite(this.run, fn);
    return new Promise<R>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.bookBatch();
    });
  }

  /** The current write changed `key` of collection `collection`; `undo` reverses that change. */
  noteChange(collection: string, key: Key, undo: () => void): void {
    const run = this.run!;
    let keys = run.changed.get(collection);
    if (!keys) run.changed.set(collection, (keys = new Set()));
    keys.add(key);
    run.undo.push(undo);
  }

  /** Sets `key` of the meta database inside the current write (undefined: removes it), undone with it. */
  putMeta(key: string, value: unknown): void {
    const db = this.meta;
    const previous = db.get(key);
    if (value === undefined) db.removeSync(key);
    else db.putSync(key, value);
    this.run!.meta.add(key);
    this.run!.undo.push(() => (previous === undefined ? db.removeSync(key) : db.putSync(key, previous)));
  }

  /**
   * Runs `callback` once the current write is durable (live notifications that must never
   * announce what a crash could still take back); dropped if the write is rolled back.
   */
  afterCommit(callback: () => void): void {
    if (!this.run) throw new Error('afterCommit must run inside Store.write()');
    this.run.after.push(callback);
  }

  /** Hears what each commit cost once it is durable (`CommitTiming`); returns the function that stops it. */
  onCommitHeld(listener: (timing: CommitTiming) => void): () => void {
    return this.holdListeners.add(listener);
  }

  /** Settles once every write asked for so far is committed or refused. */
  async settled(): Promise<void> {
    // A batch past its budget books another for the writes it left.
    for (let idle = this.idle; ; idle = this.idle) {
      await idle;
      if (idle === this.idle) break;
    }
  }

  /**
   * Runs `fn` in one synchronous transaction that a throw aborts whole (LMDB's own rollback):
   * for the migrations at open, whose index rebuilds and dropped databases no undo list could
   * reverse. Blocks the event loop for its commit; nothing else runs yet at open.
   */
  async atOpen(fn: () => void): Promise<void> {
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
   * undone alone and refused; the others stand. A commit the disk refuses keeps nothing and
   * refuses every write of the batch.
   */
  private async commit(batch: readonly QueuedWrite[]): Promise<void> {
    const runs: WriteRun[] = [];
    let writesMs = 0;
    let written = 0;
    let savedStructures = false;
    let seq: number | undefined;
    const gate = this.ledger.current();
    const offLoop = commitsOffLoop(this.pace, performance.now(), this.offLoopInFlight);
    const runBatch = () => {
      const began = performance.now();
      this.structures.batchBegins();
      for (const write of batch) {
        runs.push(this.runWrite(write.fn));
        if (!offLoop && performance.now() - began > BATCH_BUDGET_MS) break;
      }
      savedStructures = this.structures.batchWritten();
      seq = gate && this.ledger.stamp(gate, runs.filter((run) => run.error === undefined));
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
      // The disk refused the commit, or this box may not write: nothing of the batch is kept.
      if (savedStructures) this.structures.forget();
      const error = err instanceof ReplicaWriteRefused ? err : this.faults.refused(await commitCause(err));
      batch.forEach((write, i) => {
        for (const nested of runs[i]?.nested ?? []) nested.reject(error);
        write.reject(error);
      });
      return;
    }
    this.faults.stood();
    if (gate && seq !== undefined) {
      try {
        await gate.durable(seq);
      } catch (err) {
        // Kept here but not known to be in the replicated log: not acknowledged, and nothing
        // announced; the box gives up its lead and takes the log's history again.
        batch.forEach((write, i) => {
          for (const nested of runs[i]?.nested ?? []) nested.reject(err);
          write.reject(err);
        });
        return;
      }
    }
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
}
