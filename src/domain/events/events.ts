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

/** Events deleted per pruning transaction: a large backlog never makes one huge write. */
export const PRUNE_CHUNK = 10_000;

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

  /** Deletes events created before `cutoff` (ms), all of them, in transactions of PRUNE_CHUNK; returns how many. */
  async pruneBefore(cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await this.pruneChunk(cutoff);
      total += removed;
      if (removed < PRUNE_CHUNK) return total;
    }
  }

  /** Deletes events older than `retentionDays` days; returns how many. */
  prune(retentionDays: number): Promise<number> {
    return this.pruneBefore(this.now() - retentionDays * 86_400_000);
  }

  /** One bounded transaction of pruning: ids grow with time, so it stops at the first younger event. */
  private async pruneChunk(cutoff: number): Promise<number> {
    const old: number[] = [];
    for (const event of this.store.collection(eventRecords).range(0)) {
      if (event.created_at >= cutoff || old.length === PRUNE_CHUNK) break;
      old.push(event.id);
    }
    if (old.length === 0) return 0;
    await this.store.write(() => {
      for (const id of old) this.store.collection(eventRecords).remove(id);
    });
    return old.length;
  }

  /**
   * Prunes events older than the retention now and every `everyMs` (the timer does not keep
   * the process alive); returns the function that stops it.
   */
  keep(retentionDays: () => number, everyMs: number, onError: (err: unknown) => void): () => void {
    let running = false;
    const run = () => {
      if (running) return;
      running = true;
      this.prune(retentionDays())
        .catch(onError)
        .finally(() => (running = false));
    };
    run();
    const timer = setInterval(run, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Tells listeners of an event another thread committed (the brain's worker). */
  announce(event: EventRecord): void {
    this.publish(event);
  }

  private publish(event: EventRecord): void {
    for (const listener of this.listeners) listener(event);
  }
}
