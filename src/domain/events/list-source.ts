/** The event log as a list source, for GET /events and the live stream's catch-up. */
import type { Store } from '../../store/store.js';
import type { ListSource } from '../list/index.js';
import { eventRecords, type EventRecord } from './events.js';

/** Events newest first (the default order) without a sort: the store reads its keys backwards. */
export function eventSource(store: Store): ListSource<EventRecord> {
  const events = store.collection(eventRecords);
  return {
    lookup(field, values) {
      if (field !== 'component' && field !== 'request_id') return undefined;
      const rows = values.flatMap((v) => [...events.findBy(field, v as string)]);
      return rows.sort((a, b) => b.id - a.id);
    },
    scan: () => events.range(undefined, true),
    // The newest page without a filter reads its page; the total is the store's count.
    get size() {
      return events.count();
    },
  };
}
