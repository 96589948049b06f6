/**
 * The event log (spec 2.14, 4.7, 6): what happened that a technician or an integration
 * monitor cares about. An event commits in the same transaction as the change it reports
 * (`record`), or in its own (`emit`) when nothing else changes (a failed login). Ids come
 * from a durable sequence, so they only grow, across restarts too. Subscribers (the live
 * stream) hear an event only once it is durable, in id order.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import type { EventKind } from './catalogue.js';

export interface EventRecord {
  id: number;
  component: string;
  severity: number;
  hex_value: string;
  description: string;
  bot_id: string | null;
  level_id: number | null;
  request_id: string | null;
  created_at: number;
}

/** Where an event is about, beyond its kind. */
export interface EventContext {
  bot_id?: string | null;
  level_id?: number | null;
  request_id?: string | null;
}

export const eventRecords: CollectionDef<EventRecord> = {
  name: 'events',
  key: (e) => e.id,
  indexes: [
    { name: 'component', of: (e) => e.component },
    { name: 'request_id', of: (e) => e.request_id ?? undefined },
  ],
};

export const EVENT_COLLECTIONS = [eventRecords] as const;

export type EventListener = (event: EventRecord) => void;

export class Events {
  private readonly listeners = new Set<EventListener>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  /** Adds an event to the current write transaction. Call only inside `Store.write`. */
  record(kind: EventKind, description: string, context: EventContext = {}): EventRecord {
    const event: EventRecord = {
      id: this.store.nextId('event'),
      component: kind.component,
      severity: kind.severity,
      hex_value: kind.hex,
      description,
      bot_id: context.bot_id ?? null,
      level_id: context.level_id ?? null,
      request_id: context.request_id ?? null,
      created_at: this.now(),
    };
    this.store.collection(eventRecords).put(event);
    this.store.afterCommit(() => this.publish(event));
    return event;
  }

  /** Writes one event on its own. */
  emit(kind: EventKind, description: string, context: EventContext = {}): Promise<EventRecord> {
    return this.store.write(() => this.record(kind, description, context));
  }

  /** Hears every event once it is durable; returns the function that stops listening. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Retained events with ids above `afterId`, oldest first. */
  *after(afterId: number): Iterable<EventRecord> {
    for (const event of this.store.collection(eventRecords).range(afterId + 1)) yield event;
  }

  /** The id of the newest event (0 before the first). */
  lastId(): number {
    return this.store.sequence('event');
  }

  /** Tells listeners of an event another thread committed (the brain's worker). */
  announce(event: EventRecord): void {
    this.publish(event);
  }

  private publish(event: EventRecord): void {
    for (const listener of this.listeners) listener(event);
  }
}
