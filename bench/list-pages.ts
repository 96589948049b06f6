// npm run bench:list-pages [-- --small 10000 --large 300000 --pages 2000]
//
// An integration paging through a list while others write (no request path scans a
// whole collection), over a real store of `--small` and of `--large` records:
//   SKUs    a new SKU committed, then `GET /skus?page=2&size=20` and the same with
//           `measurement_unit__in=PIECE`, through the list engine on the SKU table; the
//           baseline is the table's array of every SKU made again after a write (what the
//           first of those pages cost each time before; the second also sorted the unit's ids);
//   events  an event committed, then `GET /events?page=2&size=20` (newest first, no sort);
//           the baseline is a read of every event, newest first, as the page counted its total
//           before;
//   requests and jobs  a request (with a job) committed, then `GET /requests?page=2&size=20` and
//           `GET /jobs?page=2&size=20` (newest first by `created_at`, the routes' default sort),
//           and the requests created since the thousandth newest (`created_at__gte`); the
//           baseline is a read of every request.
// Prints µs a page and the large / small ratio, which is about 1 when a page's cost is flat.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Store } from '../src/store/store.js';
import { skus, type SkuRecord } from '../src/domain/inventory/records.js';
import { SkuTable } from '../src/domain/inventory/sku-table.js';
import { executeList, parseListQuery } from '../src/domain/list/index.js';
import { SKU_FIELDS } from '../src/http/routes/inventory.js';
import { EVENT_COLLECTIONS, Events, eventRecords } from '../src/domain/events/events.js';
import { EVENT } from '../src/domain/events/catalogue.js';
import { eventSource } from '../src/domain/events/list-source.js';
import { EVENT_FIELDS } from '../src/http/routes/events.js';
import { jobs, newJob, requests, type RequestRecord } from '../src/domain/requests/records.js';
import { jobSource, requestSource } from '../src/domain/requests/list-sources.js';
import { OpenWork } from '../src/domain/requests/open-work.js';
import { JOB_FIELDS, REQUEST_FIELDS } from '../src/http/routes/requests.js';

const { values: args } = parseArgs({ options: { small: { type: 'string', default: '10000' }, large: { type: 'string', default: '300000' }, pages: { type: 'string', default: '2000' } } });
const PAGES = Number(args.pages);
const options = { maxPageSize: 1000, timeZone: 'UTC' };
const QUERIES = { all: { page: '2', size: '20' }, unit: { measurement_unit__in: 'PIECE', page: '2', size: '20' } };

function sku(id: string, n: number): SkuRecord {
  return {
    id, name: `Bench bolt part ${n}`, measurement_unit: 'PIECE', on_empty_sku_action: 'UNASSIGN', balcony_ids: [], image: null, weight: null, height: null, width: null, length: null,
    description: null, barcode: null, total_quantity: 0, max_quantity: 0, load_count: 0, created_at: 0, updated_at: 0, deleted_at: null,
  } as unknown as SkuRecord;
}

/** µs a page (a write before each) of each query, and µs a pass over every SKU, on a store of `size` SKUs. */
async function measure(size: number): Promise<Record<keyof typeof QUERIES | 'pass', number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-sku-pages-'));
  const store = await Store.open({ dir }, [skus as never]);
  for (let from = 0; from < size; from += 10_000) {
    await store.write(() => {
      for (let n = from; n < Math.min(size, from + 10_000); n++) store.collection(skus).put(sku(`S-${String(n).padStart(7, '0')}`, n));
    });
  }
  const table = new SkuTable(store);
  let added = 0;
  const out = { all: 0, unit: 0, pass: 0 };
  for (const name of ['all', 'unit'] as const) {
    const query = parseListQuery(SKU_FIELDS, QUERIES[name], options);
    let spent = 0;
    for (let i = 0; i < PAGES; i++) {
      await store.write(() => store.collection(skus).put(sku(`N-${added++}`, added)));
      const t0 = performance.now();
      executeList(SKU_FIELDS, table, query);
      spent += performance.now() - t0;
    }
    out[name] = (spent * 1000) / PAGES;
  }
  const passes = Math.max(3, Math.round(PAGES / 100));
  let spent = 0;
  for (let i = 0; i < passes; i++) {
    await store.write(() => store.collection(skus).put(sku(`N-${added++}`, added)));
    const t0 = performance.now();
    if (table.scan().toArray().length === 0) throw new Error('no SKU read');
    spent += performance.now() - t0;
  }
  out.pass = (spent * 1000) / passes;
  table.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

