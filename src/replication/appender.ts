/**
 * The active box's gate to the replicated log: batches stamped by either thread wait in the
 * store's outbox, and one loop sends them in order, as many as one transaction takes, each
 * transaction holding only while this box's term leads and the log ends where it left it.
 * A write is answered once its batch is in; a refusal (another box leads, or this box's lease
 * ran out while etcd could not be reached) refuses every waiting write and every later one.
 */
import { Listeners } from '../store/listeners.js';
import { ReplicaWriteRefused, type ReplicationGate, type Store } from '../store/store.js';
import { BYTES_PER_CALL, ENTRIES_PER_CALL, type ReplicatedLog } from './log.js';

/** Pause before an append that failed for etcd is tried again. */
const RETRY_MS = 100;
/** Entries in the log that the outbox forgets at once: a write of its own, so not after every append. */
const FORGET_EVERY = 64;

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface AppenderOptions {
  store: Store;
  log: ReplicatedLog;
  term: number;
  /** The last entry in the log when this box took the lead (its store holds it). */
  after: number;
  /** Whether this box's lease may have run out (etcd unreachable past it): it stops appending. */
  leaseLost(): boolean;
}

/** The main thread's gate while this box is the active one. */
export class LogAppender implements ReplicationGate {
  private appended: number;
  private forgotten: number;
  private readonly waiting: Waiter[] = [];
  private pumping = false;
  private refusal: ReplicaWriteRefused | undefined;
  private readonly refusedListeners = new Listeners<string>('replication refusal listener');

  constructor(private readonly options: AppenderOptions) {
    this.appended = options.after;
    this.forgotten = options.after;
  }

  term(): number {
    if (this.refusal) throw this.refusal;
    return this.options.term;
  }

  durable(seq: number): Promise<void> {
    if (seq <= this.appended) return Promise.resolve();
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise((resolve, reject) => {
      this.waiting.push({ seq, resolve, reject });
      void this.pump();
    });
  }

  /**
   * Settles once the log has every batch this thread's store holds now (undefined when it has
   * already): an answer waits for it, so that nothing a client is told, a 409 included, rests
   * on a batch a takeover could drop.
   */
  settledThrough(): Promise<void> | undefined {
    const seq = this.options.store.logPoint().seq;
    return seq <= this.appended ? undefined : this.durable(seq);
  }

  /** The last entry known to be in the log. */
  last(): number {
    return this.appended;
  }

  /** Why this box may no longer write, once it may not. */
  refused(): string | undefined {
    return this.refusal?.message;
  }

  /** Hears the refusal once it happens (the other thread's gate, the pair's role). */
  onRefused(listener: (message: string) => void): () => void {
    return this.refusedListeners.add(listener);
  }

  /** Refuses every waiting and later write: this box is no longer the active one. */
  refuse(message: string): void {
    if (this.refusal) return;
    this.refusal = new ReplicaWriteRefused(message);
    for (const w of this.waiting.splice(0)) w.reject(this.refusal);
    this.refusedListeners.tell(message);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiting.length > 0 && !this.refusal) {
        if (this.options.leaseLost()) {
          this.refuse('this box lost its lease on the lead (etcd unreachable): writes are no longer acknowledged here');
          break;
        }
        const { store, log, term } = this.options;
        // The other thread's commits: this thread's read snapshot may predate them.
        store.refresh();
        const entries = store.outbox(this.appended + 1, ENTRIES_PER_CALL);
        let bytes = 0;
        const count = entries.findIndex((e) => (bytes += e.bytes.length) > BYTES_PER_CALL);
        // A batch larger than one transaction goes alone (the log splits it into parts).
        if (count >= 0) entries.length = Math.max(1, count);
        if (entries[0]?.seq !== this.appended + 1) {
          this.refuse(`the outbox lacks batch ${this.appended + 1}: this box's store no longer follows the log`);
          break;
        }
        const last = entries[entries.length - 1]!.seq;
        let outcome: 'taken' | 'fenced';
        try {
          outcome = await log.append(term, this.appended, entries);
        } catch {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          continue;
        }
        // A retried append whose first try did get in finds the log moved by its own entries.
        if (outcome === 'fenced' && !(await this.tookEarlier(last).catch(() => false))) {
          const leader = await log.leader().catch(() => undefined);
          this.refuse(leader && leader.term !== term ? `box ${leader.name} is the active one now (term ${leader.term})` : 'the replicated log moved on without this box');
          break;
        }
        this.appended = last;
        for (let i = this.waiting.length - 1; i >= 0; i--) {
          const w = this.waiting[i]!;
          if (w.seq <= last) {
            this.waiting.splice(i, 1);
            w.resolve();
          }
        }
        if (last - this.forgotten >= FORGET_EVERY || this.waiting.length === 0) {
          this.forgotten = last;
          store.sent(last).catch(() => undefined);
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Whether the log already holds this term's entries up to `last` (an append whose answer was lost). */
  private async tookEarlier(last: number): Promise<boolean> {
    const { log, term } = this.options;
    const leader = await log.leader();
    if (leader?.term !== term) return false;
    const head = await log.head();
    return head !== undefined && head >= last && (await log.termOf(last)) === term;
  }
}
