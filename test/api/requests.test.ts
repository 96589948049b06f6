// Requests and jobs over the real API on a small site without radio lines: creation of every
// kind, the abort body, idempotency, job graphs, reservations, triggers, cancellation, pause and
// resume, the storage status, restart_brain and cancel_all. Bot motion is not involved here:
// jobs that need a bot must say so in their details.
import t from 'tap';
import { OpenWork } from '../../src/domain/requests/open-work.js';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import type { Answer } from '../helpers/client.js';
import { until } from '../helpers/until.js';
import { smallSite, writeSite } from '../fixtures/small-site.js';
import { carriers } from '../../src/domain/inventory/records.js';
import { jobs, requests } from '../../src/domain/requests/records.js';

let a: AdminApp;

t.before(async () => {
  a = await startAdminApp({ WAREHOUSE_SITE: writeSite(smallSite()) });
});
t.teardown(() => a.close());
// A failing flow shows what the app logged at error and above (the brain thread's lines too).
t.afterEach((t) => {
  if (!t.passing()) t.comment(a.lines.filter((l) => l.level === 'error' || l.level === 'fatal').slice(-8).map((l) => JSON.stringify(l).slice(0, 2000)).join('\n'));
});

const post = (p: string, json: unknown, headers: Record<string, string> = {}) => a.admin.request(p, { method: 'POST', json, headers });
const get = async (p: string) => (await a.admin.request(p)).json;
const request = async (id: string) => (await get(`/api/v2/requests?id__eq=${id}`)).items[0];
const graph = async (id: string) => (await get(`/api/v2/requests/${id}/job-graph`)).nodes as { id: string; type: string; status: string; carrier_id: string | null; parent_job_ids: string[]; details: Record<string, unknown> }[];
const sku = async (id: string) => (await get(`/api/v2/skus?id__eq=${id}`)).items[0];

t.test('a fulfillment becomes RETRIEVING, PICKING, STORING and PACKING, and reserves its items', async (t) => {
  const before = await sku('A');
  const r = await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 2 }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  t.equal(r.json.type, 'FULFILLMENT');
  t.equal(r.json.priority, 10, 'priority defaults to 10');
  t.equal(r.json.entities[0].total_quantity, 2);
  const nodes = await graph(r.json.id);
  t.same(nodes.map((n) => n.type).sort(), ['PACKING', 'PICKING', 'RETRIEVING', 'STORING']);
  const by = (type: string) => nodes.find((n) => n.type === type)!;
  t.equal(by('RETRIEVING').carrier_id, 'C1', 'the shallow carrier with the stock: one move');
  t.same(by('PICKING').parent_job_ids, [by('RETRIEVING').id]);
  t.same(by('STORING').parent_job_ids, [by('PICKING').id]);
  t.same(by('PACKING').parent_job_ids, [by('PICKING').id]);
  t.equal(by('RETRIEVING').status, 'ACCEPTED');
  t.equal(by('PICKING').status, 'CREATED');
  const after = await sku('A');
  t.equal(after.fulfillable, before.fulfillable - 2, 'fulfillable drops by the reservation');
  t.equal(after.total_quantity, before.total_quantity, 'nothing booked yet');
  const waiting = await until('the job to say why it waits', async () => {
    const job = (await get(`/api/v2/jobs?id__eq=${by('RETRIEVING').id}`)).items[0];
    return job.details.waiting_for ? job : undefined;
  });
  t.equal(waiting.details.waiting_for, 'bot');
  t.match(waiting.details.reason, /bot/);
  t.equal((await request(r.json.id)).status, 'ACCEPTED');

  t.equal((await a.admin.request('/api/v2/sku/A', { method: 'DELETE' })).status, 409, 'an SKU with open work cannot be deleted');
  const cancelled = await post(`/api/v2/requests/${r.json.id}/cancel`, {});
  t.equal(cancelled.status, 200);
  t.equal(cancelled.json.status, 'CANCELLED');
  t.ok((await graph(r.json.id)).every((n) => n.status === 'CANCELLED'), 'nothing moved, so everything is cancelled, STORING too');
  t.equal((await sku('A')).fulfillable, before.fulfillable, 'the reservation is released');
  t.equal((await post(`/api/v2/requests/${r.json.id}/cancel`, {})).status, 409, 'a cancelled request cannot be cancelled again');
});

