// End to end over HTTPS against the simulated site: a carrier that is not where the store has
// it (taken away by hand). The bot sent for it finds nothing to lift: the job is aborted once,
// with the carrier and the cell in its reason, and not tried again and again (before, each try
// aborted and made another, about once a second, for as long as the daemon ran).
import t from 'tap';
import { startE2eApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { carriers } from '../../src/domain/inventory/records.js';

t.setTimeout(300_000);

interface Job { id: string; type: string; status: string; details: { reason?: string; replaced_by?: string } }

t.test('a carrier missing from its cell aborts its request once, saying where it was looked for', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const get = async (p: string) => (await a.admin.request(p)).json;
  // The store moves C4 to the empty front space of the next lane; the simulated carrier stays where it is.
  await a.app.store.write(() => a.app.inventory.placeCarrierInWrite('C4', 1, 5, 2));
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const done = await until('the fetch to end', async () => {
    const request = (await get(`/api/v2/requests?id__eq=${r.json.id}`)).items[0];
    return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(request.status) ? request : undefined;
  }, 60_000);
  t.equal(done.status, 'ABORTED');
  const retrievals = async () => (await get(`/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=RETRIEVING&size=100`)).items as Job[];
  const [job] = await retrievals();
  t.match(job!.details.reason, /carrier C4 was not found at 5,2/);
  t.notOk(job!.details.replaced_by, 'no other try');
  await new Promise((resolve) => setTimeout(resolve, 3000));
  t.equal((await retrievals()).length, 1, 'still one retrieval a while later');
  const events = (await get(`/api/v2/events?request_id__eq=${r.json.id}&size=100`)).items as { hex_value: string; description?: string }[];
  t.ok(events.some((e) => e.hex_value === '0x6005'), 'a job-aborted event');
});

t.test('a carrier the store misplaces while a bot holds it is found by its tag, and its work goes on', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const get = async (p: string) => (await a.admin.request(p)).json;
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const check = await until('the carrier held at the balcony for its check', async () => {
    const j = (await get(`/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=CHECKING`)).items[0];
    return j?.status === 'EXECUTING' ? j : undefined;
  }, 60_000);
  const held = a.app.store.collection(carriers).get('C4')!;
  // The store loses track: it has C4 in an empty storage space while bot holds it at the balcony.
  await a.app.store.write(() => a.app.inventory.placeCarrierInWrite('C4', 1, 5, 2));
  const back = await until('the store to follow the carrier back to its bot', async () => {
    const c = a.app.store.collection(carriers).get('C4')!;
    return c.x === held.x && c.y === held.y ? c : undefined;
  }, 60_000);
  t.match(back, { x: held.x, y: held.y }, 'read from the carrier\'s tag on the bot');
  t.ok(a.lines.some((l) => /the store follows it/.test(l.msg)), 'and the log says so');
  t.equal((await a.admin.request(`/api/v2/trigger/${check.id}`, { method: 'POST', json: {} })).status, 200);
  const done = await until('the fetch to end', async () => {
    const request = (await get(`/api/v2/requests?id__eq=${r.json.id}`)).items[0];
    return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(request.status) ? request : undefined;
  }, 60_000);
  t.equal(done.status, 'SUCCEEDED', 'the carrier went home');
  const c = a.app.store.collection(carriers).get('C4')!;
  t.equal(a.app.site.kindAt(1, c.x, c.y), 'storage');
});
