// A replicated pair on a test network of its own (network namespaces): box a, box b, the witness
// w (each with an etcd member), the radio gateways' device server (the simulator serving the
// level over TCP) and a client that writes all along, failing over between the boxes. Proofs:
//
// 1. kill -9 of the active box under the writes: the other serves within 10 s, every
//    acknowledged write is on it, no request is made twice for one Idempotency-Key; the killed
//    box starts again, takes a snapshot and follows. PAIR_KILLS times (the suite's short form:
//    2; `PAIR_KILLS=10` for the ten).
// 2. The active box cut off from every other host: it stops acknowledging within its lease, the
//    standby takes over, and when the link is back the old active box follows by itself.
// 3. The witness's etcd member, then the standby, down: the active box serves on, and says it is
//    unprotected in `status`, /metrics and an event; protected again once both are back.
// 4. The bots keep their work: a fetch started before a kill ends on the box that took over,
//    which reconnected to the device server.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Network, netnsAvailable } from '../helpers/netns.js';
import { startEtcdCluster } from '../helpers/etcd-cluster.js';
import { PairBox } from '../helpers/pair.js';
import { entryArgs } from '../helpers/entry.js';
import { until } from '../helpers/until.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { optionsArg } from '../../src/sim/ipc.js';
import { e2eSite } from '../fixtures/e2e-site.js';

t.setTimeout(900_000);

const KILLS = Number(process.env.PAIR_KILLS ?? 2);
const PORT = 8443;
const DEVICE_PORT = 4001;
/** The promise of the design: a takeover serves within this. */
const TAKEOVER_MS = 10_000;
const SEED = 4601;
/** The boxes' lease (the configuration's default). */
const LEASE_MS = 4000;
/** Concurrent writers of the client. */
const CLIENTS = 4;

/** When a box that became active at `at` opened its store, started its brain and listened, in ms after `at`. */
function takeoverSteps(box: PairBox, at: number): string {
  const after = (msg: string) => {
    const line = box.lines.find((l) => l.msg === msg && (l.seen as number) >= at);
    return line ? `${msg} +${(line.seen as number) - at} ms` : `no "${msg}"`;
  };
  return ['store opened', 'brain started', 'HTTPS API listening'].map(after).join(', ');
}

