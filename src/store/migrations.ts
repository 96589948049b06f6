/** The store's schema history. Append a step for every change of stored shapes; never edit one. */
import type { Collection } from './collection.js';
import type { Migration } from './migrate.js';

type Bag = Record<string, unknown>;

const CARRIER_JOBS = new Set(['RETRIEVING', 'STORING', 'BUFFERING']);
const PERSON_JOBS = new Set(['PICKING', 'PICKING_ALERT', 'REFILLING', 'CHECKING', 'PACKING', 'ONBOARDING', 'OFFBOARDING_BD']);
const MOVING_JOBS = new Set(['OFFBOARDING_BC', 'OFFBOARDING', 'MOVING_BOT', 'CHARGING', 'UNCHARGING', 'CHECK_RFID_TAG', 'WRITE_RFID_TAG']);
const FINAL = new Set(['SUCCEEDED', 'CANCELLED', 'ABORTED']);

/**
 * A job of schema 3 with its free-form `details` bag, as schema 4 keeps it: why it waits
 * (`wait`) or ended (`ended_because`), typed `progress`, and the retry chain in fields of
 * their own. Plain objects: the store knows no domain types.
 */
export function typedJob(job: Bag): Bag {
  const { details = {}, ...rest } = job as { details?: Bag };
  const d = details as Bag;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const type = String(job['type']);
  const final = FINAL.has(String(job['status']));
  let progress: Bag;
  if (CARRIER_JOBS.has(type)) progress = { kind: 'carrier', phase: str(d['phase']), staged_at: (d['staged_at'] as Bag | undefined) ?? null, in_front_of: str(d['in_front_of']) };
  else if (PERSON_JOBS.has(type)) progress = { kind: 'person', trigger_status: str(d['trigger_status']), booked_quantity: typeof d['booked_quantity'] === 'number' ? d['booked_quantity'] : null };
  else if (type === 'CHANGE_RFID_WRITING_MODE') progress = { kind: 'writing_mode', writing_mode: d['writing_mode'] === true };
  else if (MOVING_JOBS.has(type)) progress = { kind: 'bot', phase: str(d['phase']) === 'done' ? 'done' : str(d['phase']) === null ? null : 'to_target' };
  else progress = { kind: 'control' };
  const waiting = str(d['waiting_for']);
  return {
    ...rest,
    wait: !final && waiting !== null ? { waiting_for: waiting, reason: str(d['reason']) ?? '' } : null,
    ended_because: final ? str(d['reason']) : null,
    progress,
    attempt: d['recovers'] === undefined ? 1 : 2,
    recovers: str(d['recovers']),
    replaced_by: str(d['replaced_by']),
    retry_at: null,
  };
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'initial layout: meta database with sequences', up: () => undefined },
  {
    version: 2,
    description: 'secondary indexes as ranges of [value, key] entries instead of dupSort databases',
    up: (store) => {
      for (const c of store.registered()) {
        c.rebuildIndexes();
        for (const index of c.def.indexes ?? []) store.dropDatabase(`${c.def.name}~${index.name}`, { dupSort: true });
      }
    },
  },
  {
    version: 3,
    description: 'requests and jobs indexed by status (GET /jobs?status__eq=EXECUTING read every job)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'requests' || c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
  {
    version: 4,
    description: 'jobs: typed wait, progress and retry chain instead of the free-form details bag',
    up: (store) => {
      const jobs = store.registered().find((c) => c.def.name === 'jobs') as Collection<Bag> | undefined;
      if (!jobs) return;
      for (const job of [...jobs.scan()]) if ('details' in job) jobs.put(typedJob(job));
    },
  },
  {
    version: 5,
    description: 'jobs indexed by the carrier open work holds and by the cell a running job sets its carrier down on (POST /requests decoded every open job)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
  {
    version: 6,
    description: 'requests and jobs indexed by created_at (GET /requests and GET /jobs, newest first, sorted every record for each page)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'requests' || c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
  {
    version: 7,
    description: 'records written from now on name their fields by shared msgpackr structures kept in meta; older records stay as they are, and a build before this one must not read the store (it would misread the new records)',
    up: () => undefined,
  },
  {
    version: 8,
    description: 'requests and jobs indexed by updated_at (a poll of what changed since an instant read every record)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'requests' || c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
  {
    version: 9,
    description: 'empty boxes indexed by their size (a replenishment or putaway read every box of the site)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'boxes') c.rebuildIndexes();
    },
  },
  {
    version: 10,
    description: 'open jobs indexed by bot (a bot\'s request read every open job of the site)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'jobs') c.rebuildIndexes();
    },
  },
  {
    version: 11,
    description: 'boxes carry their carrier\'s level, and empty boxes are indexed by size and level (a putaway on a site whose boxes had one age read the boxes of the busier levels first)',
    up: (store) => {
      const boxes = store.registered().find((c) => c.def.name === 'boxes') as Collection<Bag> | undefined;
      if (!boxes) return;
      const carriers = store.registered().find((c) => c.def.name === 'carriers') as Collection<Bag> | undefined;
      for (const box of [...boxes.scan()]) {
        const level = carriers?.get(String(box['carrier_id']))?.['level_id'];
        boxes.put({ ...box, level_id: typeof level === 'number' ? level : null });
      }
      // The entries of the index as it was (size and age) are not the index's values now: a put cannot remove them.
      boxes.rebuildIndexes();
    },
  },
  {
    version: 12,
    description: 'ended requests indexed by when they ended (the history pruner read every request to find the old ones)',
    up: (store) => {
      for (const c of store.registered()) if (c.def.name === 'requests') c.rebuildIndexes();
    },
  },
];
