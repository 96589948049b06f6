// GET /jobs filtered by open statuses (an integration's poll of EXECUTING jobs) reads the open
// work in memory: the same pages as the store's status index gives, after commits
// that move jobs between statuses, and no job record decoded from LMDB.
import t from 'tap';
import { Random } from '../../../src/sim/random.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { jobs, newJob, JOB_STATUSES, type JobRecord } from '../../../src/domain/requests/records.js';
import { OpenWork } from '../../../src/domain/requests/open-work.js';
import { collectionSource, executeList, parseListQuery } from '../../../src/domain/list/index.js';
import { JOB_FIELDS } from '../../../src/http/routes/requests.js';
import { jobSource } from '../../../src/domain/requests/list-sources.js';

t.test('lists of open statuses come from memory and match the store', async (t) => {
  const seed = Number(process.env['SEED'] ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed}`);
  const rng = new Random(seed);
  const random = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

  const dir = mkdtempSync(path.join(tmpdir(), 'wh-job-list-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [jobs as never]);
  t.teardown(() => store.close());
  const work = new OpenWork(store, [1, 2]);
  t.teardown(() => work.close());
  let showCreated = false;
  const memory = jobSource(store, () => showCreated, work);
  const plain = collectionSource(store.collection(jobs), { id: null, carrier_id: 'carrier_id', request_id: 'request_id', status: 'status' });
  const visible = (rows: Iterable<JobRecord>) => [...rows].filter((j) => showCreated || j.status !== 'CREATED');
  // Every job in the store's order, filtered and sorted: ties keep that order, whichever way a source finds its rows.
  const reference = { lookup: () => undefined, scan: () => visible(plain.scan()) };

  let n = 0;
  const options = { maxPageSize: 1000, timeZone: 'UTC', defaultSort: '-created_at' };
  const queries = [
    { status__eq: 'EXECUTING' }, { status__in: ['ACCEPTED', 'EXECUTING'] }, { status__in: ['CREATED', 'CANCELLING'] }, { status__eq: 'SUCCEEDED' },
    { status__eq: 'ACCEPTED', sort_by: 'updated_at', size: '3', page: '2' }, { status__in: ['EXECUTING', 'SUCCEEDED'] }, { status__eq: 'EXECUTING', level_id__eq: '1' },
    // One status sorted by creation is read in the open work's creation order: both ways, by
    // page, with a second key, with another filter, and CREATED shown or not.
    { status__eq: 'ACCEPTED', sort_by: 'created_at' }, { status__eq: 'ACCEPTED', size: '2', page: '3' }, { status__eq: 'EXECUTING', sort_by: 'created_at', size: '4', page: '2' },
    { status__eq: 'ACCEPTED', sort_by: '-created_at,-updated_at', size: '3' }, { status__eq: 'ACCEPTED', sort_by: 'created_at,-id' }, { status__eq: 'ACCEPTED', level_id__eq: '2', size: '2', page: '2' },
    { status__eq: 'CREATED' }, { status__eq: 'CANCELLING', size: '1', page: '99' },
  ];
  for (let round = 0; round < 30; round++) {
    await store.write(() => {
      const c = store.collection(jobs);
      for (let i = 0; i < 1 + Math.floor(random() * 5); i++) {
        const existing = n > 0 && random() < 0.5 ? c.get(`J-${Math.floor(random() * n)}`) : undefined;
        // Few distinct instants: ties of the sort keep the store's order.
        const now = Math.floor(random() * 5);
        if (existing) c.put({ ...existing, status: pick(JOB_STATUSES), updated_at: now });
        else c.put(newJob({ id: `J-${n++}`, request_id: 'r', type: 'RETRIEVING', entity_id: 'x', entity_index: -1, seq: n, now }, { status: pick(JOB_STATUSES), level_id: pick([1, 2]) }));
      }
    });
    showCreated = random() < 0.5;
    // The sizes an unsorted page takes its total from: the rows each scan gives.
    if (memory.size !== [...memory.scan()].length || plain.size !== [...plain.scan()].length) {
      t.fail(`round ${round} (seed ${seed}): size ${memory.size} / ${plain.size}, scans ${[...memory.scan()].length} / ${[...plain.scan()].length}`);
      return;
    }
    for (const q of queries) {
      const query = parseListQuery(JOB_FIELDS, q, options);
      const want = executeList(JOB_FIELDS, reference, query);
      const got = executeList(JOB_FIELDS, memory, query);
      // The page read in creation order is the page sorted from all the status's jobs.
      const sorted = executeList(JOB_FIELDS, memory, query, 'sort');
      if (JSON.stringify(got) !== JSON.stringify(sorted)) {
        t.fail(`round ${round} (seed ${seed}) ${JSON.stringify(q)}: in creation order ${JSON.stringify(got.items.map((j) => j.id))}, sorted ${JSON.stringify(sorted.items.map((j) => j.id))}`);
        return;
      }
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.fail(`round ${round} (seed ${seed}) ${JSON.stringify(q)}: memory ${JSON.stringify(got.items.map((j) => j.id))} of ${got.total}, store ${JSON.stringify(want.items.map((j) => j.id))} of ${want.total}`);
        return;
      }
    }
  }
  t.pass(`${queries.length} queries alike over 30 rounds of commits (${n} jobs)`);

  const c = store.collection(jobs);
  let decoded = 0;
  const original = { get: c.get, findBy: c.findBy, scan: c.scan, countBy: c.countBy };
  // A status index's count walks its keys: for the hidden plans, every one on each page.
  let walked = 0;
  c.countBy = (name, value) => (walked++, original.countBy.call(c, name, value));
  c.get = (key) => (decoded++, original.get.call(c, key));
  c.findBy = function* (name, value) {
    for (const j of original.findBy.call(c, name, value)) yield (decoded++, j);
  };
  c.scan = function* () {
    for (const j of original.scan.call(c)) yield (decoded++, j);
  };
  t.teardown(() => Object.assign(c, original));
  const page = executeList(JOB_FIELDS, memory, parseListQuery(JOB_FIELDS, { status__in: ['ACCEPTED', 'EXECUTING'] }, options));
  t.ok(page.total > 0, `${page.total} open jobs listed`);
  t.equal(decoded, 0, 'without decoding a job');
  t.equal(walked, 0, 'nor walking an index to count');
});