t.test('a deep carrier: the carriers in front are buffered first and stored back after', async (t) => {
  const r = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C3' }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const nodes = await graph(r.json.id);
  const buffering = nodes.filter((n) => n.type === 'BUFFERING');
  t.same(buffering.map((n) => n.carrier_id).sort(), ['C1', 'C2']);
  const retrieving = nodes.find((n) => n.type === 'RETRIEVING')!;
  t.same([...retrieving.parent_job_ids].sort(), buffering.map((n) => n.id).sort());
  t.same(nodes.filter((n) => n.type === 'STORING').map((n) => n.carrier_id).sort(), ['C1', 'C2', 'C3']);
  t.ok(nodes.some((n) => n.type === 'CHECKING' && n.parent_job_ids[0] === retrieving.id));
  const busy = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C3' }] });
  t.equal(busy.status, 409);
  t.equal(busy.json.entity_feedback[0].error_code, '0x500C');
  await post(`/api/v2/requests/${r.json.id}/cancel`, {});
});

t.test('requests the warehouse cannot do answer the abort body and are kept as ABORTED', async (t) => {
  const r = await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 50 }, { sku_id: 'NOPE', quantity: 1 }] });
  t.equal(r.status, 409);
  t.same(Object.keys(r.json).sort(), ['detail', 'entity_feedback', 'request_id']);
  t.same(r.json.entity_feedback.map((f: { error_code: string }) => f.error_code), ['0x5002', '0x5001']);
  t.match(r.json.entity_feedback[0].human_string, /asked 50/);
  t.equal((await request(r.json.request_id)).status, 'ABORTED');
  const fetch = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C404' }] });
  t.equal(fetch.json.entity_feedback[0].error_code, '0x5003');
  const replenish = await post('/api/v2/requests', { type: 'REPLENISHMENT', entities: [{ sku_id: 'B', quantity: 1 }] });
  t.equal(replenish.json.entity_feedback[0].error_code, '0x5005', 'B has no room and no empty box takes it');
  const events = await get(`/api/v2/events?request_id__eq=${r.json.request_id}`);
  t.equal(events.items[0].hex_value, '0x6002');
});

t.test('requests made one after another have ids in the order they were made (each new one lands at the end of the store\'s trees)', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push((await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'NOPE', quantity: 1 }] })).json.request_id as string);
  for (const id of ids) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a uuid of version 7');
  t.same([...ids].sort(), ids, 'key order is creation order');
});

t.test('bad bodies get the validation error and create nothing', async (t) => {
  const count = (await get('/api/v2/requests?size=1')).total;
  for (const body of [
    { type: 'TELEPORT' },
    { type: 'FULFILLMENT', entities: [] },
    { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 0 }] },
    { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 1, colour: 'red' }] },
    { type: 'PAUSE', level_id: 'x' },
    { type: 'FULFILLMENT', priority: 'high', entities: [{ sku_id: 'A', quantity: 1 }] },
  ]) {
    const r = await post('/api/v2/requests', body);
    t.equal(r.status, 422, JSON.stringify(body));
    t.ok(Array.isArray(r.json.detail));
  }
  const garbage = await a.admin.request('/api/v2/requests', { method: 'POST', body: '{"type":', headers: { 'content-type': 'application/json' } });
  t.equal(garbage.status, 400);
  t.equal((await get('/api/v2/requests?size=1')).total, count, 'nothing was created');
});

