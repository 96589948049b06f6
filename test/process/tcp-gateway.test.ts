// A level's radio gateway behind a device server, as a pair of boxes meets it: the simulator
// runs alone and serves the level of a layout file over TCP (tcp://127.0.0.1:<port>), a daemon
// given the same layout file connects to it, its bots come up and a fetch runs to its end; the
// daemon is then killed with SIGKILL (its radio lines' process ends with it) and a second one
// on the same state directory (a standby taking over) connects to the same simulator and finds
// the same bots, where the first left them, and runs a fetch of its own.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { entryArgs } from '../helpers/entry.js';
import { exited, startWithClient } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';
import type { Client } from '../helpers/client.js';
import { optionsArg } from '../../src/sim/ipc.js';
import { e2eSite } from '../fixtures/e2e-site.js';

// Two daemons and bots at real speed (a tcp:// level is a real one to the planner).
t.setTimeout(600_000);

const SEED = 7301;
t.comment(`seed ${SEED}`);

interface Bot { id: number; online: boolean; x: number; y: number; heading: string; line_up?: boolean }

const get = async (c: Client, p: string) => (await c.request(p)).json;
const bots = async (c: Client): Promise<Bot[]> => ((await get(c, '/api/v2/bots')) as Bot[]).sort((a, b) => a.id - b.id);
const where = (list: Bot[]) => list.map((b) => `${b.id}@${b.x},${b.y},${b.heading}`).join(' ');

/** The pid of a daemon's radio lines' process (its child running lines/process/main). */
function linesProcessOf(daemon: number): number {
  const children = readFileSync(`/proc/${daemon}/task/${daemon}/children`, 'utf8').trim().split(' ').map(Number);
  const pid = children.find((c) => readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('lines/process/main'));
  if (pid === undefined) throw new Error(`daemon ${daemon} has no lines process among its children ${children.join(' ')}`);
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Confirms every job of the request that waits for a person at the balcony, until the request ends. */
async function work(c: Client, requestId: string): Promise<{ status: string }> {
  return until(`request ${requestId} to end`, async () => {
    for (const job of (await get(c, `/api/v2/jobs?request_id__eq=${requestId}&status__eq=EXECUTING&size=100`)).items) {
      if (job.details.waiting_for === 'trigger') await c.request(`/api/v2/trigger/${job.id}`, { method: 'POST', json: {} });
    }
    const r = (await get(c, `/api/v2/requests?id__eq=${requestId}`)).items[0];
    return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(r.status) ? r : undefined;
  }, 240_000);
}

/** Fetches a carrier to balcony 2 and sees it back. */
async function fetch(t: Test, c: Client, carrier: string): Promise<void> {
  const r = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FETCH', entities: [{ carrier_id: carrier, balcony_ids: [2] }] } });
  t.equal(r.status, 201, JSON.stringify(r.json));
  const done = await work(c, r.json.id);
  t.equal(done.status, 'SUCCEEDED', `the fetch of ${carrier} ran to its end`);
}

/** The bots once they have stood still for a while (no job left, nothing moving). */
async function standing(c: Client): Promise<Bot[]> {
  let last = '';
  let same = 0;
  return until('the bots to stand still', async () => {
    const now = await bots(c);
    same = where(now) === last ? same + 1 : 0;
    last = where(now);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return same >= 4 ? now : undefined;
  }, 120_000);
}

t.test('a takeover finds the bots the simulator kept on its TCP line', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-tcp-gateway-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const device = `tcp://127.0.0.1:${port}`;
  const site = e2eSite();
  site.levels[0]!.serial_device = device;
  const siteFile = path.join(dir, 'site.json');
  writeFileSync(siteFile, JSON.stringify(site));

  // The simulator alone, as on the host of the device servers; full batteries keep the bots off the charger.
  const options = { site: siteFile, seed: SEED, bind: '127.0.0.1', figures: { batteryStartMin: 950, batteryStartMax: 950 } };
  const sim = spawn(process.execPath, [...entryArgs('sim/main'), optionsArg(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => sim.kill('SIGKILL'));
  let simLog = '';
  sim.stderr!.on('data', (d: Buffer) => (simLog += d.toString()));
  let out = '';
  const ready = await new Promise<{ type: string; levels: { level_id: number; path: string }[] }>((resolve, reject) => {
    sim.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    sim.once('exit', (code) => reject(new Error(`the simulator ended (${code}): ${simLog}`)));
  });
  t.equal(ready.type, 'ready');
  t.same(ready.levels, [{ level_id: 1, path: device }], 'the simulator serves the layout\'s device');

  const stateDir = path.join(dir, 'state');
  const env = { WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on', WAREHOUSE_PORT: '0' };
  const first = await startWithClient(t, stateDir, env);
  await until('three bots online on the first daemon', async () => (await bots(first.c)).filter((b) => b.online).length === 3, 120_000);
  t.pass('the bots came up on the TCP line');
  await fetch(t, first.c, 'C4');
  const left = await standing(first.c);
  t.comment(`the first daemon left the bots at ${where(left)}`);

  const linesPid = linesProcessOf(first.d.child.pid!);
  first.d.child.kill('SIGKILL');
  await exited(first.d.child);
  // Its lines' process sees the IPC channel close and ends: nothing is left holding the line.
  await until('the killed daemon\'s lines process to end', async () => !alive(linesPid), 10_000);

  const second = await startWithClient(t, stateDir, env);
  const found = await until('three bots online on the second daemon', async () => {
    const now = await bots(second.c);
    return now.filter((b) => b.online).length === 3 ? now : undefined;
  }, 120_000);
  t.equal(where(found), where(left), 'the second daemon finds the bots where the first left them');
  await fetch(t, second.c, 'C3');
  t.match(simLog, /controller connected/, 'the simulator logged the controllers\' connections');
});
