// The live event stream over a real WebSocket on the real TLS server: authentication, the
// filter, resuming with ?after= without gap or duplicate, and a stalled subscriber dropped
// without holding up the others.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';
import { until } from '../helpers/until.js';
import { EVENT } from '../../src/domain/events/catalogue.js';
import { CLOSE_CREDENTIAL_INVALID, CLOSE_PERMISSION_REVOKED } from '../../src/http/routes/events.js';
import { CLOSE_TOO_SLOW, REPLAY_CHUNK, Subscription } from '../../src/domain/events/subscription.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Store } from '../../src/store/store.js';
import { EVENT_COLLECTIONS, Events, type EventRecord } from '../../src/domain/events/events.js';

let a: TestApp;
let c: Client;
let key: string;
let ca: Buffer;

t.before(async () => {
  a = await startTestApp();
  key = JSON.parse(readFileSync(path.join(a.stateDir, 'bootstrap-admin.json'), 'utf8')).api_key;
  ca = readFileSync(a.app.tls.certFile);
  c = new Client(a.app.port, ca, key);
});
t.teardown(async () => {
  c.close();
  await a.close();
});

interface Feed {
  ws: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `n` messages have arrived. */
  waitFor(n: number): Promise<any[]>;
}

function connect(query: string, headers: Record<string, string> = { authorization: `Bearer ${key}` }): Promise<Feed> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`wss://127.0.0.1:${a.app.port}/api/v2/events/stream${query}`, { ca, headers, checkServerIdentity: (() => undefined) as never });
    const messages: any[] = [];
    const waiters: { n: number; done: (m: any[]) => void }[] = [];
    ws.on('message', (data) => {
      messages.push(JSON.parse(data.toString()));
      for (const w of [...waiters]) if (messages.length >= w.n) w.done(messages);
    });
    const closed = new Promise<{ code: number; reason: string }>((done) => ws.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    ws.on('open', () => resolve({
      ws, messages, closed,
      waitFor: (n) => (messages.length >= n ? Promise.resolve(messages) : new Promise((done) => waiters.push({ n, done }))),
    }));
    ws.on('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
    ws.on('error', reject);
  });
}

const setting = (n: number) => c.request('/api/v2/settings/events.retentionDays', { method: 'PATCH', json: { value_json: n } });

t.test('upgrades pass the same checks as requests', async (t) => {
  const refused = (feed: Promise<Feed>) => feed.then((f) => (f.ws.close(), 101), (err: { status?: number }) => err.status);
  t.equal(await refused(connect('', {})), 401);
  t.equal(await refused(connect('', { authorization: 'Bearer whk_nope' })), 401);
  t.equal(await refused(connect('?severity__gte=high')), 422);
  const plain = await c.request('/api/v2/events/stream');
  t.equal(plain.status, 426, 'a plain GET is told to upgrade');
  const viaQuery = await connect(`?access_token=${key}`, {});
  const [ready] = await viaQuery.waitFor(1);
  t.match(ready, { type: 'ready', last_id: Number });
  viaQuery.ws.close();
});

/** A new API key with `permissions`, and its id. */
async function newKey(permissions: string[]): Promise<{ value: string; id: number }> {
  const value = (await c.request('/api/v2/auth/generate_api_key', { method: 'POST', json: { name: 'stream', permission_keys: permissions } })).json.api_key as string;
  const id = (await c.request('/api/v2/auth/api_keys?size=1000')).json.items.find((k: { api_key: string }) => k.api_key === `${value.slice(0, 8)}…${value.slice(-4)}`).id as number;
  return { value, id };
}

t.test('a stream closes once its key is deleted, and hears nothing after', async (t) => {
  const { value, id } = await newKey(['events:view']);
  const feed = await connect('', { authorization: `Bearer ${value}` });
  await feed.waitFor(1);
  await setting(7);
  await feed.waitFor(2);
  t.equal((await c.request(`/api/v2/auth/api_keys/${id}`, { method: 'DELETE' })).status, 200);
  await setting(8);
  const { code, reason } = await feed.closed;
  t.equal(code, CLOSE_CREDENTIAL_INVALID);
  t.match(reason, /credentials no longer valid/);
  t.same(feed.messages.slice(1).map((m) => m.event.description), ['setting events.retentionDays set to 7 by API key 1'], 'not the deletion, nor what came after');
});

t.test('a stream closes once its key loses events:view; others stay open', async (t) => {
  const { value, id } = await newKey(['events:view', 'jobs:view']);
  const viaQuery = await connect(`?access_token=${value}`, {});
  const other = await connect('');
  await viaQuery.waitFor(1);
  await other.waitFor(1);
  const r = await c.request(`/api/v2/auth/api_keys/${id}/permissions`, { method: 'PATCH', json: { permission_keys: ['jobs:view'] } });
  t.equal(r.status, 200);
  const { code, reason } = await viaQuery.closed;
  t.equal(code, CLOSE_PERMISSION_REVOKED);
  t.match(reason, /events:view/);
  t.equal(viaQuery.messages.length, 1, 'the permission change itself was not sent');
  await setting(9);
  t.match((await other.waitFor(3))[2].event.description, /set to 9/, 'a stream whose key still holds goes on');
  other.ws.close();
});

