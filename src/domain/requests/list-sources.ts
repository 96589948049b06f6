/** Requests and jobs as list sources, for GET /requests and GET /jobs. */
import type { Store } from '../../store/store.js';
import { collectionSource, type ListSource } from '../list/index.js';
import type { OpenWork } from './open-work.js';
import { isFinalJob, jobs, requests, type JobRecord, type JobStatus, type RequestRecord } from './records.js';

/** Requests, looked up by id or status through the store's indexes. */
export function requestSource(store: Store): ListSource<RequestRecord> {
  return collectionSource(store.collection(requests), { id: null, status: 'status' });
}

/**
 * Jobs without the internal plans (CREATED) unless the setting shows them. A filter on open
 * statuses (an integration's poll of EXECUTING jobs) reads the open work in memory, in the
 * order the store's status index gives, instead of decoding each job; ended ones come from
 * the store. Rows are never written in place (a changed job is read anew), so their items
 * may be kept.
 */
export function jobSource(store: Store, showCreated: () => boolean, open: Pick<OpenWork, 'jobsWithStatus'>): ListSource<JobRecord> {
  const base = collectionSource(store.collection(jobs), { id: null, carrier_id: 'carrier_id', request_id: 'request_id', status: 'status' });
  const visible = function* (rows: Iterable<JobRecord>) {
    const all = showCreated();
    for (const j of rows) if (all || j.status !== 'CREATED') yield j;
  };
  // The open statuses asked for, as the in-memory lists that hold them (CREATED only when shown).
  const openLists = (values: readonly unknown[]): (readonly JobRecord[])[] | undefined => {
    if (!(values as JobStatus[]).every((s) => !isFinalJob(s))) return undefined;
    const all = showCreated();
    return (values as JobStatus[]).filter((s) => all || s !== 'CREATED').map((s) => open.jobsWithStatus(s));
  };
  return {
    rowsImmutable: true,
    lookup(field, values) {
      if (field === 'status') {
        // The lists themselves, not a filtering generator: a poll of 500 open jobs cost two
        // iterator calls a row (a twelfth of the main thread in issue 22's mix).
        const lists = openLists(values);
        if (lists) return lists.length === 1 ? lists[0]! : lists.flat();
      }
      const rows = base.lookup(field, values);
      return rows && visible(rows);
    },
    countLookup(field, values) {
      const lists = field === 'status' ? openLists(values) : undefined;
      return lists?.reduce((n, list) => n + list.length, 0);
    },
    scan: () => visible(base.scan()),
  };
}