t.test('an Idempotency-Key makes a retried post answer the first request again', async (t) => {
  const body = { type: 'FETCH', priority: 20, entities: [{ carrier_id: 'C4' }] };
  const first = await post('/api/v2/requests', body, { 'idempotency-key': 'order-77' });
  t.equal(first.status, 201);
  const again: Answer = await post('/api/v2/requests', body, { 'idempotency-key': 'order-77' });
  t.equal(again.status, 200);
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(again.json.id, first.json.id);
  t.equal((await get(`/api/v2/jobs?request_id__eq=${first.json.id}&size=100`)).total, (await graph(first.json.id)).filter((n) => n.status !== 'CREATED').length);
  t.equal(first.json.priority, 20);
  await post(`/api/v2/requests/${first.json.id}/cancel`, {});
});

t.test('pause and resume change the storage status; jobs wait while paused', async (t) => {
  t.equal((await get('/api/v2/storage_status')).storage_status, 'RUNNING');
  const pause = await post('/api/v2/requests', { type: 'PAUSE' });
  t.equal(pause.status, 201);
  await until('PAUSED', async () => (await get('/api/v2/storage_status')).storage_status === 'PAUSED');
  t.equal((await request(pause.json.id)).status, 'SUCCEEDED');
  const fetch = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C4' }] });
  const job = await until('the paused reason', async () => {
    const j = (await get(`/api/v2/jobs?request_id__eq=${fetch.json.id}&type__eq=RETRIEVING`)).items[0];
    return j?.details.waiting_for === 'system_paused' ? j : undefined;
  });
  t.match(job.details.reason, /paused/);
  await post('/api/v2/requests', { type: 'RESUME' });
  await until('RUNNING', async () => (await get('/api/v2/storage_status')).storage_status === 'RUNNING');
  await post(`/api/v2/requests/${fetch.json.id}/cancel`, {});
});

t.test('carrier onboarding: a person places the carrier, the trigger puts it in the inventory, then it waits for a bot', async (t) => {
  const r = await post('/api/v2/requests', { type: 'CARRIER_ONBOARDING', carrier_id: 'C9', balcony_id: 1 });
  t.equal(r.status, 201, JSON.stringify(r.json));
  t.equal(r.json.type, 'ONBOARD');
  t.equal(a.app.store.collection(requests).get(r.json.id)?.input_type, 'CARRIER_ONBOARDING');
  const onboarding = await until('the person job to wait', async () => {
    const j = (await get(`/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=ONBOARDING`)).items[0];
    return j?.status === 'EXECUTING' ? j : undefined;
  });
  t.equal(onboarding.details.waiting_for, 'trigger');
  t.equal(onboarding.balcony_id, 1);

  t.equal((await post(`/api/v2/trigger/${onboarding.id}`, { colour: 1 })).status, 422, 'no extra properties');
  t.equal((await post(`/api/v2/trigger/${onboarding.id}`, { selected_quantity: 0 })).status, 422);
  t.equal((await post(`/api/v2/trigger/${onboarding.id}`, { selected_entity_id: 'C8' })).status, 422, 'scanned the wrong carrier');
  t.equal((await post('/api/v2/trigger/nope', {})).status, 404);
  const ok = await post(`/api/v2/trigger/${onboarding.id}`, { selected_entity_id: 'C9' });
  t.equal(ok.status, 200);
  t.same(ok.json, {});
  t.equal((await post(`/api/v2/trigger/${onboarding.id}`, {})).status, 409, 'a finished job cannot be triggered again');
  // An empty carrier at a balcony has no inventory row; the store has its place.
  t.match(a.app.store.collection(carriers).get('C9'), { level_id: 1, x: 1, y: 0 });
  const storing = await until('STORING to wait for a bot', async () => {
    const j = (await get(`/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=STORING`)).items[0];
    return j?.details.waiting_for === 'bot' ? j : undefined;
  });
  t.equal(storing.status, 'ACCEPTED');
  t.equal((await post(`/api/v2/trigger/${storing.id}`, {})).status, 409, 'a bot job cannot be triggered');
  t.equal((await request(r.json.id)).status, 'EXECUTING');
});

