// Planning a request reads the open work it needs through the jobs' indexes: whether
// open work holds a candidate carrier (`open_carrier`) and which carriers are being set down in
// front of it (`coming_to`), without decoding every open job of the level, nor every job the
// carrier ever had. Counted in job records decoded, not in time.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import type { Collection } from '../../../src/store/collection.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { boxes, carriers, skus } from '../../../src/domain/inventory/records.js';
import { jobs, newJob, type JobRecord } from '../../../src/domain/requests/records.js';
import { planRequest } from '../../../src/domain/requests/plan.js';
import { ABORT } from '../../../src/domain/requests/abort.js';
import { loadSite } from '../../../src/domain/site/load.js';
import { smallSite, writeSite } from '../../fixtures/small-site.js';

/** The small site and a new store of every collection, both gone when the test ends. */
async function smallSiteStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-plan-reads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, ALL_COLLECTIONS as never, MIGRATIONS);
  t.teardown(() => store.close());
  return { site: loadSite(writeSite(smallSite())), store };
}

/** Counts the records `c` decodes from now on (by key, by index, by scan or by range), until the test ends. */
function countDecodes<T>(t: { teardown(fn: () => void): void }, c: Collection<T>): { n: number } {
  const decoded = { n: 0 };
  const original = { get: c.get, findBy: c.findBy, scan: c.scan, range: c.range };
  const counted = function* (records: Iterable<T>) {
    for (const r of records) {
      decoded.n++;
      yield r;
    }
  };
  c.get = (key) => {
    decoded.n++;
    return original.get.call(c, key);
  };
  c.findBy = (name, value) => counted(original.findBy.call(c, name, value));
  c.scan = () => counted(original.scan.call(c));
  c.range = (start, reverse) => counted(original.range.call(c, start, reverse));
  t.teardown(() => Object.assign(c, original));
  return decoded;
}

t.test('a plan decodes only the jobs that concern its carriers, however much open work there is', async (t) => {
  const { site, store } = await smallSiteStore(t);
  let seq = 0;
  const job = (fields: Partial<JobRecord>) => newJob({ id: `J-${String(++seq).padStart(4, '0')}`, request_id: 'R-other', type: 'RETRIEVING', entity_id: 'x', entity_index: -1, seq, now: seq }, fields);
  await store.write(() => {
    // C4 deep in lane x = 4; C9 on its way onto (4, 3), in front of it.
    store.collection(carriers).put({ id: 'C4', level_id: 1, x: 4, y: 4, updated_at: 0 });
    store.collection(carriers).put({ id: 'C9', level_id: 1, x: 2, y: 0, updated_at: 0 });
    store.collection(carriers).put({ id: 'C5', level_id: 1, x: 1, y: 4, updated_at: 0 });
    store.collection(jobs).put(job({ type: 'STORING', status: 'EXECUTING', carrier_id: 'C9', level_id: 1, target: { x: 4, y: 3 } }));
    // Open work on the level for other carriers, and a long history of C4 and C5.
    for (let i = 0; i < 300; i++) store.collection(jobs).put(job({ status: 'ACCEPTED', carrier_id: `Z${i}`, level_id: 1 }));
    for (let i = 0; i < 300; i++) store.collection(jobs).put(job({ status: 'SUCCEEDED', carrier_id: i % 2 ? 'C4' : 'C5', level_id: 1 }));
    store.collection(jobs).put(job({ status: 'ACCEPTED', carrier_id: 'C5', level_id: 1 }));
  });

  const c = store.collection(jobs);
  const decoded = countDecodes(t, c);
  let next = 10_000;
  const plan = (carrierId: string) => planRequest({
    store, site, now: 1, externalPicking: false, botLevel: () => undefined, nextSeq: () => next++, openWork: (level) => c.countBy('open', level),
  }, 'R-new', { type: 'FETCH', entities: [{ carrier_id: carrierId }] });

  const fetched = plan('C4');
  t.equal(fetched.abort.failed, false, JSON.stringify(fetched.abort.feedback));
  const buffering = fetched.jobs.find((j) => j.type === 'BUFFERING');
  t.equal(buffering?.carrier_id, 'C9', 'the carrier being set down in front is buffered first');
  t.ok(fetched.jobs.find((j) => j.type === 'RETRIEVING' && j.carrier_id === 'C4')?.parent_job_ids.includes(buffering!.id), 'before C4 is fetched');
  t.equal(decoded.n, 1, 'one job decoded: the one setting C9 down, not the 300 open ones nor C4\'s 150 ended ones');

  decoded.n = 0;
  const busy = plan('C5');
  t.same(busy.abort.feedback.map((f) => [f.entity_id, f.error_code]), [['C5', ABORT.carrierBusy.code]], 'open work holds C5: refused');
  t.equal(decoded.n, 0, 'found out without decoding a job');
});

