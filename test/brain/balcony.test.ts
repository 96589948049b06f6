// End to end over HTTPS against the simulated site (as test/brain/e2e.test.ts, in a daemon of its
// own because it needs the site's first layout): a carrier that one request sets aside from in
// front of its own is taken to a balcony by another request first. It stays there while the
// person works on it, and is set aside only once it is back in storage.
import t from 'tap';
import { startE2eApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { carriers } from '../../src/domain/inventory/records.js';

t.setTimeout(300_000);

let a: AdminApp;

t.before(async () => {
  a = await startE2eApp();
});
t.teardown(() => a.close());

interface Job { id: string; type: string; status: string; carrier_id: string | null; details: Record<string, unknown> }

const post = (p: string, json: unknown) => a.admin.request(p, { method: 'POST', json });
const get = async (p: string) => (await a.admin.request(p)).json;
const nodes = async (id: string) => (await get(`/api/v2/requests/${id}/job-graph`)).nodes as Job[];
const status = async (id: string) => (await get(`/api/v2/requests?id__eq=${id}`)).items[0].status as string;
const kindOf = (id: string) => {
  const c = a.app.store.collection(carriers).get(id)!;
  return a.app.site.kindAt(c.level_id, c.x, c.y);
};
const waitingForPerson = async (id: string) => (await nodes(id)).find((n) => n.status === 'EXECUTING' && n.details['waiting_for'] === 'trigger');

t.test('a carrier at a balcony for one request is not set aside by another until it is back in storage', async (t) => {
  await post('/api/v2/requests', { type: 'PAUSE' });
  await until('paused', async () => (await get('/api/v2/storage_status')).storage_status === 'PAUSED');
  // C1 stands in front of C2 in lane x = 1: fetching C2 sets C1 aside first; fetching C1
  // (priority 20) takes it to balcony 2 before that.
  const front = await post('/api/v2/requests', { type: 'FETCH', priority: 20, entities: [{ carrier_id: 'C1', balcony_ids: [2] }] });
  const behind = await post('/api/v2/requests', { type: 'FETCH', priority: 10, entities: [{ carrier_id: 'C2', balcony_ids: [2] }] });
  t.equal(front.status, 201);
  t.equal(behind.status, 201);
  t.ok((await nodes(behind.json.id)).some((n) => n.type === 'BUFFERING' && n.carrier_id === 'C1'), 'fetching C2 sets C1 aside');
  await post('/api/v2/requests', { type: 'RESUME' });

  const check = await until('C1 at the balcony, checked by a person', () => waitingForPerson(front.json.id), 60_000);
  const aside = await until('the setting aside to say why it waits', async () => {
    const n = (await nodes(behind.json.id)).find((j) => j.type === 'BUFFERING')!;
    return /at a balcony for another request/.test(String(n.details['reason'])) ? n : undefined;
  }, 30_000);
  t.equal(aside.status, 'ACCEPTED', 'the setting aside waits');
  t.equal(kindOf('C1'), 'port', 'C1 stays at the balcony while the person works on it');

  t.equal((await post(`/api/v2/trigger/${check.id}`, {})).status, 200);
  await until('the first request done', async () => (await status(front.json.id)) === 'SUCCEEDED', 60_000);
  const second = await until('C2 at the balcony', () => waitingForPerson(behind.json.id), 90_000);
  t.equal((await post(`/api/v2/trigger/${second.id}`, {})).status, 200);
  await until('the second request done', async () => (await status(behind.json.id)) === 'SUCCEEDED', 90_000);
  t.equal(kindOf('C1'), 'storage', 'C1 home');
  t.equal(kindOf('C2'), 'storage', 'C2 home');
  t.ok((await nodes(behind.json.id)).every((n) => n.status === 'SUCCEEDED'), 'every job of the second request succeeded');
});