t.test('GET /jobs hides CREATED plans unless api.jobs.showCreated', async (t) => {
  const r = await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'B', quantity: 1 }] });
  const hidden = await get(`/api/v2/jobs?request_id__eq=${r.json.id}&size=100`);
  t.ok(hidden.items.every((j: { status: string }) => j.status !== 'CREATED'));
  await a.admin.request('/api/v2/settings/api.jobs.showCreated', { method: 'PATCH', json: { value_json: true } });
  const shown = await get(`/api/v2/jobs?request_id__eq=${r.json.id}&size=100`);
  t.equal(shown.total, (await graph(r.json.id)).length);
  t.ok(shown.items.some((j: { status: string }) => j.status === 'CREATED'));
  await a.admin.request('/api/v2/settings/api.jobs.showCreated', { method: 'DELETE' });
  const sorted = await get('/api/v2/requests?size=100');
  const times = sorted.items.map((x: { created_at_utc: string }) => x.created_at_utc);
  t.same(times, [...times].sort().reverse(), 'newest first by default');
});

t.test('cancel_all cancels open logistic requests and restarts the brain; restart_brain answers', async (t) => {
  const restart = await post('/api/v2/restart_brain?timeout=30', {});
  t.equal(restart.status, 200);
  t.equal(restart.json.status, 'restarted');
  const r = await post('/api/v2/requests/cancel_all', {});
  t.equal(r.status, 200);
  t.equal(r.json.status, 'success');
  t.ok(r.json.cancelled_count >= 1);
  t.equal(r.json.brain_restart, 'restarted');
  t.equal(r.json.manual_restart_required, false);
  const open = await get('/api/v2/requests?type__in=FULFILLMENT&type__in=FETCH&type__in=REPLENISHMENT&status__in=ACCEPTED&status__in=EXECUTING&status__in=CREATED');
  t.equal(open.total, 0);
  const none = await post('/api/v2/requests/cancel_all', {});
  t.equal(none.json.brain_restart, 'not_required');
});

t.test('system control requests check their bots and levels', async (t) => {
  const unknown = await post('/api/v2/requests', { type: 'RECHARGE', bot_id: 99 });
  t.equal(unknown.status, 409);
  t.equal(unknown.json.entity_feedback[0].error_code, '0x5006');
  const charge = await post('/api/v2/requests', { type: 'RECHARGE', bot_id: 1 });
  t.equal(charge.status, 409, 'the small site has no charger');
  t.equal(charge.json.entity_feedback[0].error_code, '0x5013');
  const onboard = await post('/api/v2/requests', { type: 'ONBOARD', bot_id: 1, level_id: 1, balcony_id: 1 });
  t.equal(onboard.json.entity_feedback[0].error_code, '0x5010', 'bot 1 is on level 1 already');
  const rfid = await post('/api/v2/requests', { type: 'RFID_WRITE', level_id: 1, tags: [{ x: 0, y: 5 }] });
  t.equal(rfid.json.entity_feedback[0].error_code, '0x5012');
  const off = await post('/api/v2/requests', { type: 'OFFBOARD', bot_id: 1, balcony_id: 1 });
  t.equal(off.status, 201);
  t.same((await graph(off.json.id)).map((n) => n.type), ['OFFBOARDING', 'OFFBOARDING_BC', 'OFFBOARDING_BD']);
  const del = await a.admin.request('/api/v2/bot?bot_idxs=1', { method: 'DELETE' });
  t.equal(del.status, 422, 'a bot with an open request is not deleted');
  await post(`/api/v2/requests/${off.json.id}/cancel`, {});
  const ok = await a.admin.request('/api/v2/bot?bot_idxs=1', { method: 'DELETE' });
  t.equal(ok.status, 200);
  t.equal(ok.json.success, true);
  const gone = await post('/api/v2/requests', { type: 'UNCHARGING', bot_id: 1 });
  t.equal(gone.json.entity_feedback[0].error_code, '0x5006', 'a deleted bot is unknown');
});