/** µs a newest page of events (an event written before each), and µs a read of every event, on a store of `size` events. */
async function measureEvents(size: number): Promise<{ page: number; readAll: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-event-pages-'));
  const store = await Store.open({ dir }, [...EVENT_COLLECTIONS]);
  const events = new Events(store, Date.now);
  for (let from = 0; from < size; from += 10_000) {
    await store.write(() => {
      for (let n = from; n < Math.min(size, from + 10_000); n++) events.record(EVENT.started, `bench ${n}`);
    });
  }
  const source = eventSource(store);
  const query = parseListQuery(EVENT_FIELDS, { page: '2', size: '20' }, options);
  let page = 0;
  let readAll = 0;
  for (let i = 0; i < PAGES; i++) {
    await store.write(() => events.record(EVENT.started, `bench page ${i}`));
    let t0 = performance.now();
    if (executeList(EVENT_FIELDS, source, query).items.length !== 20) throw new Error('a short page');
    page += performance.now() - t0;
    if (i % 100 !== 0) continue;
    t0 = performance.now();
    let read = 0;
    for (const event of store.collection(eventRecords).range(undefined, true)) if (event.id > 0) read++;
    if (read === 0) throw new Error('no event read');
    readAll += (performance.now() - t0) * 100;
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return { page: (page * 1000) / PAGES, readAll: (readAll * 1000) / PAGES };
}

function request(n: number): RequestRecord {
  const at = 1_700_000_000_000 + n * 100;
  return {
    id: `R-${n}`, type: 'FETCH', status: 'SUCCEEDED', priority: 10, counter: n, level_id: 1, bot_id: null, placing_pos: null, entities: [], warnings: [],
    cancel_requested: false, idempotency_key: null, abort_feedback: null, placements: null, created_at: at, updated_at: at,
  };
}

/** Puts request `n` and its one job. Call only inside Store.write. */
function putRequest(store: Store, n: number): void {
  const r = request(n);
  store.collection(requests).put(r);
  store.collection(jobs).put(newJob({ id: `J-${n}`, request_id: r.id, type: 'RETRIEVING', entity_id: 'C-1', entity_index: 0, seq: n, now: r.created_at }, { status: 'SUCCEEDED' }));
}

/** µs a newest page of requests and of jobs (a request written before each), and µs a read of every request, on a store of `size` requests with a job each. */
async function measureRequests(size: number): Promise<{ requests: number; jobs: number; recent: number; readAll: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-bench-request-pages-'));
  const store = await Store.open({ dir }, [requests as never, jobs as never]);
  for (let from = 0; from < size; from += 10_000) {
    await store.write(() => {
      for (let n = from; n < Math.min(size, from + 10_000); n++) putRequest(store, n);
    });
  }
  const work = new OpenWork(store, [1]);
  const sources = { requests: [requestSource(store), REQUEST_FIELDS], jobs: [jobSource(store, () => false, work), JOB_FIELDS] } as const;
  let added = size;
  const out = { requests: 0, jobs: 0, recent: 0, readAll: 0 };
  for (const name of ['requests', 'jobs'] as const) {
    const [source, fields] = sources[name];
    const query = parseListQuery(fields as typeof REQUEST_FIELDS, { page: '2', size: '20' }, { ...options, defaultSort: '-created_at' });
    let spent = 0;
    for (let i = 0; i < PAGES; i++) {
      await store.write(() => putRequest(store, added++));
      const t0 = performance.now();
      const page = executeList(fields as typeof REQUEST_FIELDS, source as ReturnType<typeof requestSource>, query);
      spent += performance.now() - t0;
      if (page.items.length !== 20 || page.items[0]!.id !== `${name === 'requests' ? 'R' : 'J'}-${added - 21}`) throw new Error(`${name}: not the newest second page`);
    }
    out[name] = (spent * 1000) / PAGES;
  }
  let spent = 0;
  for (let i = 0; i < PAGES; i++) {
    await store.write(() => putRequest(store, added++));
    const since = new Date(request(added - 1000).created_at).toISOString();
    const query = parseListQuery(REQUEST_FIELDS, { created_at__gte: since, page: '2', size: '20' }, { ...options, defaultSort: '-created_at' });
    const t0 = performance.now();
    const page = executeList(REQUEST_FIELDS, sources.requests[0], query);
    spent += performance.now() - t0;
    if (page.total !== 1000 || page.items.length !== 20) throw new Error(`recent requests: ${page.total}`);
  }
  out.recent = (spent * 1000) / PAGES;
  const passes = Math.max(3, Math.round(PAGES / 100));
  spent = 0;
  for (let i = 0; i < passes; i++) {
    await store.write(() => putRequest(store, added++));
    const t0 = performance.now();
    if ([...store.collection(requests).scan()].length === 0) throw new Error('no request read');
    spent += performance.now() - t0;
  }
  out.readAll = (spent * 1000) / passes;
  work.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return out;
}

const small = await measure(Number(args.small));
const large = await measure(Number(args.large));
const smallEvents = await measureEvents(Number(args.small));
const largeEvents = await measureEvents(Number(args.large));
const smallRequests = await measureRequests(Number(args.small));
const largeRequests = await measureRequests(Number(args.large));
console.log(`bench:list-pages: a write, then the second page of 20; ${PAGES} pages a query; µs at ${args.small} and ${args.large} records`);
const line = (label: string, a: number, b: number) => console.log(`${label.padEnd(44)} ${a.toFixed(1).padStart(10)} ${b.toFixed(1).padStart(10)}   large / small ${(b / a).toFixed(2)}`);
for (const [name, label] of [['all', 'GET /skus?page=2&size=20'], ['unit', 'the same, measurement_unit__in=PIECE'], ['pass', 'baseline: every SKU read after a write']] as const) {
  line(label, small[name], large[name]);
}
line('GET /events?page=2&size=20', smallEvents.page, largeEvents.page);
line('baseline: every event read', smallEvents.readAll, largeEvents.readAll);
line('GET /requests?page=2&size=20', smallRequests.requests, largeRequests.requests);
line('GET /jobs?page=2&size=20', smallRequests.jobs, largeRequests.jobs);
line('GET /requests?created_at__gte= (1,000 newest)', smallRequests.recent, largeRequests.recent);
line('baseline: every request read', smallRequests.readAll, largeRequests.readAll);
