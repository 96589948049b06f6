// Link health end to end, with the daemon on a real serial device path: a
// udev-style /dev/serial/by-id symlink to the simulator's pty, the way a site names its
// gateways. The simulator runs apart from the daemon (as a gateway does), and its line is cut
// (the pty closes: `unplug`) while the symlink is removed, as udev removes it when the USB
// adapter goes; the gateway comes back on a new pty and the symlink is made again, pointing
// at it. Then the simulator's radio knobs silence every bot while the device stays open (a
// gateway that is powered but says nothing). Each time, one 0x7009 naming the level, the
// device and why, however many times the device was retried; `line_up: false` for every bot
// of the level in GET /api/v2/bots and the line down in status.json (what `warehouse-controller
// status` reads); the level's jobs wait for the line;
// then one 0x700A naming the level and the device, and the work is done.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { e2eSite } from '../fixtures/e2e-site.js';
import { startSimulator } from '../../src/sim/process.js';

t.setTimeout(300_000);

interface Bot { id: number; level_id: number; online: boolean; line_up: boolean }
interface Event { hex_value: string; description: string; level_id: number | null; severity: number }

const get = async (a: AdminApp, p: string) => (await a.admin.request(p)).json;
const bots = async (a: AdminApp) => (await get(a, '/api/v2/bots')) as Bot[];
const lineEvents = async (a: AdminApp, hex: string) =>
  ((await get(a, '/api/v2/events?level_id__eq=1&size=200&sort_by=+created_at')).items as Event[]).filter((e) => e.hex_value === hex);
/**
 * Level 1's line as status.json (what `warehouse-controller status` shows) has it, once the
 * file was written after `since` (epoch ms): the one written at start may still be there.
 */
const statusLine = (a: AdminApp, since: number) => {
  try {
    const status = JSON.parse(readFileSync(path.join(a.stateDir, 'status.json'), 'utf8')) as { written_at: string; lines: { level_id: number; up: boolean; reason: string | null }[] };
    return Date.parse(status.written_at) > since ? status.lines.find((l) => l.level_id === 1) : undefined;
  } catch {
    return undefined; // being written
  }
};

/** Confirms every job of the request that waits for a person, until the request ends. */
function work(a: AdminApp, requestId: string) {
  return until(`request ${requestId} to end`, async () => {
    for (const job of (await get(a, `/api/v2/jobs?request_id__eq=${requestId}&status__eq=EXECUTING&size=100`)).items) {
      if (job.details.waiting_for === 'trigger') await a.admin.request(`/api/v2/trigger/${job.id}`, { method: 'POST', json: {} });
    }
    const r = (await get(a, `/api/v2/requests?id__eq=${requestId}`)).items[0];
    return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(r.status) ? r : undefined;
  }, 120_000);
}

/** Posts a FETCH of `carrier` to balcony 2 and waits until its retrieval says why it waits. */
async function fetchWaiting(t: Test, a: AdminApp, carrier: string) {
  const r = await a.admin.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: carrier, balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const job = await until('the retrieval to say why it waits', async () => {
    const j = (await get(a, `/api/v2/jobs?request_id__eq=${r.json.id}&type__eq=RETRIEVING`)).items[0];
    return j?.details.waiting_for ? j : undefined;
  }, 60_000);
  return { id: r.json.id as string, job };
}

