// Settings over the real API: the registry, resolution, validation, custom keys, required
// roles over HTTP, restart-pending values, live effect on auth and the brain's listener, and the
// versions and events they move.
import t from 'tap';
import { decodeJwt } from 'jose';
import { startAdminApp, type AdminApp, type Bootstrap } from '../helpers/app.js';
import { Client, type Answer } from '../helpers/client.js';
import type { Caller } from '../../src/domain/auth/caller.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../src/store/store.js';
import { EVENT_COLLECTIONS, Events } from '../../src/domain/events/events.js';
import { AUTH_COLLECTIONS, roles } from '../../src/domain/auth/records.js';
import { SETTINGS_COLLECTIONS, Settings } from '../../src/domain/settings/settings.js';
import { settingRegistry } from '../../src/domain/settings/registry.js';

let a: AdminApp;
let c: Client;
let boot: Bootstrap;

t.before(async () => {
  a = await startAdminApp();
  ({ admin: c, boot } = a);
});
t.teardown(() => a.close());

const send = (method: string, p: string, json?: unknown) => c.request(p, { method, ...(json === undefined ? {} : { json }) });
const item = async (key: string) => ((await send('GET', '/api/v2/settings')).json.items as { key: string }[]).find((i) => i.key === key) as Record<string, unknown>;
const locs = (r: Answer) => (r.json.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));

t.test('the registry is listed with types, bounds and effective values', async (t) => {
  const r = await send('GET', '/api/v2/settings');
  t.equal(r.status, 200);
  t.equal(r.json.total, r.json.items.length);
  const keys = r.json.items.map((i: { key: string }) => i.key);
  for (const k of ['api.jobs.showCreated', 'auth.accessTokenMinutes', 'auth.refreshTokenDays', 'auth.passwordPolicy.minLength', 'time.zone', 'api.maxPageSize', 'picking.external.enabled', 'events.retentionDays', 'ui.locale']) {
    t.ok(keys.includes(k), k);
  }
  t.match(await item('auth.accessTokenMinutes'), { value_type: 'integer', scope: 'system', value_json: null, default_value_json: 15, effective_value_json: 15, effective_value_known: true, minimum: 1, maximum: 1440, required_role: ['admin'], restart_required: false });
  t.match(await item('ui.locale'), { scope: 'user', enum_values: ['en', 'de', 'fr', 'it', 'es', 'nl', 'pl', 'cs'] });
  t.match(await item('time.zone'), { default_value_json: 'Europe/Berlin', restart_required: true });
});

t.test('known values are validated and a refused change changes nothing', async (t) => {
  const version = (await send('GET', '/api/v2/auth/client_state')).json.settings_version;
  for (const [key, value, msg] of [
    ['auth.accessTokenMinutes', 'ten', 'valid integer'],
    ['auth.accessTokenMinutes', 1.5, 'valid integer'],
    ['auth.accessTokenMinutes', 0, 'greater than or equal to 1'],
    ['auth.accessTokenMinutes', 100000, 'less than or equal to 1440'],
    ['api.jobs.showCreated', 'yes', 'valid boolean'],
    ['time.zone', 'Mars/Olympus', 'IANA'],
    ['auth.accessTokenMinutes', null, 'null'],
  ] as const) {
    const r = await send('PATCH', `/api/v2/settings/${key}`, { value_json: value });
    t.equal(r.status, 422, `${key} = ${JSON.stringify(value)}`);
    t.same(locs(r), ['body.value_json']);
    t.match(r.json.detail[0].msg, msg);
  }
  let r = await send('PATCH', '/api/v2/settings/system', { updates: { 'events.retentionDays': 10, 'auth.refreshTokenDays': 1000 } });
  t.equal(r.status, 422);
  t.same(locs(r), ['body.updates.auth.refreshTokenDays']);
  t.equal((await item('events.retentionDays')).value_json, null, 'the valid half was not applied either');
  r = await send('PATCH', '/api/v2/settings/users/1', { updates: { 'ui.locale': 'klingon' } });
  t.equal(r.status, 422);
  t.equal((await send('PATCH', '/api/v2/settings/auth.accessTokenMinutes', {})).status, 422, 'value_json missing');
  t.equal((await send('PATCH', '/api/v2/settings/nope.nothing', { value_json: 1 })).status, 404);
  t.equal((await send('GET', '/api/v2/settings/bad%20key')).status, 422);
  t.equal((await send('POST', '/api/v2/settings', { key: 'auth.accessTokenMinutes', value_json: 5, default_value_json: 3 })).status, 422, 'the controller defines known keys');
  t.equal((await send('GET', '/api/v2/auth/client_state')).json.settings_version, version, 'settings_version did not move');
});

