/** Requests and jobs as list sources, for GET /requests and GET /jobs. */
import type { Store } from '../../store/store.js';
import { collectionSource, type ListSource, type OrderedRows } from '../list/index.js';
import type { OpenWork } from './open-work.js';
import { isFinalJob, jobs, requests, type JobRecord, type JobStatus, type RequestRecord } from './records.js';

/** The instants the store keeps requests and jobs in order of (list field to index). */
const BY_TIME = { created_at: 'created_at', updated_at: 'updated_at' };

/** Requests, looked up by id or status and read by creation or change through the store's indexes. */
export function requestSource(store: Store): ListSource<RequestRecord> {
  return collectionSource(store.collection(requests), { id: null, status: 'status' }, BY_TIME);
}

/**
 * Jobs without the internal plans (CREATED) unless the setting shows them. A filter on open
 * statuses (an integration's poll of EXECUTING jobs) reads the open work in memory, in the
 * order the store's status index gives, instead of decoding each job; ended ones come from
 * the store. Rows are never written in place (a changed job is read anew), so their items
 * may be kept.
 */
export function jobSource(store: Store, showCreated: () => boolean, open: Pick<OpenWork, 'jobsWithStatus' | 'jobsByCreation'>): ListSource<JobRecord> {
  const base = collectionSource(store.collection(jobs), { id: null, carrier_id: 'carrier_id', request_id: 'request_id', status: 'status' }, BY_TIME);
  const visible = function* (rows: Iterable<JobRecord>) {
    const all = showCreated();
    for (const j of rows) if (all || j.status !== 'CREATED') yield j;
  };
  const visibleRuns = function* (runs: Iterable<readonly JobRecord[]>) {
    if (showCreated()) return yield* runs;
    for (const run of runs) yield run.filter((j) => j.status !== 'CREATED');
  };
  // The open statuses asked for, shown ones only (CREATED when the setting says so).
  const openStatuses = (values: readonly unknown[]): JobStatus[] | undefined => {
    if (!(values as JobStatus[]).every((s) => !isFinalJob(s))) return undefined;
    const all = showCreated();
    return (values as JobStatus[]).filter((s) => all || s !== 'CREATED');
  };
  return {
    rowsImmutable: true,
    lookup(field, values) {
      const statuses = field === 'status' ? openStatuses(values) : undefined;
      if (statuses?.length === 1) {
        // One status: its page by creation is read from the end of the open work's list in that
        // order (an integration's poll of the newest jobs), not sorted from all of them.
        const [status] = statuses as [JobStatus];
        const rows = (): readonly JobRecord[] => open.jobsWithStatus(status);
        const byCreation: OrderedRows<JobRecord> = {
          [Symbol.iterator]: () => rows()[Symbol.iterator](),
          toArray: rows,
          inOrderOf: (name, descending) => (name === 'created_at' ? creationRuns(open.jobsByCreation(status), descending) : undefined),
        };
        return byCreation;
      }
      // The lists themselves, not a filtering generator: a poll of 500 open jobs cost two
      // iterator calls a row (a twelfth of the main thread in bench:load's everyday mix).
      if (statuses) return statuses.flatMap((s) => open.jobsWithStatus(s));
      const rows = base.lookup(field, values);
      return rows && visible(rows);
    },
    countLookup(field, values) {
      const statuses = field === 'status' ? openStatuses(values) : undefined;
      return statuses?.reduce((n, s) => n + open.jobsByCreation(s).length, 0);
    },
    scan: () => visible(base.scan()),
    ordered(field, descending) {
      const runs = base.ordered!(field, descending);
      return runs && visibleRuns(runs);
    },
    rank: base.rank!,
    within(field, low, high) {
      const rows = base.within!(field, low, high);
      if (rows === undefined || showCreated()) return rows;
      // The index counts the hidden plans too: the rows are counted by reading them.
      return {
        [Symbol.iterator]: () => visible(rows)[Symbol.iterator](),
        toArray: () => rows.toArray().filter((j) => j.status !== 'CREATED'),
        inOrderOf: (name, descending) => {
          const runs = rows.inOrderOf(name, descending);
          return runs && visibleRuns(runs);
        },
      };
    },
    // The jobs scan gives: all of them, less the internal plans unless the setting shows them.
    // Those are open jobs, counted in memory: the status index's count walked every key of them
    // on each page that read the size, 8 % of the API thread in bench:load's everyday mix.
    get size() {
      return base.size! - (showCreated() ? 0 : open.jobsByCreation('CREATED').length);
    },
  };
}

/**
 * Jobs in creation order (`created_at`, then id) as runs of equal `created_at`, each in id
 * order: ascending from the start, descending from the end.
 */
function* creationRuns(list: readonly JobRecord[], descending: boolean): Generator<readonly JobRecord[]> {
  if (!descending) {
    for (let i = 0; i < list.length;) {
      let j = i + 1;
      while (j < list.length && list[j]!.created_at === list[i]!.created_at) j++;
      yield list.slice(i, j);
      i = j;
    }
    return;
  }
  for (let j = list.length; j > 0;) {
    let i = j - 1;
    while (i > 0 && list[i - 1]!.created_at === list[j - 1]!.created_at) i--;
    yield list.slice(i, j);
    j = i;
  }
}
