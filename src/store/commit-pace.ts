/**
 * Where the store commits its next batch of writes, as a pure function of what the last
 * commits cost.
 *
 * On the event loop (`transactionSync`) a batch is answered in the turn it was asked in, but
 * every other request waits for its page writes and fsync. On lmdb-js's write thread
 * (`transactionAsync`) nothing waits for the disk, but each write's answer comes two
 * event-loop turns later (one runs the writes inside the write thread's transaction, another
 * hears the durable commit): under the load mix (`npm run bench:load`) that made writes
 * 60-70 ms slower and p99 worse. So the store commits on the event loop while the disk keeps up, and on the write
 * thread for a while after a commit on the loop that did not (a busy or failing disk, whose
 * fsyncs of 330-730 ms froze every request).
 */

/** A commit on the event loop that waited this long for LMDB and the disk sends the next ones to the write thread. */
export const SLOW_DISK_MS = 50;
/** How long commits stay on the write thread after a slow one, before one on the loop tries the disk again. */
export const OFF_LOOP_MS = 10_000;

/** Until when (ms, the store's clock) commits go to the write thread; before it, on the loop. */
export interface CommitPace {
  offLoopUntil: number;
}

export const ON_LOOP: CommitPace = { offLoopUntil: 0 };

/**
 * Whether the next batch commits on lmdb-js's write thread. Batches still committing there
 * keep it there: a commit on the loop would overtake them.
 */
export function commitsOffLoop(pace: CommitPace, now: number, inFlightOffLoop: number): boolean {
  return now < pace.offLoopUntil || inFlightOffLoop > 0;
}

/** The pace after a commit on the event loop that waited `diskMs` for LMDB's lock, its commit and the fsync. */
export function paceAfterLoopCommit(pace: CommitPace, diskMs: number, now: number): CommitPace {
  return diskMs >= SLOW_DISK_MS ? { offLoopUntil: now + OFF_LOOP_MS } : pace;
}

/**
 * How long one batch's writes may run on the event loop before the rest wait for the next
 * batch, one turn later. Cheap handlers can queue a turn's worth of costly writes (a planned
 * request costs a millisecond or more while the code is cold): unbounded, the batches of a
 * cold start ran 35-70 ms of writes, and uSockets completes only five TLS handshakes a turn,
 * so new connections waited up to two seconds. It stays above what a batch of the steady load
 * needs: at 10 ms it split those too, and the mix lost 4-8 % of its rate. Off the loop the batch is
 * not split: batches still in flight there would overtake the writes it left.
 */
export const BATCH_BUDGET_MS = 20;