t.test('a change applies at once: token lifetimes and the password policy', async (t) => {
  const before = (await send('GET', '/api/v2/auth/client_state')).json.settings_version;
  let r = await send('PATCH', '/api/v2/settings/auth.accessTokenMinutes', { value_json: 2 });
  t.equal(r.status, 200);
  t.match(r.json, { key: 'auth.accessTokenMinutes', value_json: 2, default_value_json: 15, restart_required: false });
  t.not((await send('GET', '/api/v2/auth/client_state')).json.settings_version, before, 'settings_version moved');
  r = await send('POST', '/api/v2/auth/login', { email: boot.email, password: boot.password });
  t.equal(r.status, 200);
  const claims = decodeJwt(r.json.access_token);
  t.equal(claims.exp! - claims.iat!, 120, 'the next token lives 2 minutes');

  await send('PATCH', '/api/v2/settings/system', { updates: { 'auth.passwordPolicy.minLength': 20 } });
  t.equal((await send('GET', '/api/v2/auth/password_policy')).json.min_length, 20);
  r = await send('DELETE', '/api/v2/settings/auth.passwordPolicy.minLength');
  t.equal(r.status, 200);
  t.equal(r.json.value_json, null);
  t.equal((await send('GET', '/api/v2/auth/password_policy')).json.min_length, 12, 'the default applies again');
});

t.test('custom settings: create, update, delete keeps the definition', async (t) => {
  let r = await send('POST', '/api/v2/settings', { key: 'wms.pollSeconds', value_json: 30, default_value_json: 60, required_role: ['operator'] });
  t.equal(r.status, 200);
  t.match(r.json, { key: 'wms.pollSeconds', value_json: 30, default_value_json: 60, required_role: ['operator'], user_idx: null });
  t.match(r.json.id, /^[0-9a-f-]{36}$/);
  t.match(await item('wms.pollSeconds'), { value_type: 'json', effective_value_json: 30, effective_value_known: true });
  r = await send('POST', '/api/v2/settings', { key: 'wms.pollSeconds', value_json: { any: ['json'] } });
  t.same(r.json.value_json, { any: ['json'] }, 'updated in place');
  t.equal((await send('DELETE', '/api/v2/settings/wms.pollSeconds')).status, 200);
  t.match(await item('wms.pollSeconds'), { value_json: null, effective_value_json: 60 });
  await send('POST', '/api/v2/settings', { key: 'wms.noDefault' });
  t.match(await item('wms.noDefault'), { effective_value_known: false, effective_value_json: null });
  t.equal((await send('POST', '/api/v2/settings', { key: 'wms.x', required_role: ['no_such_role'] })).status, 422);
  t.equal((await send('POST', '/api/v2/settings', { key: 'wms.y', extra: 1 })).status, 422, 'a field the body does not name is refused (every write body is an allow-list)');
});

t.test('restart_required settings report what waits for a restart', async (t) => {
  await send('PATCH', '/api/v2/settings/system', { updates: { 'time.zone': 'UTC' } });
  const r = await send('GET', '/api/v2/settings/system');
  t.equal(r.json.settings['time.zone'], 'UTC');
  t.same(r.json.pending_restart, { 'time.zone': 'UTC' });
  t.match((await send('GET', '/api/v2/events?size=1')).json.items[0].created_at_utc, /\+00:00$/);
  t.equal(a.app.settings.value('time.zone'), 'Europe/Berlin', 'the running daemon keeps its start value');
  await send('DELETE', '/api/v2/settings/time.zone');
  t.same((await send('GET', '/api/v2/settings/system')).json.pending_restart, {});
});

t.test('user settings: own, others, unknown users', async (t) => {
  let r = await send('PATCH', '/api/v2/settings/users/1', { updates: { 'ui.locale': 'de' } });
  t.equal(r.status, 200);
  t.equal(r.json.settings['ui.locale'], 'de');
  t.equal((await send('GET', '/api/v2/settings/users/1')).json.settings['ui.locale'], 'de');
  t.equal((await send('GET', '/api/v2/settings/users/999')).status, 404);
  r = await send('PATCH', '/api/v2/settings/users/1', { updates: { 'auth.accessTokenMinutes': 5 } });
  t.equal(r.status, 422, 'a system setting is not a user one');
  r = await send('PATCH', '/api/v2/settings/system', { updates: { 'ui.locale': 'de' } });
  t.equal(r.status, 422, 'and the other way round');
  r = await send('PATCH', '/api/v2/settings/users/1', { resets: ['ui.locale'] });
  t.equal(r.json.settings['ui.locale'], 'en');
});

