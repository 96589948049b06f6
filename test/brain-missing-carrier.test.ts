// End to end over HTTPS against the simulated site: a carrier that is not where the store has
// it (taken away by hand). The bot sent for it finds nothing to lift: the job is aborted once,
// with the carrier and the cell in its reason, and not tried again and again (before, each try
// aborted and made another, about once a second, for as long as the daemon ran).
import t from 'tap';
import { startE2eApp } from './helpers/app.js';
import { until } from './helpers/until.js';

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
