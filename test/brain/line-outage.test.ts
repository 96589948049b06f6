// Bad days on the radio line, end to end against the simulated site: the whole simulator
// stopped (SIGSTOP) long enough for every bot to go offline and then continued, and the
// simulator killed outright. Either way the bots come back into service by themselves, with
// their true state, and work submitted meanwhile is done: no daemon restart is needed.
import t from 'tap';
import { startE2eApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

t.setTimeout(300_000);

interface Bot { id: number; online: boolean }

const get = async (a: AdminApp, p: string) => (await a.admin.request(p)).json;
const online = async (a: AdminApp) => ((await get(a, '/api/v2/bots')) as Bot[]).filter((b) => b.online).length;

/** Confirms every job of the request that waits for a person, until the request ends. */
function work(a: AdminApp, requestId: string, ms = 90_000) {
  return until(`request ${requestId} to end`, async () => {
    for (const job of (await get(a, `/api/v2/jobs?request_id__eq=${requestId}&status__eq=EXECUTING&size=100`)).items) {
      if (job.details.waiting_for === 'trigger') await a.admin.request(`/api/v2/trigger/${job.id}`, { method: 'POST', json: {} });
    }
    const r = (await get(a, `/api/v2/requests?id__eq=${requestId}`)).items[0];
    return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(r.status) ? r : undefined;
  }, ms).catch(async (err: Error) => {
    const jobs = (await get(a, `/api/v2/requests/${requestId}/job-graph`)).nodes.map((n: { type: string; status: string; details: unknown }) => [n.type, n.status, n.details]);
    throw new Error(`${err.message}\njobs: ${JSON.stringify(jobs)}\nbots: ${JSON.stringify(await get(a, '/api/v2/bots'))}`);
  });
}

t.test('a line silent for several seconds: the bots come back into service and the work waiting meanwhile is done', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const pid = a.app.simulator!.pid;
  process.kill(pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone already
    }
  });
  await until('every bot offline', async () => (await online(a)) === 0, 20_000);
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const waiting = await until('the retrieval to say why it waits', async () => {
    const j = (await get(a, `/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=RETRIEVING`)).items[0];
    return j?.details.waiting_for ? j : undefined;
  });
  t.match(waiting.details.reason, /line|answer|offline/, `the reason names the lost link: ${waiting.details.reason}`);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  process.kill(pid, 'SIGCONT');
  await until('every bot online again', async () => (await online(a)) === 3, 20_000);
  const done = await work(a, r.json.id);
  t.equal(done.status, 'SUCCEEDED', 'the fetch posted during the outage is done');
  // The brain's own request for the level whose line came back: reconnect, then refresh.
  const recovery = await until('the recovery request to end', async () => {
    const found = (await get(a, '/api/v2/requests?type__eq=RESUME&size=10')).items.find((x: { level_id: number }) => x.level_id === 1);
    return found?.status === 'SUCCEEDED' ? found : undefined;
  }, 60_000);
  const jobs = (await get(a, `/api/v2/requests/${recovery.id}/job-graph`)).nodes.map((n: { type: string; status: string }) => `${n.type} ${n.status}`);
  t.same(jobs, ['CONNECT_TO_BOTS SUCCEEDED', 'REFRESH_LEVEL SUCCEEDED'], 'CONNECT_TO_BOTS, then REFRESH_LEVEL');
  const events = (await get(a, '/api/v2/events?level_id__eq=1&size=200')).items.map((e: { hex_value: string }) => e.hex_value);
  t.ok(events.includes('0x7009') && events.includes('0x700A'), 'the line went down and came up, each once an event');
});

t.test('a killed simulator is started again like a gateway plugged in again, and the site works on', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const first = a.app.simulator!.pid;
  process.kill(first, 'SIGKILL');
  await until('a new simulator', async () => a.app.simulator!.process !== undefined && a.app.simulator!.pid !== first, 30_000);
  await until('every bot online again', async () => (await online(a)) === 3, 30_000);
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  t.equal((await work(a, r.json.id)).status, 'SUCCEEDED');
  const events = (await get(a, '/api/v2/events?size=200&sort_by=-created_at')).items as { hex_value: string; description: string }[];
  t.ok(events.some((e) => e.hex_value === '0x700B' && /started again/.test(e.description)), 'an event says the simulated site was started again');
  t.ok(events.some((e) => e.hex_value === '0x7009'), 'and that its line was down meanwhile');
});