const unavailable = netnsAvailable();
t.test('a replicated pair survives the loss of its active box, a cut link and a lost witness', { skip: unavailable ? `network namespaces: ${unavailable}` : false }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-pair-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const net = await Network.create(['a', 'b', 'w', 'sim', 'client']);
  t.teardown(() => net.destroy());
  const etcd = await startEtcdCluster(net, ['a', 'b', 'w'], path.join(dir, 'etcd'));

  // The site: one level behind a device server on the simulator's host.
  const site = e2eSite();
  site.levels[0]!.serial_device = `tcp://${net.ip('sim')}:${DEVICE_PORT}`;
  const siteFile = path.join(dir, 'site.json');
  writeFileSync(siteFile, JSON.stringify(site));
  const sim = net.spawn('sim', process.execPath, [...entryArgs('sim/main'), optionsArg({ site: siteFile, seed: SEED, bind: '0.0.0.0', figures: { batteryStartMin: 950, batteryStartMax: 950 } } as never)], {});
  let simLog = '';
  sim.stderr!.on('data', (d: Buffer) => (simLog += d.toString()));

  const boxes = new Map<string, PairBox>();
  const env = { WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on', WAREHOUSE_LOG_LEVEL: 'info' };
  const start = (name: 'a' | 'b', from?: PairBox) => {
    const previous = boxes.get(name);
    if (previous && process.env.PAIR_LOGS) writeFileSync(path.join(process.env.PAIR_LOGS, `${name}-${Date.now()}.log`), previous.lines.map((l) => JSON.stringify(l)).join('\n'));
    const box = PairBox.start(net.spawn.bind(net), {
      name, host: name, address: net.ip(name), stateDir: path.join(dir, name), endpoints: etcd.endpoints, pair: 'test', port: PORT, env,
    }, from);
    boxes.set(name, box);
    return box;
  };
  t.teardown(async () => {
    for (const box of boxes.values()) await box.stop('SIGKILL');
  });
  // What the boxes logged, for a failure's reading: PAIR_LOGS=<dir> keeps it.
  if (process.env.PAIR_LOGS) {
    t.teardown(() => {
      for (const [name, box] of boxes) writeFileSync(path.join(process.env.PAIR_LOGS!, `${name}.log`), box.lines.map((l) => JSON.stringify(l)).join('\n'));
    });
  }
  const other = (name: string) => (name === 'a' ? 'b' : 'a');

  const a = start('a');
  await a.became('active');
  // The pair's certificate and the bootstrap key: box a made both.
  const ca = readFileSync(a.certificate());
  let key = '';
  await until('box a to serve the API', async () => (await api(a, '/api/v2/health').catch(() => undefined))?.status === 200, 60_000);
  key = a.apiKey();
  const b = start('b', a);
  await b.became('standby');
  let active = a;

  async function api(box: PairBox, p: string, method = 'GET', json?: unknown): Promise<{ status: number; json: any; text: string }> {
    return new Promise((resolve, reject) => {
      const req = https.request(`${box.url()}${p}`, { method, ca, checkServerIdentity: () => undefined, timeout: 5000, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(text);
          } catch {
            // /metrics is text
          }
          resolve({ status: res.statusCode!, json: parsed, text });
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(json === undefined ? undefined : JSON.stringify(json));
    });
  }

  // A SKU without stock: the client's requests are refused at once (kept as ABORTED), no work for the bots.
  t.equal((await api(active, '/api/v2/sku', 'POST', { id: 'NO-STOCK', name: 'Nothing in stock' })).status, 201);
  await until('three bots online', async () => ((await api(active, '/api/v2/bots')).json as { online: boolean }[]).filter((x) => x.online).length === 3, 120_000);

  const client = net.spawn('client', process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../fixtures/pair-client.ts'),
    '--targets', [a.url(), b.url()].join(','), '--key', key, '--ca', a.certificate(), '--sku', 'NO-STOCK', '--clients', String(CLIENTS)], {});
  let clientOut = '';
  client.stdout!.on('data', (d: Buffer) => (clientOut += d.toString()));
  const acknowledged = () => until('some writes acknowledged', async () => {
    const before = (await api(active, '/api/v2/skus?size=1')).json?.total ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = (await api(active, '/api/v2/skus?size=1')).json?.total ?? 0;
    return after > before;
  }, 30_000);

  await t.test(`proof 1 and 4: kill -9 of the active box, ${KILLS} times`, async (t) => {
    // Work for the bots across the first takeover.
    const fetch = await api(active, '/api/v2/requests', 'POST', { type: 'FETCH', entities: [{ carrier_id: 'C4', balcony_ids: [2] }] });
    t.equal(fetch.status, 201, JSON.stringify(fetch.json));
    for (let kill = 1; kill <= KILLS; kill++) {
      await acknowledged();
      const victim = active;
      const heir = boxes.get(other(victim.options.name))!;
      const killedAt = Date.now();
      await victim.stop('SIGKILL');
      const tookOver = await heir.became('active', 30_000, killedAt);
      await until(`box ${heir.options.name} to serve the API`, async () => (await api(heir, '/api/v2/health').catch(() => undefined))?.status === 200, 30_000);
      const served = Date.now() - killedAt;
      t.comment(`kill ${kill}: box ${heir.options.name} active ${tookOver - killedAt} ms after the kill, serving after ${served} ms; ${takeoverSteps(heir, tookOver)}`);
      t.same(heir.logged('the brain thread ended unexpectedly'), [], `kill ${kill}: the brain started on its first thread`);
      t.ok(served < TAKEOVER_MS, `kill ${kill}: the other box serves within ${TAKEOVER_MS / 1000} s (${served} ms)`);
      active = heir;
      const back = start(victim.options.name as 'a' | 'b');
      await back.became('standby', 60_000);
      t.ok(back.logged(/taking a snapshot|this box is now standby/).length > 0, `kill ${kill}: the killed box follows again`);
    }
    // The fetch started before the first kill ends on the box that took over.
    const ended = await until('the fetch to end', async () => {
      for (const job of (await api(active, `/api/v2/jobs?request_id__eq=${fetch.json.id}&status__eq=EXECUTING&size=100`)).json.items) {
        if (job.details.waiting_for === 'trigger') await api(active, `/api/v2/trigger/${job.id}`, 'POST', {});
      }
      const r = (await api(active, `/api/v2/requests?id__eq=${fetch.json.id}`)).json.items[0];
      return ['SUCCEEDED', 'CANCELLED', 'ABORTED'].includes(r?.status) ? r : undefined;
    }, 240_000);
    t.equal(ended.status, 'SUCCEEDED', 'the bots kept their work across the takeovers');
    t.match(simLog, /controller connected/, 'the device server took the new active box\'s connection');
  });

  await t.test('proof 2: the active box cut off, then back', async (t) => {
    await acknowledged();
    const cut = active;
    const heir = boxes.get(other(cut.options.name))!;
    const cutAt = Date.now();
    await net.cut(cut.options.host);
    const gaveUp = await until('the cut box to give up the lead', async () => cut.lines.find((l) => l.msg === 'this box is now joining' && (l.seen as number) > cutAt)?.seen as number | undefined, 30_000);
    t.ok(gaveUp - cutAt <= LEASE_MS + 1500, `the cut box stopped acknowledging within its lease (${gaveUp - cutAt} ms)`);
    const tookOver = await heir.became('active', 30_000, cutAt);
    t.ok(tookOver >= gaveUp - 500, 'the standby took over only once the cut box had given up');
    await until(`box ${heir.options.name} to serve the API`, async () => (await api(heir, '/api/v2/health').catch(() => undefined))?.status === 200, 30_000);
    const served = Date.now() - cutAt;
    t.comment(`cut: the other box serves ${served} ms after the cut`);
    t.comment(`cut: ${takeoverSteps(heir, tookOver)}`);
    t.same(heir.logged('the brain thread ended unexpectedly'), [], 'the brain started on its first thread');
    t.ok(served < TAKEOVER_MS, `the other box serves within ${TAKEOVER_MS / 1000} s of the cut (${served} ms)`);
    active = heir;
    await acknowledged();
    const restoredAt = Date.now();
    await net.restore(cut.options.host);
    await cut.became('standby', 60_000, restoredAt);
    t.pass('the old active box follows again by itself');
  });

  await t.test('acknowledged writes: all on the active box, each request once', async (t) => {
    client.kill('SIGTERM');
    await until('the client to report', async () => clientOut.includes('\n'), 30_000);
    const told = JSON.parse(clientOut) as { skus: string[]; requests: Record<string, string>; errors: Record<string, number>; longest_gap_ms: number };
    t.comment(`client: ${told.skus.length} SKUs and ${Object.keys(told.requests).length} requests acknowledged; longest wait ${told.longest_gap_ms} ms; errors ${JSON.stringify(told.errors)}`);
    t.ok(told.skus.length > 100, 'the client wrote all along');
    const missing: string[] = [];
    for (const id of told.skus) if ((await api(active, `/api/v2/skus?id__eq=${id}`)).json.items.length !== 1) missing.push(id);
    t.same(missing, [], `every acknowledged SKU is on the active box (${told.skus.length})`);
    const lost: string[] = [];
    for (const id of Object.values(told.requests)) if ((await api(active, `/api/v2/requests?id__eq=${id}`)).json.items.length !== 1) lost.push(id);
    t.same(lost, [], `every acknowledged request is on the active box (${Object.keys(told.requests).length})`);
    // Each key's answers named one request (the client checks the ids it is told); beyond the
    // acknowledged ones, only the clients' last writes, in flight when they stopped, may be kept.
    const made = (await api(active, '/api/v2/requests?type__eq=FULFILLMENT&size=1')).json.total as number;
    const keys = Object.keys(told.requests).length;
    t.ok(made >= keys && made <= keys + CLIENTS, `one request per Idempotency-Key: ${made} made for ${keys} acknowledged keys and at most ${CLIENTS} in flight`);
  });

  await t.test('proof 3: the witness, then the standby, down', async (t) => {
    const standby = boxes.get(other(active.options.name))!;
    const events = async (hex: string) => ((await api(active, '/api/v2/events?size=200')).json.items as { hex_value: string; id: number }[]).filter((e) => e.hex_value === hex);
    // From a protected pair: the standby follows and all three members answer.
    await until('the pair to be protected', async () => active.status()?.replication?.protected === true, 60_000);
    const before = (await events('0x1012')).length;
    await etcd.kill('w');
    const unprotected = await until('the active box to say an etcd member does not answer', async () => {
      const s = active.status()?.replication;
      return s && !s.protected && /etcd members/.test(s.warning ?? '') ? s : undefined;
    }, 30_000);
    t.match(unprotected.warning, /1 of 3 etcd members/, 'status names the missing member');
    t.ok(active.logged(/the pair is unprotected/).length > 0, 'and the log');
    t.equal((await api(active, '/api/v2/sku', 'POST', { id: 'AFTER-WITNESS', name: 'written without the witness' })).status, 201, 'the active box serves on');
    const metrics = parsePrometheusText((await api(active, '/metrics')).text);
    t.equal(metrics.find((f) => f.name === 'warehouse_pair_protected')?.metrics[0]?.value, '0', '/metrics says unprotected');
    await until('event 0x1012', async () => (await events('0x1012')).length > before, 10_000);
    t.pass('event 0x1012');

    await standby.stop('SIGTERM');
    t.equal((await api(active, '/api/v2/sku', 'POST', { id: 'AFTER-STANDBY', name: 'written without the standby' })).status, 201, 'it serves without its standby too (two of three etcd members)');
    await until('status to name the missing standby', async () => /no standby/.test(active.status()?.replication?.warning ?? ''), 30_000);
    t.pass('status says no standby follows');

    const protectedBefore = (await events('0x1013')).length;
    await etcd.restart('w');
    const back = start(standby.options.name as 'a' | 'b');
    await back.became('standby', 60_000);
    await until('the pair to be protected again', async () => active.status()?.replication?.protected === true, 60_000);
    await until('event 0x1013', async () => (await events('0x1013')).length > protectedBefore, 10_000);
    t.pass('event 0x1013: protected again');
  });
});
