/**
 * One live-stream subscriber: first every retained event after the id it resumes from, then
 * each new event as it commits, filtered, in id order, with no gap and no duplicate. Every
 * wake-up reads the store from the last id sent (rather than trusting the notification), so
 * events published out of order or while the backlog was being sent cannot be skipped or
 * repeated. A subscriber that cannot keep up is dropped: the transport reports it by `send`
 * returning false, and the daemon never waits for a client.
 */
import type { EventRecord, Events } from './events.js';

export interface SubscriberTransport {
  /** Queues one message; false when the client is too far behind and must be dropped. */
  send(message: string): boolean;
  /** Ends the connection with a reason. */
  close(code: number, reason: string): void;
}

/** Close code for a client that fell too far behind (4000-4999: application codes). */
export const CLOSE_TOO_SLOW = 4008;

export class Subscription {
  private lastSent: number;
  private stopListening: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly events: Events,
    private readonly matches: (event: EventRecord) => boolean,
    private readonly render: (event: EventRecord) => unknown,
    private readonly transport: SubscriberTransport,
    after: number | undefined,
  ) {
    // Without `after`, the stream starts at the newest event: only what happens from now on.
    this.lastSent = after ?? events.lastId();
  }

  /** Sends the greeting and the backlog, then follows the live feed. */
  start(): void {
    const oldest = this.events.after(0)[Symbol.iterator]().next();
    const ready = {
      type: 'ready',
      after: this.lastSent,
      last_id: this.events.lastId(),
      oldest_retained_id: oldest.done ? null : oldest.value.id,
    };
    if (!this.transport.send(JSON.stringify(ready))) return this.drop();
    this.stopListening = this.events.subscribe(() => this.catchUp());
    this.catchUp();
  }

  /** Stops following (the connection closed). */
  stop(): void {
    this.closed = true;
    this.stopListening?.();
  }

  private catchUp(): void {
    if (this.closed) return;
    for (const event of this.events.after(this.lastSent)) {
      this.lastSent = event.id;
      if (!this.matches(event)) continue;
      if (!this.transport.send(JSON.stringify({ type: 'event', event: this.render(event) }))) return this.drop();
    }
  }

  private drop(): void {
    this.stop();
    this.transport.close(CLOSE_TOO_SLOW, 'too far behind: reconnect with ?after=<last id seen>');
  }
}
