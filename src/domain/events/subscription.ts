/**
 * One live-stream subscriber: first every retained event after the id it resumes from, then
 * each new event as it commits, filtered, in id order, with no gap and no duplicate. Every
 * wake-up reads the store from the last id examined (rather than trusting the notification),
 * so events published out of order or while the backlog was being sent cannot be skipped or
 * repeated. The store is read in chunks of REPLAY_CHUNK events with a turn of the event loop
 * between them, so a long backlog under a narrow filter never holds up the daemon. A
 * subscriber that cannot keep up is dropped: the transport reports it by `send` returning
 * false, and the daemon never waits for a client.
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

/** Events read from the store (matching or not) before the subscription yields to the event loop. */
export const REPLAY_CHUNK = 500;

export class Subscription {
  private lastSeen: number;
  private stopListening: (() => void) | undefined;
  private closed = false;
  /** A chunk is scheduled: notifications meanwhile need nothing, that chunk reads on from lastSeen. */
  private pumping = false;
  /** While held, nothing is sent (the caller's credential is being checked again). */
  private held = false;

  constructor(
    private readonly events: Events,
    private readonly matches: (event: EventRecord) => boolean,
    private readonly render: (event: EventRecord) => unknown,
    private readonly transport: SubscriberTransport,
    after: number | undefined,
  ) {
    // Without `after`, the stream starts at the newest event: only what happens from now on.
    this.lastSeen = after ?? events.lastId();
  }

  /** Sends the greeting, then the backlog and the live feed. */
  start(): void {
    const oldest = this.events.after(0)[Symbol.iterator]().next();
    const ready = {
      type: 'ready',
      after: this.lastSeen,
      last_id: this.events.lastId(),
      oldest_retained_id: oldest.done ? null : oldest.value.id,
    };
    if (!this.transport.send(JSON.stringify(ready))) return this.drop();
    // Resumed from before what is held: the events between were pruned, and the client hears so before the rest.
    const firstHeld = oldest.done ? ready.last_id + 1 : oldest.value.id;
    if (this.lastSeen < firstHeld - 1) {
      const gap = {
        type: 'pruned', after: this.lastSeen, oldest_retained_id: ready.oldest_retained_id,
        message: `events ${this.lastSeen + 1} to ${firstHeld - 1} were pruned (events.retentionDays) and are in the history archive; the stream goes on from ${ready.oldest_retained_id === null ? 'the next event' : `event ${ready.oldest_retained_id}`}`,
      };
      if (!this.transport.send(JSON.stringify(gap))) return this.drop();
    }
    this.stopListening = this.events.subscribe(() => this.pump());
    this.pump();
  }

  /** Stops sending until `release` (events keep accumulating in the store meanwhile). */
  hold(): void {
    this.held = true;
  }

  /** Sends on from where `hold` stopped. */
  release(): void {
    this.held = false;
    this.pump();
  }

  /** Stops following (the connection closed). */
  stop(): void {
    this.closed = true;
    this.stopListening?.();
  }

  /** Sends one chunk now; schedules the next when the store may hold more. */
  private pump(): void {
    if (this.closed || this.held || this.pumping) return;
    if (this.sendChunk() === REPLAY_CHUNK) {
      this.pumping = true;
      setImmediate(() => {
        this.pumping = false;
        this.pump();
      });
    }
  }

  /** Reads up to REPLAY_CHUNK events after lastSeen and sends those that match; returns how many were read. */
  private sendChunk(): number {
    let read = 0;
    for (const event of this.events.after(this.lastSeen)) {
      this.lastSeen = event.id;
      read++;
      if (this.matches(event) && !this.transport.send(JSON.stringify({ type: 'event', event: this.render(event) }))) {
        this.drop();
        return 0;
      }
      if (read === REPLAY_CHUNK) break;
    }
    return read;
  }

  private drop(): void {
    this.stop();
    this.transport.close(CLOSE_TOO_SLOW, 'too far behind: reconnect with ?after=<last id seen>');
  }
}
