// The radio lines run in a process of their own. They keep talking while the daemon's main
// thread is held: a long commit, a garbage collection or a burst of requests may hold it for
// longer than the protocol's link_timeout_ms (1,000 ms), and a line read and written from that
// thread would then fall silent on both sides at once, every bot of every level offline. And
// when that process dies, another takes its place and the bots come back.
import t from 'tap';
import { startE2eApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

t.setTimeout(120_000);

/** Holds the calling thread for `ms` without yielding to its event loop. */
function holdThread(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: no timer, no I/O callback, no message runs meanwhile
  }
}

t.test('a main thread held for 3 s: every bot stays online and no line goes down', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const offline: string[] = [];
  const stopBots = a.app.lines!.onBot((e) => {
    if (e.kind === 'offline') offline.push(`bot ${e.bot.id}: ${e.reason}`);
  });
  const down: string[] = [];
  const stopLines = a.app.lines!.onLine((s) => {
    if (!s.up) down.push(`level ${s.level_id}: ${s.reason}`);
  });
  t.teardown(() => {
    stopBots();
    stopLines();
  });
  for (let i = 0; i < 2; i++) {
    holdThread(3000);
    // Whatever the lines heard meanwhile is delivered now, and the link's supervision has had
    // time to act on a silence that ended.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  t.same(offline, [], 'no bot went offline');
  t.same(down, [], 'no line went down');
  const bots = (await a.admin.request('/api/v2/bots')).json as { id: number; online: boolean }[];
  t.equal(bots.filter((b) => b.online).length, 3, 'the three bots are online');
  const events = (await a.admin.request('/api/v2/events?size=200')).json.items as { hex_value: string }[];
  t.notOk(events.some((e) => e.hex_value === '0x7009'), 'no line-down event');
});

t.test('the lines\' process killed: another is started, the lines reopen and the bots come back', async (t) => {
  const a = await startE2eApp();
  t.teardown(() => a.close());
  const first = a.app.lines!.processId()!;
  process.kill(first, 'SIGKILL');
  await until('a new lines process', async () => {
    const pid = a.app.lines!.processId();
    return pid !== undefined && pid !== first;
  }, 30_000);
  await until('every bot online again', async () => (await a.admin.request('/api/v2/bots')).json.filter((b: { online: boolean }) => b.online).length === 3, 30_000);
  const said = a.lines.find((l) => /the radio lines' process ended/.test(l.msg));
  t.match(said, { level: 'error', signal: 'SIGKILL' }, 'an error in the log says the process ended and was replaced');
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] } });
  t.equal(r.status, 201, 'work is taken after it');
  const moving = await until('a bot to take the fetch', async () => {
    const j = (await a.admin.request(`/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=RETRIEVING`)).json.items[0];
    return j?.bot_id ? j : undefined;
  }, 60_000);
  t.ok(moving.bot_id, `bot ${moving.bot_id} took it: commands reach the bots through the new process`);
});