/** An SKU that fits into empty halves only. */
const WRAP = { id: 'P', name: 'Pallet wrap', measurement_unit: 'PIECE', on_empty_sku_action: 'DO_NOTHING', allowed_box_size_capacities: { '1/2': 10 }, balcony_ids: null, deleted_at: null, created_at: 0, updated_at: 0 } as never;

/**
 * A carrier `K<level><x><y>` on each of the 18 spaces of a level (lanes x = 1..6 from y = 2, the
 * front, to y = 4), deepest first, each with a loaded quarter, an empty quarter and an empty
 * half. Box ids go on from `id`; `age` gives each box its updated_at from its id. Call inside a
 * write; returns the last id.
 */
function fillLanes(store: Store, level: number, id: number, age: (id: number) => number): number {
  for (const y of [4, 3, 2]) {
    for (let x = 1; x <= 6; x++) {
      const carrier = `K${level}${x}${y}`;
      store.collection(carriers).put({ id: carrier, level_id: level, x, y, updated_at: 0 });
      for (const [code32, load] of [[0xff000000, { sku_id: 'A', item_count: 1, item_count_max: 4 }], [0x00ff0000, null], [0x0000ffff, null]] as const) {
        store.collection(boxes).put({ id: ++id, carrier_id: carrier, level_id: level, code32, load, updated_at: age(id) });
      }
    }
  }
  return id;
}

/** A putaway of 4 of `WRAP`, planned against the store as `POST /requests` plans it. */
function planPutaway(store: Store, site: ReturnType<typeof loadSite>) {
  let next = 10_000;
  return planRequest({
    store, site, now: 1, externalPicking: false, botLevel: () => undefined, nextSeq: () => next++, openWork: (level) => store.collection(jobs).countBy('open', level),
  }, 'R-new', { type: 'PUTAWAY', entities: [{ sku_id: 'P', quantity: 4 }] });
}

t.test('a putaway reads the empty boxes of the sizes its SKU allows, oldest first, only until the choice is settled', async (t) => {
  const { site, store } = await smallSiteStore(t);
  // Older the deeper.
  await store.write(() => {
    store.collection(skus).put(WRAP);
    fillLanes(store, 1, 0, (id) => id);
  });
  const decoded = countDecodes(t, store.collection(boxes));
  const plan = planPutaway(store, site);
  t.equal(plan.abort.failed, false, JSON.stringify(plan.abort.feedback));
  t.same(plan.placements, [{ box_id: 39, carrier_id: 'K112', sku_id: 'P', quantity: 4 }], 'the oldest empty half at the front of a lane: one carrier move');
  t.equal(decoded.n, 13, 'boxes decoded: the halves of the 12 deeper carriers and the first in front, not the 54 of the site');
});