t.test('required roles: a caller below the role authority neither sees nor changes the setting', async (t) => {
  const settings = a.app.settings;
  const operator: Caller = { kind: 'user', id: 1, permissions: new Set(['settings:view', 'settings:update']), authorityLevel: 40 };
  t.notOk(settings.list(operator, 1).some((i) => i.key === 'auth.accessTokenMinutes'), 'not listed');
  t.ok(settings.list(operator, 1).some((i) => i.key === 'api.jobs.showCreated'), 'open settings are');
  t.throws(() => settings.get(operator, 'auth.accessTokenMinutes'), { code: 'forbidden' });
  await t.rejects(settings.set(operator, 'auth.accessTokenMinutes', 3), { code: 'forbidden' });
  t.equal(settings.value('auth.accessTokenMinutes'), 2, 'unchanged');
});

t.test('setting changes are events', async (t) => {
  const r = await send('GET', '/api/v2/events?component__eq=settings&size=100');
  t.ok(r.json.total >= 5);
  t.ok(r.json.items.every((e: { hex_value: string }) => ['0x3001', '0x3002'].includes(e.hex_value)));
  t.ok(r.json.items.some((e: { description: string }) => e.description === 'setting auth.accessTokenMinutes set to 2 by API key 1'));
  t.notOk(JSON.stringify(r.json).includes('["json"]'), 'custom values are not shown');
});

t.test('a listener told of a setting change reads the new value (the brain is told this way)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-settings-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [...SETTINGS_COLLECTIONS, ...EVENT_COLLECTIONS, ...AUTH_COLLECTIONS]);
  t.teardown(() => store.close());
  const events = new Events(store, Date.now);
  const settings = new Settings(store, settingRegistry({ timeZone: 'UTC', maxPageSize: 100 }), Date.now, events);
  // No roles are stored here: only a caller above every authority passes required_role.
  const top: Caller = { kind: 'user', id: 1, permissions: new Set(), authorityLevel: Number.MAX_SAFE_INTEGER };
  const seen: unknown[] = [];
  events.subscribe((e) => {
    if (e.component === 'settings') seen.push([settings.value('picking.external.enabled'), settings.value('brain.chargeBelowPercent'), settings.value('brain.faultClearSeconds')]);
  });
  await settings.set(top, 'picking.external.enabled', true);
  await settings.update(top, null, { 'brain.chargeBelowPercent': 35, 'brain.faultClearSeconds': 0 }, []);
  await settings.reset(top, 'picking.external.enabled');
  t.same(seen, [[true, 20, 10], [true, 35, 0], [true, 35, 0], [false, 35, 0]]);
});

t.test('GET /settings/{key}: a known key, a custom one, an unknown one', async (t) => {
  let r = await send('GET', '/api/v2/settings/events.retentionDays');
  t.equal(r.status, 200);
  t.match(r.json, { key: 'events.retentionDays', default_value_json: 30, required_role: ['admin'], restart_required: false, user_idx: null, created_at_utc: String });
  t.match(r.json.id, /^[0-9a-f-]{36}$/);
  t.equal((await send('GET', '/api/v2/settings/events.retentionDays')).json.id, r.json.id, 'a stable id before any value is stored');
  r = await send('GET', '/api/v2/settings/wms.pollSeconds');
  t.match(r.json, { key: 'wms.pollSeconds', default_value_json: 60, required_role: ['operator'] });
  r = await send('GET', '/api/v2/settings/no.such.setting');
  t.equal(r.status, 404);
  t.match(r.json, { code: String, detail: /no\.such\.setting does not exist/ });
});

t.test('POST /settings refuses a user setting, as PATCH /settings/system does', async (t) => {
  const r = await send('POST', '/api/v2/settings', { key: 'ui.locale', value_json: 'de' });
  t.equal(r.status, 422);
  t.same(locs(r), ['body.key']);
  t.match(r.json.detail[0].msg, /user setting/);
  t.equal((await item('ui.locale')).value_json, null, 'no system value stored');
});

/** A user whose role has `permissions` at authority 40 (below Admin's 80), logged in over the API. */
async function lowerUser(permissions: string[]): Promise<{ client: Client; id: number }> {
  const role = await send('POST', '/api/v2/auth/roles', { name: `Clerk ${Math.random()}`, authority_level: 40, permissions });
  if (role.status !== 201) throw new Error(role.text);
  const email = `clerk${Math.random().toString(36).slice(2)}@example.com`;
  const created = await send('POST', '/api/v2/auth/create_account', { username: email.split('@')[0], email, role_id: role.json.id });
  if (created.status !== 201) throw new Error(created.text);
  const dir = path.join(a.stateDir, 'password-resets');
  const code = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).find((e) => e.email === email).code;
  const password = 'Correct-Horse-42';
  const anonymous = new Client(a.app.port, readFileSync(a.app.tls.certFile));
  t.teardown(() => anonymous.close());
  if ((await anonymous.request('/api/v2/auth/reset_password', { method: 'POST', json: { email, new_password: password, otp: code } })).status !== 200) throw new Error('reset failed');
  const login = await anonymous.request('/api/v2/auth/login', { method: 'POST', json: { email, password } });
  const client = new Client(a.app.port, readFileSync(a.app.tls.certFile), login.json.access_token);
  t.teardown(() => client.close());
  return { client, id: created.json.id };
}

