// The level runner against the real store (src/brain/worker/level/runner.ts): a pass's
// decisions are written together, and a decision that a commit overtook (a cancel between the
// pass and its write) is dropped alone. Before, one ConflictError ("job ... is CANCELLED and
// cannot become EXECUTING") threw away every start of the pass.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../src/store/store.js';
import { ALL_COLLECTIONS } from '../src/domain/collections.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { Events } from '../src/domain/events/events.js';
import { Inventory } from '../src/domain/inventory/inventory.js';
import { CarrierPlaces } from '../src/domain/inventory/carrier-places.js';
import { OpenWork } from '../src/domain/requests/open-work.js';
import { Requests } from '../src/domain/requests/requests.js';
import { buildSite } from '../src/domain/site/load.js';
import { LevelRunner } from '../src/brain/worker/level/runner.js';
import { takeSnapshot } from '../src/brain/worker/level/snapshot.js';
import { decide } from '../src/brain/worker/policy/dispatch.js';
import type { LevelMotion } from '../src/brain/worker/motion/motion.js';
import { createLogger } from '../src/log/logger.js';
import { e2eSite } from './fixtures/e2e-site.js';

/** The e2e site's level 1 in a real store, with its runner and snapshots; no bot is asked anything (no motion). */
async function level1(t: Test) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-runner-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const site = buildSite(e2eSite());
  const store = await Store.open({ dir }, ALL_COLLECTIONS, MIGRATIONS);
  t.teardown(() => store.close());
  const events = new Events(store, Date.now);
  const inventory = new Inventory({ store, site, now: Date.now, events });
  await inventory.seedFromLayout();
  const requests = new Requests({ store, site, inventory, events, now: Date.now, refresh: () => undefined, externalPicking: () => false, botLevel: () => undefined });
  const work = new OpenWork(store, [1]);
  const carriers = new CarrierPlaces(store);
  t.teardown(() => {
    work.close();
    carriers.close();
  });
  const level = site.level(1)!;
  const motion = { levelId: 1, bots: () => [] } as unknown as LevelMotion;
  const runner: LevelRunner = new LevelRunner({ level, requests, inventory, carriers, motion, logger: createLogger('silent'), now: Date.now, snapshot: () => snapshot() });
  const snapshot = () => takeSnapshot({
    level, work, carriers, findJob: (id) => requests.findJob(id), bots: () => [], unplaced: () => [], line: () => ({ up: true }), paused: () => false, chargeBelow: () => 20, now: Date.now,
  }, runner);
  return { store, requests, inventory, runner, snapshot };
}

t.test('a pass whose jobs wait as they said already writes nothing, not even an empty commit', async (t) => {
  const { store, requests, runner, snapshot } = await level1(t);
  // No bots on the level: the retrieval waits for one, and says so.
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  await runner.apply(decide(snapshot()));
  const retrieving = () => requests.jobsOf(fetch).find((j) => j.type === 'RETRIEVING')!;
  t.match(retrieving().wait, { waiting_for: 'bot' }, 'the first pass wrote why it waits');
  // Counted at the store: a transaction that changes nothing is announced to no one.
  let writes = 0;
  const write = store.write.bind(store);
  store.write = (fn) => (writes++, write(fn));
  for (let i = 0; i < 3; i++) await runner.apply(decide(snapshot()));
  t.equal(writes, 0, 'three passes more, no transaction');
  t.match(retrieving().wait, { waiting_for: 'bot' }, 'the wait is as it was');
});

t.test('a cancel between a pass and its write voids that one decision; the others are written', async (t) => {
  const { requests, runner, snapshot } = await level1(t);
  // Two carriers brought in at balconies: each first waits for a person (ONBOARDING).
  const first = (await requests.create({ type: 'CARRIER_ONBOARDING', carrier_id: 'N1', balcony_id: 1 })).request.id;
  const second = (await requests.create({ type: 'CARRIER_ONBOARDING', carrier_id: 'N2', balcony_id: 2 })).request.id;
  const decisions = decide(snapshot());
  t.same(decisions.map((d) => [d.kind, d.job.request_id]).sort(), [['await_person', first], ['await_person', second]].sort(), 'both wait for a person');
  // The other thread's cancel lands before this pass writes.
  await requests.cancel(first);
  await runner.apply(decisions);
  const status = (id: string) => requests.jobsOf(id).find((j) => j.type === 'ONBOARDING')!.status;
  t.equal(status(first), 'CANCELLED', 'the cancelled one stays cancelled');
  t.equal(status(second), 'EXECUTING', 'the other one waits for its person as decided');
  t.match(requests.jobsOf(second).find((j) => j.type === 'ONBOARDING')!.wait, { waiting_for: 'trigger', reason: /balcony 2/ });
});

t.test('carriers set in front of a planned retrieval that no job moves are set aside by its request, once', async (t) => {
  const { requests, inventory, runner, snapshot } = await level1(t);
  // C3 stands alone at the front of lane 4 when the FETCH is planned: no BUFFERING in its plan.
  const fetch = (await requests.create({ type: 'FETCH', entities: [{ carrier_id: 'C3', balcony_ids: [2] }] })).request.id;
  t.same(requests.jobsOf(fetch).map((j) => j.type).sort(), ['CHECKING', 'RETRIEVING', 'STORING'], 'nothing to set aside when planned');
  // Then (a recovery after a fault, a person's hands) C3 ends at the back and C4 in front of it.
  await requests.write(() => {
    inventory.placeCarrierInWrite('C3', 1, 4, 4);
    inventory.placeCarrierInWrite('C4', 1, 4, 3);
  });
  await runner.apply(decide(snapshot()));
  const jobsNow = requests.jobsOf(fetch);
  const buffering = jobsNow.filter((j) => j.type === 'BUFFERING');
  t.equal(buffering.length, 1, 'one BUFFERING');
  t.match(buffering[0], { carrier_id: 'C4', status: 'ACCEPTED', progress: { in_front_of: 'C3' } }, 'C4 is set aside for C3');
  const back = jobsNow.filter((j) => j.type === 'STORING' && j.carrier_id === 'C4');
  t.match(back, [{ status: 'CREATED', parent_job_ids: [buffering[0]!.id] }], 'and stored again after it is out of the way');
  t.match(jobsNow.find((j) => j.type === 'RETRIEVING')!.wait, { waiting_for: 'carriers_in_front', reason: /C4 set aside first/ });
  // The next pass sees the BUFFERING: nothing is added twice.
  await runner.apply(decide(snapshot()));
  t.equal(requests.jobsOf(fetch).length, jobsNow.length, 'no job added by the next pass');
  const request = requests.request(fetch);
  t.match(request, { status: 'ACCEPTED' }, 'the request is still open, its counters untouched');
});