t.test('replenishment and putaway choose boxes with room; putaway answers where it goes', async (t) => {
  const before = await sku('A');
  const r = await post('/api/v2/requests', { type: 'REPLENISHMENT', entities: [{ sku_id: 'A', quantity: 9 }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const refills = (await graph(r.json.id)).filter((n) => n.type === 'REFILLING');
  t.ok(refills.length >= 1);
  t.equal((await sku('A')).replenishable, before.replenishable - 9, 'replenishable drops by the promised room');
  await post(`/api/v2/requests/${r.json.id}/cancel`, {});
  t.equal((await sku('A')).replenishable, before.replenishable);

  t.equal((await post('/api/v2/requests', { type: 'PUTAWAY', entities: [{ sku_id: 'C', quantity: 5 }] })).json.entity_feedback[0].error_code, '0x5005', 'no box size allowed for C yet');
  const patched = await a.admin.request('/api/v2/sku/C', { method: 'PATCH', json: { allowed_box_size_capacities: { '1/2': 10, '1/4': 10, '1/8': 10 } } });
  t.equal(patched.status, 200, JSON.stringify(patched.json));
  const put = await post('/api/v2/requests', { type: 'PUTAWAY', entities: [{ sku_id: 'C', quantity: 5 }] });
  t.equal(put.status, 201, JSON.stringify(put.json));
  t.equal(put.json.type, 'REPLENISHMENT');
  t.equal(a.app.store.collection(requests).get(put.json.id)?.input_type, 'PUTAWAY', 'stored as the spec\'s type, with the type posted beside it');
  t.equal(put.json.input_type, 'PUTAWAY', 'and answered beside it, so a client sees what it posted');
  t.equal((await a.admin.request(`/api/v2/requests?id__eq=${put.json.id}`)).json.items[0].input_type, 'PUTAWAY', 'in the list too');
  t.same(put.json.placements, [{ box_id: 2, carrier_id: 'C1', sku_id: 'C', quantity: 5 }], 'the empty box on C1');
  await post(`/api/v2/requests/${put.json.id}/cancel`, {});
});

t.test('with external picking, missing quantities are warnings and a PICKING_ALERT job', async (t) => {
  await a.admin.request('/api/v2/settings/picking.external.enabled', { method: 'PATCH', json: { value_json: true } });
  t.teardown(() => a.admin.request('/api/v2/settings/picking.external.enabled', { method: 'DELETE' }));
  const stock = (await sku('B')).fulfillable;
  const r = await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'B', quantity: stock + 4 }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  t.match(r.json.warnings, [{ code: '0x5101', entity_id: 'B', missing_quantity: 4 }]);
  const nodes = await graph(r.json.id);
  const alert = nodes.find((n) => n.type === 'PICKING_ALERT')!;
  t.ok(alert);
  t.ok(nodes.find((n) => n.type === 'PACKING')!.parent_job_ids.includes(alert.id), 'packing waits for the alert too');
  const waiting = await until('the alert to wait for a person', async () => {
    const j = (await get(`/api/v2/jobs?id__eq=${alert.id}`)).items[0];
    return j.status === 'EXECUTING' ? j : undefined;
  });
  t.equal(waiting.quantity, 4);
  t.equal((await post(`/api/v2/trigger/${alert.id}`, { selected_quantity: 4 })).status, 200);
  const entity = (await request(r.json.id)).entities[0];
  t.equal(entity.succeeded_quantity, 4, 'the alert is part of its SKU\'s entity: what was picked outside counts');
  await post(`/api/v2/requests/${r.json.id}/cancel`, {});
});

t.test('a carrier a running store sets down in front of another is buffered first when that one is fetched', async (t) => {
  // C9 waits at balcony 1 for a bot to store it (the onboarding flow above). Here a bot has
  // just taken that job to a space in front of C4, which is first moved deeper in its lane.
  const storing = (await get('/api/v2/jobs?carrier_id__eq=C9&type__eq=STORING&status__eq=ACCEPTED')).items[0];
  t.ok(storing, 'the onboarded carrier waits to be stored');
  await a.app.requests.write(() => {
    a.app.inventory.placeCarrierInWrite('C4', 1, 4, 4);
    a.app.requests.moveJob(a.app.requests.job(storing.id), 'EXECUTING', { bot_id: 1, target: { x: 4, y: 2 } });
  });
  const r = await post('/api/v2/requests', { type: 'FETCH', entities: [{ carrier_id: 'C4' }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const nodes = await graph(r.json.id);
  const buffering = nodes.find((n) => n.type === 'BUFFERING');
  t.equal(buffering?.carrier_id, 'C9', 'the carrier on its way into the lane is set aside first');
  t.ok(nodes.find((n) => n.type === 'RETRIEVING')!.parent_job_ids.includes(buffering!.id), 'and C4 is fetched after it');

  // A second onboarding at the same balcony takes the position C9 does not hold.
  const onboard = await post('/api/v2/requests', { type: 'CARRIER_ONBOARDING', carrier_id: 'C7', balcony_id: 1 });
  t.equal(onboard.status, 201, JSON.stringify(onboard.json));
  const person = await until('the second onboarding to wait for its trigger', async () => {
    const j = (await get(`/api/v2/jobs?request_id__eq=${onboard.json.id}&type__eq=ONBOARDING`)).items[0];
    return j?.status === 'EXECUTING' ? j : undefined;
  });
  t.equal((await post(`/api/v2/trigger/${person.id}`, {})).status, 200);
  t.match(a.app.store.collection(carriers).get('C7'), { level_id: 1, x: 2, y: 0 }, 'on the free position');
  await post(`/api/v2/requests/${r.json.id}/cancel`, {});
});

t.test('the open work in memory follows every commit: a change at once, a job that ends leaves it', async (t) => {
  const r = await post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 1 }] });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const requests = a.app.requests;
  const work = new OpenWork(a.app.store, a.app.site.levels.map((l) => l.id));
  t.teardown(() => work.close());
  const job = [...work.allJobs()].find((j) => j.request_id === r.json.id && j.type === 'RETRIEVING')!;
  t.ok(job, 'the retrieval is open');
  t.ok(work.jobsOn(job.level_id ?? 0).some((j) => j.id === job.id), 'and on its level');
  const levels: number[] = [];
  const stop = work.onChange((change) => levels.push(...change.levels));
  t.teardown(stop);
  // A field the brain's thread (running here, without bots) leaves alone.
  const before = job.is_selectable;
  await requests.write(() => requests.updateJob(requests.job(job.id), { is_selectable: !before }));
  t.equal(work.job(job.id)?.is_selectable, !before, 'seen as soon as the write is durable');
  t.ok(levels.includes(job.level_id ?? 0), 'its level is named as changed');
  // What another thread commits arrives as a notice of the keys it changed.
  await a.app.store.write(() => a.app.store.collection(jobs).put({ ...requests.job(job.id), is_selectable: before }));
  a.app.store.heard({ jobs: [job.id] });
  t.equal(work.job(job.id)?.is_selectable, before);
  t.equal(work.request(r.json.id)?.id, r.json.id, 'the request is open');
  t.equal((await post(`/api/v2/requests/${r.json.id}/cancel`, {})).status, 200);
  t.equal(work.job(job.id), undefined, 'a cancelled job leaves the open work');
  t.equal(work.request(r.json.id), undefined, 'and its request with it');
});