t.test('a gateway on a by-id symlink: cut and restored, then silenced and heard again', async (t) => {
  const byId = mkdtempSync('/dev/shm/wh-by-id-');
  const device = path.join(byId, 'usb-Warehouse_Radio_Gateway_L1-if00-port0');
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-line-'));
  t.teardown(() => {
    rmSync(byId, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  const simSite = path.join(dir, 'sim-site.json');
  writeFileSync(simSite, JSON.stringify(e2eSite()));
  const site = e2eSite();
  site.levels[0]!.serial_device = device;
  const siteFile = path.join(dir, 'site.json');
  writeFileSync(siteFile, JSON.stringify(site));

  const sim = await startSimulator({ site: simSite, seed: 20, onLog: () => undefined });
  t.teardown(() => sim.stop());
  symlinkSync(sim.devices.get(1)!, device);
  const a = await startAdminApp({ WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on' });
  t.teardown(() => a.close());
  await until('three bots online, their line up', async () => (await bots(a)).filter((b) => b.online && b.line_up).length === 3, 60_000);
  t.same(await lineEvents(a, '0x7009'), [], 'a start whose gateway answers raises no line event');

  // The cable is pulled: the pty closes and udev removes the by-id link.
  unlinkSync(device);
  const cutAt = Date.now();
  const newPath = await sim.unplug(1, 200);
  await until('every bot of the level says its line is down', async () => (await bots(a)).every((b) => !b.line_up), 60_000);
  const failures = () => (a.app.lines!.stats()[1] as { transport: { failures: number } }).transport.failures;
  await until('several attempts to reopen the device, with backoff', async () => failures() >= 4, 60_000);
  const down = await lineEvents(a, '0x7009');
  t.equal(down.length, 1, `one line-down event over ${failures()} failed opens: ${JSON.stringify(down)}`);
  t.equal(down[0]?.severity, 50, 'an error');
  t.match(down[0]?.description, 'radio line of level 1 down on ' + device, 'it names the level and the device');
  t.match(down[0]?.description, /: device unavailable: (device closed|ENOENT|EIO)/, 'and the OS\'s reason');
  const lost = await until('each bot lost, as an echo of the line', async () => {
    const e = (await lineEvents(a, '0x7002')).filter((x) => x.description.includes('radio line of level 1 is down'));
    return e.length >= 3 ? e : undefined;
  }, 60_000);
  t.equal(lost.length, 3, 'each bot\'s 0x7002 says its line is down');
  const shown = await until('status.json to show the line down', async () => {
    const line = statusLine(a, cutAt);
    return line?.up === false ? line : undefined;
  }, 30_000);
  t.match(shown, { up: false, reason: /device unavailable/ }, 'status.json has the line down, and why');

  const fetch1 = await fetchWaiting(t, a, 'C4');
  t.equal(fetch1.job.details.waiting_for, 'line', 'the retrieval waits for the line');
  t.match(fetch1.job.details.reason, new RegExp(`radio line of level 1 is down: device unavailable: .*\\(device ${device.replace(/[.]/g, '\\.')}\\)`), `and says which and why: ${fetch1.job.details.reason}`);

  // The adapter is back, on whatever tty it got: udev makes the link again.
  symlinkSync(newPath, device);
  await until('three bots online, their line up', async () => (await bots(a)).filter((b) => b.online && b.line_up).length === 3, 60_000);
  const up = await until('the line-up event', async () => {
    const e = await lineEvents(a, '0x700A');
    return e.length > 0 ? e : undefined;
  });
  // On a failure, every line event of the level in order: a flap says when and why.
  const history = async () => JSON.stringify(((await get(a, '/api/v2/events?level_id__eq=1&size=200&sort_by=+created_at')).items as Event[])
    .filter((e) => e.hex_value === '0x7009' || e.hex_value === '0x700A').map((e) => `${e.hex_value} ${e.description}`));
  t.equal(up.length, 1, `one line-up event: ${await history()}`);
  t.match(up[0]?.description, `radio line of level 1 up again on ${device}`, 'it names the level and the device');
  t.equal((await lineEvents(a, '0x7009')).length, 1, `still the one line-down event: ${await history()}`);
  t.equal((await work(a, fetch1.id)).status, 'SUCCEEDED', 'the fetch posted during the outage is done once the line is back');

  // The gateway stays plugged in but its radio says nothing: every bot silent.
  await sim.setKnobs({ silent_nodes: [1, 2, 3] }, 1);
  await until('every bot of the level says its line is down', async () => (await bots(a)).every((b) => !b.line_up && !b.online), 60_000);
  const silent = await until('a second line-down event', async () => {
    const e = await lineEvents(a, '0x7009');
    if (e.length > 2) throw new Error(`more than two line-down events: ${await history()}`);
    return e.length === 2 ? e : undefined;
  });
  t.match(silent[1]?.description, `radio line of level 1 down on ${device}: no node answers`, 'this time nobody answers on an open device');
  const fetch2 = await fetchWaiting(t, a, 'C1');
  t.equal(fetch2.job.details.waiting_for, 'line', 'the second retrieval waits for the line');
  t.match(fetch2.job.details.reason, /radio line of level 1 is down: no node answers/, fetch2.job.details.reason);
  await sim.setKnobs({ silent_nodes: [] }, 1);
  await until('three bots online, their line up', async () => (await bots(a)).filter((b) => b.online && b.line_up).length === 3, 60_000);
  await until('a second line-up event', async () => (await lineEvents(a, '0x700A')).length === 2);
  t.equal((await lineEvents(a, '0x7009')).length, 2, 'one line-down event per outage');
  t.equal((await work(a, fetch2.id)).status, 'SUCCEEDED', 'the second fetch is done too');
});
