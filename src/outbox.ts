/**
 * Messages to another thread or process, sent together. Each postMessage or IPC send costs both
 * ends a task (a copy, a wake-up, a dispatch) whatever its size: with hundreds of bots telling
 * their telemetry ten times a second, one message per event took a fifth of the daemon's main
 * thread and as much of the brain's. The messages queued while one task runs leave as one
 * batch, in order, once it ends (or once the event loop's turn ends, for a sender that would
 * rather gather every read of the turn).
 */

/** When a batch leaves: `task`, as the current task ends (a microtask); `turn`, as the event loop's turn ends (setImmediate). */
export type OutboxFlush = 'task' | 'turn';

export class Outbox<M> {
  private queue: M[] = [];

  /** `send` puts one batch on the wire. */
  constructor(private readonly send: (batch: M[]) => void, private readonly when: OutboxFlush = 'task') {}

  /** Queues a message for the batch under way. */
  post(message: M): void {
    if (this.queue.length === 0) {
      if (this.when === 'task') queueMicrotask(this.flush);
      else setImmediate(this.flush);
    }
    this.queue.push(message);
  }

  /** Sends what is queued and this message at once: for words that must not wait on a thread that may be about to end. */
  postNow(message: M): void {
    this.queue.push(message);
    this.flush();
  }

  /** Sends what is queued now. */
  readonly flush = (): void => {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.send(batch);
  };
}
