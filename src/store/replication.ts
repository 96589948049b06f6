/**
 * The store's side of a replicated pair of boxes: what a committed batch becomes for the
 * replicated log, and how a standby applies the log's entries. The store knows nothing of the
 * engine that carries the log; a `ReplicationGate` stands for it.
 *
 * On the active box each batch that changed anything is stamped, inside its own transaction,
 * with the next sequence number and the leader's term, and its changes (every key it left
 * changed, with the value it left there, or none for a removal) are kept in the outbox
 * database under that number. Both threads that share the environment stamp, and LMDB's one
 * writer at a time makes the numbers follow the commit order with no gap, so whoever sends the
 * outbox to the log sends every committed batch, even one whose thread died right after its
 * commit. A write's promise settles only once the gate says its batch is in the log.
 *
 * A standby applies entries in one write each batch of them, through the collections (their
 * indexes kept as on the active) but not their `changed` hooks: what those derived on the
 * active is in the entry already.
 */
import type { Database, RootDatabase } from 'lmdb';
import { pack, unpack } from 'msgpackr';
import type { Collection, Key } from './collection.js';

/** One change of a batch: a collection's key (collection '' is the meta database) and the value it was left with; no value: removed. */
export type Change = [collection: string, key: Key, value?: unknown];

/** A committed batch as the replicated log carries it. */
export interface LogEntry {
  seq: number;
  /** The leadership term of the box that committed it. */
  term: number;
  changes: Change[];
}

/** Where a box's store stands in the log: the last entry it holds (0, 0 before any). */
export interface LogPoint {
  seq: number;
  term: number;
}

/** The replicated log as the store needs it on the active box. */
export interface ReplicationGate {
  /** The term new batches are stamped with; throws a `ReplicaWriteRefused` when this box may not write. */
  term(): number;
  /** Resolves once batch `seq` is in the replicated log; rejects when that cannot be known or happen. */
  durable(seq: number): Promise<void>;
}

/** A write this box may not acknowledge: it is not (or no longer) the active one of its pair. */
export class ReplicaWriteRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplicaWriteRefused';
  }
}

/** The meta key of the last log point the store holds. */
export const LOG_POINT_KEY = 'replication:point';
/** The meta key of the id of the log the store continues. */
export const LOG_ID_KEY = 'replication:log';
/** The database of stamped batches not yet known to be in the log. */
export const OUTBOX_DB = 'replication-outbox';

/** What a write changed that a stamp reads: its collections' keys, and its meta keys. */
export interface StampedRun {
  changed: Map<string, Set<Key>>;
  meta: Set<string>;
}

/** Encodes a log entry for the outbox and the log (the same bytes in both). */
export function encodeEntry(entry: LogEntry): Buffer {
  return pack(entry);
}

/** Decodes a log entry's bytes. */
export function decodeEntry(bytes: Uint8Array): LogEntry {
  return unpack(bytes) as LogEntry;
}

/** The stamps, outbox and applying of one environment on this thread. */
export class ReplicationLedger {
  private readonly outbox: Database<Buffer, number>;
  private gate: ReplicationGate | undefined;

  constructor(
    root: RootDatabase,
    private readonly meta: Database<unknown, string>,
    private readonly collections: ReadonlyMap<string, Collection<unknown>>,
  ) {
    this.outbox = root.openDB<Buffer, number>({ name: OUTBOX_DB, encoding: 'binary' });
  }

  /** Stamps every later batch for `gate`'s log (undefined: none, a single box or a standby). */
  use(gate: ReplicationGate | undefined): void {
    this.gate = gate;
  }

  /** The gate batches wait for, if replication is on. */
  current(): ReplicationGate | undefined {
    return this.gate;
  }

  /** The last log point the store holds. */
  point(): LogPoint {
    return (this.meta.get(LOG_POINT_KEY) as LogPoint | undefined) ?? { seq: 0, term: 0 };
  }

  /**
   * Inside a batch's transaction, after its writes: the batch's entry in the outbox and the
   * store's new log point; returns its sequence number, or undefined when it changed nothing.
   * Throws `ReplicaWriteRefused` (aborting the transaction) when this
   * box may not write.
   */
  stamp(gate: ReplicationGate, runs: readonly StampedRun[]): number | undefined {
    const changes: Change[] = [];
    for (const run of runs) {
      for (const [name, keys] of run.changed) {
        const c = this.collections.get(name)!;
        for (const key of keys) changes.push(entryChange(name, key, c.get(key)));
      }
      for (const key of run.meta) changes.push(entryChange('', key, this.meta.get(key)));
    }
    if (changes.length === 0) return undefined;
    const term = gate.term();
    const seq = this.point().seq + 1;
    this.outbox.putSync(seq, encodeEntry({ seq, term, changes }));
    this.meta.putSync(LOG_POINT_KEY, { seq, term });
    return seq;
  }

  /** The outbox's entries from `from` on, in order, at most `limit` of them. */
  pending(from: number, limit: number): { seq: number; bytes: Buffer }[] {
    const out: { seq: number; bytes: Buffer }[] = [];
    for (const { key, value } of this.outbox.getRange({ start: from, limit })) out.push({ seq: key, bytes: value });
    return out;
  }

  /**
   * Forgets the outbox's entries before `seq` (the log has them up to `seq`); the one at `seq`
   * stays, so that a box whose store went past the log can tell that the log's last entry is
   * its own. Call only inside a write.
   */
  sent(seq: number): void {
    for (const key of this.outbox.getKeys({ end: seq })) this.outbox.removeSync(key);
  }

  /**
   * Applies log entries in order, skipping any the store holds already; `setMeta` sets a meta
   * key inside the write (undone with it). Returns how many it applied. Call only inside a write.
   */
  apply(entries: readonly LogEntry[], setMeta: (key: string, value: unknown) => void): number {
    let point = this.point();
    let applied = 0;
    for (const entry of entries) {
      if (entry.seq <= point.seq) continue;
      if (entry.seq !== point.seq + 1) throw new Error(`replicated log entry ${entry.seq} does not follow ${point.seq}`);
      for (const [name, key, ...value] of entry.changes) {
        if (name === '') {
          setMeta(key as string, value.length === 0 ? undefined : value[0]);
          continue;
        }
        const c = this.collections.get(name);
        if (!c) throw new Error(`replicated log entry ${entry.seq} names collection ${name}, which this build does not have`);
        c.replicate(key, value.length === 0 ? undefined : value[0]);
      }
      point = { seq: entry.seq, term: entry.term };
      applied++;
    }
    if (applied > 0) setMeta(LOG_POINT_KEY, point);
    return applied;
  }

}

function entryChange(name: string, key: Key, value: unknown): Change {
  return value === undefined ? [name, key] : [name, key, value];
}