t.test('a subscriber receives exactly the matching events, in order, as they commit', async (t) => {
  const all = await connect('');
  const settingsOnly = await connect('?component__eq=settings&search=description:retentionDays');
  await all.waitFor(1);
  await settingsOnly.waitFor(1);
  for (let i = 1; i <= 5; i++) await setting(10 + i);
  await c.request('/api/v2/auth/login', { method: 'POST', json: { email: 'nobody@example.com', password: 'x' } });
  const got = await settingsOnly.waitFor(6);
  t.same(got.slice(1).map((m) => m.event.description.match(/set to (\d+)/)[1]), ['11', '12', '13', '14', '15']);
  t.ok(got.slice(1).every((m) => m.type === 'event' && m.event.component === 'settings' && m.event.hex_value === EVENT.settingChanged.hex));
  const everything = await all.waitFor(7);
  t.same(everything.slice(1, 7).map((m) => m.event.component), ['settings', 'settings', 'settings', 'settings', 'settings', 'auth']);
  const ids = everything.slice(1).map((m) => m.event.id);
  t.same(ids, [...ids].sort((x, y) => x - y), 'id order');
  t.equal(new Set(ids).size, ids.length, 'no duplicate');
  all.ws.close();
  settingsOnly.ws.close();
});

t.test('?after= resumes with everything missed, then the live feed, no gap and no duplicate', async (t) => {
  const first = await connect('');
  const [ready] = await first.waitFor(1);
  await setting(21);
  const [, seen] = await first.waitFor(2);
  first.ws.close();
  await first.closed;
  for (let i = 22; i <= 25; i++) await setting(i); // missed while away

  const again = await connect(`?after=${seen.event.id}`);
  const backlog = await again.waitFor(5);
  t.equal(backlog[0].after, seen.event.id);
  t.ok(backlog[0].last_id > ready.last_id);
  await setting(26); // live
  const all = await again.waitFor(6);
  t.same(all.slice(1).map((m) => Number(m.event.description.match(/set to (\d+)/)[1])), [22, 23, 24, 25, 26]);
  const ids = all.slice(1).map((m) => m.event.id);
  t.same(ids, ids.map((_, i) => seen.event.id + 1 + i), 'consecutive ids from the one after the last seen');
  again.ws.close();
});

t.test('a subscriber that stops reading is dropped; the others and the API go on', async (t) => {
  const healthy = await connect('?component__eq=settings');
  await healthy.waitFor(1);
  // 30,000 events (about 30 MB) in one commit: more than the kernel's socket buffers and the
  // 1 MiB the daemon keeps for a client, so a client that stops reading passes the limit.
  const { events, store } = a.app;
  await store.write(() => {
    for (let i = 0; i < 30_000; i++) events.record(EVENT.reportCreated, `bulk event ${i} ${'x'.repeat(1000)}`);
  });
  const slow = await connect('?after=0');
  slow.ws.pause(); // stalled: the client reads nothing more
  await until('the stalled subscriber is dropped', async () => a.app.server.sockets.size === 1);
  slow.ws.resume();
  const { code, reason } = await slow.closed;
  t.equal(code, CLOSE_TOO_SLOW);
  t.match(reason, /reconnect with \?after=/);
  t.ok(slow.messages.length < 30_000, `dropped after ${slow.messages.length} messages`);

  await setting(30);
  const got = await healthy.waitFor(2);
  t.match(got[1].event.description, /set to 30/, 'the other subscriber goes on');
  t.equal((await c.request('/api/v2/health')).status, 200);
  t.equal(a.app.server.sockets.size, 1);
  healthy.ws.close();
});

t.test('a long backlog is replayed in chunks, the live feed joining without gap or duplicate', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-stream-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [...EVENT_COLLECTIONS]);
  t.teardown(() => store.close());
  const events = new Events(store, Date.now);
  await store.write(() => {
    for (let i = 0; i < 4 * REPLAY_CHUNK; i++) events.record(EVENT.reportCreated, i % 100 === 0 ? `marker ${i}` : `noise ${i}`);
  });
  let examined = 0;
  const matches = (e: EventRecord) => (examined++, e.description.startsWith('marker'));
  const sent: number[] = [];
  const sink = { send: (m: string) => (sent.push(JSON.parse(m).event?.id ?? 0), true), close: () => t.fail('not dropped') };
  const subscription = new Subscription(events, matches, (e) => e, sink, 0);
  t.teardown(() => subscription.stop());
  subscription.start();
  t.equal(examined, REPLAY_CHUNK, 'start() reads one chunk, then yields to the event loop');
  const live: number[] = [];
  for (let i = 0; i < 3; i++) live.push((await events.emit(EVENT.reportCreated, `marker live ${i}`)).id);
  await until('the backlog and the live events are sent', async () => sent.at(-1) === live.at(-1));
  const backlog = [...events.after(0)].filter((e) => e.description.startsWith('marker') && !live.includes(e.id)).map((e) => e.id);
  t.same(sent, [0, ...backlog, ...live], 'the greeting, every matching event once, in id order');
  t.equal(examined, 4 * REPLAY_CHUNK + 3, 'each event examined once');
});