t.test('required roles over HTTP: a lower-authority user neither reads nor writes admin settings', async (t) => {
  const { client } = await lowerUser(['settings:view', 'settings:update']);
  const as = (method: string, p: string, json?: unknown) => client.request(p, { method, ...(json === undefined ? {} : { json }) });
  const system = await as('GET', '/api/v2/settings/system');
  t.equal(system.status, 200);
  t.ok('api.jobs.showCreated' in system.json.settings, 'open settings are shown');
  t.notOk('auth.accessTokenMinutes' in system.json.settings, 'admin settings are not');
  t.equal((await as('GET', '/api/v2/settings/auth.accessTokenMinutes')).status, 403);
  let r = await as('PATCH', '/api/v2/settings/system', { updates: { 'api.jobs.showCreated': true, 'events.retentionDays': 3 } });
  t.equal(r.status, 403, 'one admin setting refuses the whole update');
  t.match(r.json.detail, /events\.retentionDays/);
  r = await as('POST', '/api/v2/settings', { key: 'brain.chargeBelowPercent', value_json: 50 });
  t.equal(r.status, 403);
  t.equal((await as('PATCH', '/api/v2/settings/picking.external.enabled', { value_json: true })).status, 403);
  t.equal(a.app.settings.value('events.retentionDays'), 30, 'nothing changed');
  t.equal(a.app.settings.value('api.jobs.showCreated'), false);
  t.equal((await as('PATCH', '/api/v2/settings/system', { updates: { 'api.jobs.showCreated': true } })).status, 200, 'open settings may be changed');
  t.equal(a.app.settings.value('api.jobs.showCreated'), true);
  await send('DELETE', '/api/v2/settings/api.jobs.showCreated');
});

t.test('a role is read once per change of the auth data: settings writes and a user\'s requests do not decode it each time', async (t) => {
  const role = await send('POST', '/api/v2/auth/roles', { name: `Supervisor ${Math.random()}`, authority_level: 60, permissions: ['settings:view'] });
  t.equal(role.status, 201);
  t.equal((await send('POST', '/api/v2/settings', { key: 'wms.supervised', value_json: 1, required_role: [role.json.id] })).status, 200);
  const { client } = await lowerUser(['settings:view', 'settings:update']);
  const patch = (value: number) => client.request('/api/v2/settings/wms.supervised', { method: 'PATCH', json: { value_json: value } });
  t.equal((await patch(2)).status, 403, 'authority 40 is below the required role\'s 60');
  // Each role record carries its whole permission list; reading one cost ~11 KB of garbage a request.
  const roleRecords = a.app.store.collection(roles);
  const get = roleRecords.get;
  let reads = 0;
  roleRecords.get = (key) => (reads++, get.call(roleRecords, key));
  t.teardown(() => {
    roleRecords.get = get;
  });
  for (let i = 0; i < 6; i++) {
    if (i === 1) {
      t.ok(reads > 0, 'the first round reads the roles');
      reads = 0;
    }
    t.equal((await send('PATCH', '/api/v2/settings/wms.supervised', { value_json: 10 + i })).status, 200);
    t.equal((await client.request('/api/v2/settings/system')).status, 200);
  }
  t.equal(reads, 0, 'ten requests after the first two read no role record');
  t.equal((await send('PATCH', `/api/v2/auth/roles/${role.json.id}`, { authority_level: 30 })).status, 200);
  t.equal((await patch(3)).status, 200, 'the role lowered to 30 holds from the next request on');
  t.equal(a.app.settings.value('wms.supervised'), 3);
});

t.test("another user's settings need settings:update_users to change", async (t) => {
  const plain = await lowerUser(['settings:view']);
  const manager = await lowerUser(['settings:view', 'settings:update_users']);
  const patch = (c: Client, idx: number, locale: string) => c.request(`/api/v2/settings/users/${idx}`, { method: 'PATCH', json: { updates: { 'ui.locale': locale } } });
  t.equal((await patch(plain.client, plain.id, 'fr')).status, 200, 'own settings need no permission');
  const refused = await patch(plain.client, manager.id, 'it');
  t.equal(refused.status, 403);
  t.match(refused.json.detail, /settings:update_users/);
  t.equal((await plain.client.request(`/api/v2/settings/users/${manager.id}`)).json.settings['ui.locale'], 'en', 'unchanged, and readable with settings:view');
  t.equal((await patch(manager.client, plain.id, 'nl')).status, 200);
  t.equal((await plain.client.request(`/api/v2/settings/users/${plain.id}`)).json.settings['ui.locale'], 'nl');
});
