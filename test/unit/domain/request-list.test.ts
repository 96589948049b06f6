// GET /requests and GET /jobs are newest first by default (spec 2.15, 2.16): their pages are
// read from the end of the store's index by creation, not sorted from every
// record, and their changes since an instant from the index by change. The same pages as
// sorting every record gives, ties included; a page reads its rows and no more; and a store
// written before the indexes gets them on its next start.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Random } from '../../../src/sim/random.js';
import { Store } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { Collection, type CollectionDef } from '../../../src/store/collection.js';
import { jobs, newJob, requests, REQUEST_STATUSES, JOB_STATUSES, type RequestRecord } from '../../../src/domain/requests/records.js';
import { jobSource, requestSource } from '../../../src/domain/requests/list-sources.js';
import { OpenWork } from '../../../src/domain/requests/open-work.js';
import { executeList, parseListQuery } from '../../../src/domain/list/index.js';
import { JOB_FIELDS, REQUEST_FIELDS } from '../../../src/http/routes/requests.js';

const options = { maxPageSize: 1000, timeZone: 'UTC', defaultSort: '-created_at' };

function request(id: string, fields: Partial<RequestRecord>): RequestRecord {
  return {
    id, type: 'FETCH', status: 'CREATED', priority: 10, counter: 0, level_id: 1, bot_id: null, placing_pos: null, entities: [], warnings: [],
    cancel_requested: false, idempotency_key: null, abort_feedback: null, placements: null, created_at: 0, updated_at: 0, ...fields,
  };
}

async function openStore(t: Test, defs: readonly CollectionDef<never>[], migrations = MIGRATIONS, dir = mkdtempSync(path.join(tmpdir(), 'wh-request-list-'))) {
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, defs, migrations);
  return { store, dir };
}