t.test('a putaway on a site whose boxes have one age reads the level of least open work first, not the busier ones', async (t) => {
  // The small site with a second level like the first, and a balcony on each. Every box has
  // the same age, as a site's are when they are first written: an order of age alone is the
  // order of ids, level 1's boxes first.
  const layout = smallSite();
  layout.levels.push({ ...layout.levels[0]!, id: 2, bots: [{ id: 2, start: { x: 0, y: 1 }, heading: 'E' }] });
  layout.balconies.push({ id: 2, level_id: 2, ports: [{ x: 1, y: 0 }, { x: 2, y: 0 }] });
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-plan-reads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, ALL_COLLECTIONS as never, MIGRATIONS);
  t.teardown(() => store.close());
  const site = loadSite(writeSite(layout));
  let seq = 0;
  await store.write(() => {
    store.collection(skus).put(WRAP);
    fillLanes(store, 2, fillLanes(store, 1, 0, () => 0), () => 0);
    // Level 1 is busier: five open jobs of carriers elsewhere.
    for (let i = 0; i < 5; i++) store.collection(jobs).put(newJob({ id: `J-${++seq}`, request_id: 'R-other', type: 'RETRIEVING', entity_id: 'x', entity_index: -1, seq, now: seq }, { status: 'ACCEPTED', carrier_id: `Z${i}`, level_id: 1 }));
  });
  const decoded = countDecodes(t, store.collection(boxes));
  const plan = planPutaway(store, site);
  t.equal(plan.abort.failed, false, JSON.stringify(plan.abort.feedback));
  t.same(plan.placements, [{ box_id: 93, carrier_id: 'K212', sku_id: 'P', quantity: 4 }], 'the first empty half at the front of a lane of level 2: one carrier move, on the quieter level');
  t.equal(decoded.n, 13, 'boxes decoded: the halves of level 2\'s 12 deeper carriers and the first in front, none of level 1\'s 18');
});

t.test('a bot\'s request decodes only that bot\'s open jobs, however much open work the site has', async (t) => {
  const { site, store } = await smallSiteStore(t);
  let seq = 0;
  const job = (fields: Partial<JobRecord>) => newJob({ id: `J-${String(++seq).padStart(4, '0')}`, request_id: 'R-other', type: 'RETRIEVING', entity_id: 'x', entity_index: -1, seq, now: seq }, fields);
  await store.write(() => {
    // 300 open jobs of bots 2 to 6; bot 7 charging; bot 1's charge ended.
    for (let i = 0; i < 300; i++) store.collection(jobs).put(job({ status: 'EXECUTING', bot_id: 2 + (i % 5), level_id: 1, carrier_id: `Z${i}` }));
    store.collection(jobs).put(job({ type: 'CHARGING', status: 'EXECUTING', bot_id: 7, level_id: 1 }));
    store.collection(jobs).put(job({ type: 'CHARGING', status: 'SUCCEEDED', bot_id: 1, level_id: 1 }));
  });
  const c = store.collection(jobs);
  const decoded = countDecodes(t, c);
  let next = 10_000;
  const plan = (botId: number) => planRequest({
    store, site, now: 1, externalPicking: false, botLevel: () => 1, nextSeq: () => next++, openWork: (level) => c.countBy('open', level),
  }, 'R-new', { type: 'UNCHARGING', bot_id: botId });

  const free = plan(1);
  t.equal(free.abort.failed, false, JSON.stringify(free.abort.feedback));
  t.equal(decoded.n, 0, 'bot 1 has no open job: none decoded, not the 301 open ones of the others nor its ended one');
  decoded.n = 0;
  const busy = plan(7);
  t.same(busy.abort.feedback.map((f) => [f.entity_id, f.error_code]), [['7', ABORT.botBusy.code]], 'bot 7 is charging: refused');
  t.equal(decoded.n, 1, 'its one open job decoded, not the 301');
});

t.test('a request refused for want of stock counts no level\'s open work', async (t) => {
  // Counting a level's open work reads its index; it was done for every request, refused ones
  // too, and took POST /requests from 0.26 to 0.43 ms of main thread under load.
  const { site, store } = await smallSiteStore(t);
  await store.write(() => {
    store.collection(skus).put({ id: 'C', name: 'Wire', measurement_unit: 'METER', on_empty_sku_action: 'DO_NOTHING', allowed_box_size_capacities: null, balcony_ids: null, deleted_at: null, created_at: 0, updated_at: 0 } as never);
  });
  let counted = 0;
  let next = 10_000;
  const plan = planRequest({
    store, site, now: 1, externalPicking: false, botLevel: () => undefined, nextSeq: () => next++,
    openWork: (level) => {
      counted++;
      return store.collection(jobs).countBy('open', level);
    },
  }, 'R-new', { type: 'FULFILLMENT', entities: [{ sku_id: 'C', quantity: 1 }] });
  t.same(plan.abort.feedback.map((f) => [f.entity_id, f.error_code]), [['C', ABORT.insufficientQuantity.code]]);
  t.equal(counted, 0, 'no open work counted');
});