t.test('pages read through the indexes by creation and by change are the pages sorted from every record, through commits', async (t) => {
  const seed = Number(process.env['SEED'] ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed} (replay: SEED=${seed})`);
  const rng = new Random(seed);
  const random = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const { store } = await openStore(t, [requests as never, jobs as never]);
  t.teardown(() => store.close());
  const work = new OpenWork(store, [1, 2]);
  t.teardown(() => work.close());
  let showCreated = false;
  // The reference: every record in the store's order, filtered and sorted (ties keep that order).
  const sources = {
    requests: { fields: REQUEST_FIELDS, kept: requestSource(store), plain: { lookup: () => undefined, scan: () => store.collection(requests).scan() } },
    jobs: {
      fields: JOB_FIELDS, kept: jobSource(store, () => showCreated, work),
      plain: { lookup: () => undefined, scan: () => [...store.collection(jobs).scan()].filter((j) => showCreated || j.status !== 'CREATED') },
    },
  } as const;
  const queries = [
    {}, { size: '3', page: '2' }, { size: '7', page: '4' }, { page: '999' }, { sort_by: 'created_at', size: '5', page: '2' }, { sort_by: '-created_at,-updated_at', size: '4' },
    { sort_by: 'created_at,-id', size: '6', page: '3' }, { status__eq: 'SUCCEEDED', size: '4', page: '2' }, { status__in: ['CANCELLED', 'ABORTED'], size: '3' },
    { created_at__gte: '1970-01-01T00:00:00.003Z', size: '5', page: '2' }, { type__eq: 'FETCH', size: '2' }, { request_id__eq: 'R-3' }, { carrier_id__in: ['C1', 'C2'], size: '3' },
    // Ranges of creation read from the index: either end, both, with a status, sorted otherwise, empty.
    { created_at__lte: '1970-01-01T00:00:00.002Z', size: '4', page: '2' }, { created_at__gte: '1970-01-01T00:00:00.002Z', created_at__lte: '1970-01-01T00:00:00.005Z', size: '6' },
    { created_at__gte: '1970-01-01T00:00:00.001Z', created_at__lte: '1970-01-01T00:00:00.006Z', sort_by: 'created_at', size: '3', page: '2' },
    { created_at__gte: '1970-01-01T00:00:00.006Z', status__eq: 'SUCCEEDED' }, { created_at__gte: '1970-01-01T00:00:00.001Z', status__in: ['ACCEPTED', 'EXECUTING'], size: '2', page: '2' },
    { created_at__lte: '1970-01-01T00:00:00.006Z', sort_by: '-updated_at,id', size: '5', page: '2' }, { created_at__gte: '1970-01-01T00:00:00.005Z', created_at__lte: '1970-01-01T00:00:00.004Z' },
    { created_at__gte: '1970-01-01T00:00:00.003Z', updated_at__lte: '1970-01-01T00:00:00.006Z', size: '3' },
    // What changed since an instant (an integration's poll), and the order of change.
    { updated_at__gte: '1970-01-01T00:00:00.005Z', size: '4' }, { updated_at__gte: '1970-01-01T00:00:00.003Z', sort_by: 'updated_at', size: '3', page: '2' },
    { sort_by: '-updated_at', size: '5', page: '3' }, { updated_at__lte: '1970-01-01T00:00:00.002Z', status__eq: 'SUCCEEDED', size: '3' },
  ];
  let n = 0;
  let compared = 0;
  for (let round = 0; round < 40; round++) {
    await store.write(() => {
      for (let i = 0; i < 1 + Math.floor(random() * 8); i++) {
        const existing = n > 0 && random() < 0.4 ? Math.floor(random() * n) : undefined;
        // Few distinct instants: many ties, which keep the store's order (the ids', not their numbers').
        const now = Math.floor(random() * 8);
        if (existing !== undefined) {
          const r = store.collection(requests).get(`R-${existing}`)!;
          store.collection(requests).put({ ...r, status: pick(REQUEST_STATUSES), updated_at: now });
          const j = store.collection(jobs).get(`J-${existing}`)!;
          store.collection(jobs).put({ ...j, status: pick(JOB_STATUSES), updated_at: now });
        } else {
          const id = n++;
          store.collection(requests).put(request(`R-${id}`, { status: pick(REQUEST_STATUSES), type: pick(['FETCH', 'FULFILLMENT'] as const), created_at: now, updated_at: now }));
          store.collection(jobs).put(newJob({ id: `J-${id}`, request_id: `R-${id % 5}`, type: 'RETRIEVING', entity_id: 'x', entity_index: 0, seq: id, now },
            { status: pick(JOB_STATUSES), level_id: pick([1, 2]), carrier_id: pick(['C1', 'C2', 'C3', null]) }));
        }
      }
    });
    showCreated = random() < 0.5;
    for (const [name, { fields, kept, plain }] of Object.entries(sources)) {
      for (const q of queries) {
        if (Object.keys(q).some((k) => k.includes('__') && !(k.split('__')[0]! in fields))) continue;
        const query = parseListQuery(fields as typeof REQUEST_FIELDS, q, options);
        const want = executeList(fields as typeof REQUEST_FIELDS, plain as never, query);
        for (const plan of ['auto', 'walk', 'sort'] as const) {
          const got = executeList(fields as typeof REQUEST_FIELDS, kept as never, query, plan);
          compared++;
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            const ids = (p: typeof got) => `${JSON.stringify(p.items.map((r) => r.id))} of ${p.total}`;
            t.fail(`${name} round ${round} (seed ${seed}) ${JSON.stringify(q)} ${plan}: ${ids(got)} against ${ids(want)}`);
            return;
          }
        }
      }
    }
  }
  t.pass(`${compared} pages alike over 40 rounds of commits (${n} requests and jobs)`);
});

t.test('the newest page reads its rows, and counts all of them without reading them', async (t) => {
  const { store } = await openStore(t, [requests as never, jobs as never]);
  t.teardown(() => store.close());
  await store.write(() => {
    for (let i = 0; i < 300; i++) store.collection(requests).put(request(`R-${String(i).padStart(3, '0')}`, { status: 'SUCCEEDED', created_at: 1000 + i, counter: i }));
  });
  const c = store.collection(requests);
  let read = 0;
  const original = { runsBy: c.runsBy, scan: c.scan, get: c.get };
  c.runsBy = function* (name, descending, bounds) {
    for (const run of original.runsBy.call(c, name, descending, bounds)) yield ((read += run.length), run);
  };
  c.scan = function* () {
    for (const r of original.scan.call(c)) yield (read++, r);
  };
  c.get = (key) => (read++, original.get.call(c, key));
  t.teardown(() => Object.assign(c, original));
  const source = requestSource(store);
  const page = executeList(REQUEST_FIELDS, source, parseListQuery(REQUEST_FIELDS, { page: '2', size: '10' }, options));
  t.equal(page.total, 300);
  t.same(page.items.map((r) => r.counter), Array.from({ length: 10 }, (_, i) => 289 - i), 'newest first: the second ten');
  t.equal(read, 20, 'the first two pages read, no more');
  read = 0;
  const succeeded = executeList(REQUEST_FIELDS, source, parseListQuery(REQUEST_FIELDS, { status__eq: 'SUCCEEDED', size: '10' }, options));
  t.same(succeeded.items.map((r) => r.counter), Array.from({ length: 10 }, (_, i) => 299 - i));
  t.equal(read, 10, 'a status most requests have: its first page read from the top, its total from the status index');
  read = 0;
  const recent = executeList(REQUEST_FIELDS, source, parseListQuery(REQUEST_FIELDS, { created_at__gte: new Date(1000 + 280).toISOString(), size: '5', page: '2' }, options));
  t.equal(recent.total, 20, 'the requests since an instant, counted by the index');
  t.same(recent.items.map((r) => r.counter), [294, 293, 292, 291, 290]);
  t.equal(read, 10, 'the first two pages of them read, no more');
  read = 0;
  const span = executeList(REQUEST_FIELDS, source, parseListQuery(REQUEST_FIELDS, { created_at__gte: new Date(1000 + 100).toISOString(), created_at__lte: new Date(1000 + 109).toISOString(), sort_by: 'counter' }, options));
  t.same(span.items.map((r) => r.counter), [100, 101, 102, 103, 104, 105, 106, 107, 108, 109], 'a span of instants, sorted by another field');
  t.equal(read, 10, 'only its rows read');
  await store.write(() => {
    for (const i of [7, 150, 3]) c.put({ ...c.get(`R-${String(i).padStart(3, '0')}`)!, status: 'CANCELLED', updated_at: 5000 + i });
  });
  read = 0;
  const changed = executeList(REQUEST_FIELDS, source, parseListQuery(REQUEST_FIELDS, { updated_at__gte: new Date(5000).toISOString(), sort_by: 'updated_at' }, options));
  t.same(changed.items.map((r) => r.counter), [3, 7, 150], 'what changed since an instant, in the order it changed');
  t.equal(read, 3, 'only those read');
});

t.test('a store written before the indexes gets them on its next start', async (t) => {
  const without = <T>(def: CollectionDef<T>): CollectionDef<T> => ({ ...def, indexes: def.indexes!.filter((i) => i.name !== 'created_at' && i.name !== 'updated_at') });
  const before = MIGRATIONS.filter((m) => m.version <= 5);
  const { store: old, dir } = await openStore(t, [without(requests) as never, without(jobs) as never], before);
  await old.write(() => {
    for (let i = 0; i < 50; i++) {
      old.collection(requests).put(request(`R-${i}`, { created_at: i % 7, counter: i }));
      old.collection(jobs).put(newJob({ id: `J-${i}`, request_id: `R-${i}`, type: 'RETRIEVING', entity_id: 'x', entity_index: 0, seq: i, now: i % 7 }, { status: 'SUCCEEDED' }));
    }
  });
  await old.close();
  // Steps 6 and 8 each rebuild the indexes of requests and jobs: written once each, at the end.
  const proto = Collection.prototype as unknown as { writeIndexes(this: Collection<unknown>): void };
  const writeIndexes = proto.writeIndexes;
  const rebuilt: string[] = [];
  proto.writeIndexes = function (this: Collection<unknown>) {
    rebuilt.push(this.def.name);
    writeIndexes.call(this);
  };
  const { store } = await openStore(t, [requests as never, jobs as never], MIGRATIONS, dir).finally(() => (proto.writeIndexes = writeIndexes));
  t.teardown(() => store.close());
  t.same(rebuilt.sort(), ['jobs', 'requests'], 'each collection\'s index entries written once for the steps that rebuild them');
  const work = new OpenWork(store, [1]);
  t.teardown(() => work.close());
  const runs = [...store.collection(requests).runsBy('created_at', true)];
  t.same(runs.map((run) => run[0]!.created_at), [6, 5, 4, 3, 2, 1, 0], 'every instant, newest first');
  t.equal(runs.flat().length, 50, 'every request indexed');
  t.equal([...store.collection(jobs).runsBy('updated_at', false)].flat().length, 50, 'every job indexed by its change too');
  for (const [name, fields, source] of [['requests', REQUEST_FIELDS, requestSource(store)], ['jobs', JOB_FIELDS, jobSource(store, () => false, work)]] as const) {
    const query = parseListQuery(fields as typeof REQUEST_FIELDS, { size: '8', page: '2' }, options);
    const walked = executeList(fields as typeof REQUEST_FIELDS, source as never, query, 'walk');
    t.same(walked, executeList(fields as typeof REQUEST_FIELDS, source as never, query, 'sort'), `${name}: the second page read by creation is the sorted one`);
    t.equal(walked.items.length, 8);
  }
});
