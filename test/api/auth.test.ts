// Authentication and authorization over the real API: first start, keys, tokens, roles,
// users, the authorization matrix of every route, escalation attempts, abuse resistance.
import t from 'tap';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { memoryLogger } from '../helpers/server.js';
import { Client } from '../helpers/client.js';
import { apiKeys, roles, users } from '../../src/domain/auth/records.js';
import { Auth } from '../../src/domain/auth/auth.js';
import { AUTHENTICATED } from '../../src/http/route.js';
import { keyByDigest, presentedDigest } from '../../src/domain/auth/api-keys.js';
import { ALL_PERMISSION_KEYS, expandPermissions, PERMISSIONS } from '../../src/domain/auth/permissions.js';
import { rolePermissions } from '../../src/domain/auth/roles.js';

interface Bootstrap {
  email: string;
  password: string;
  api_key: string;
}

let a: TestApp;
let admin: Client;
let boot: Bootstrap;

t.before(async () => {
  a = await startTestApp();
  boot = JSON.parse(readFileSync(path.join(a.stateDir, 'bootstrap-admin.json'), 'utf8'));
  admin = as(boot.api_key);
});
t.teardown(async () => {
  for (const c of clients) c.close();
  await a.close();
});

const clients: Client[] = [];

/** A client with this bearer credential; all are closed at the end so the process can exit. */
function as(token: string | undefined): Client {
  const c = new Client(a.app.port, readFileSync(a.app.tls.certFile), token);
  clients.push(c);
  return c;
}

/** A key's hint, as lists show it: its prefix and last characters. */
const hintOf = (value: string) => `${value.slice(0, 8)}…${value.slice(-4)}`;

async function newKey(permission_keys: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const r = await admin.post('/api/v2/auth/generate_api_key', { name: `k${Math.random()}`, permission_keys, ...extra });
  if (r.status !== 201) throw new Error(`key creation failed: ${r.text}`);
  return r.json.api_key;
}

/** Reads the newest reset code the outbox holds for an email. */
function outboxCode(email: string): string {
  const dir = path.join(a.stateDir, 'password-resets');
  const files = readdirSync(dir).sort().reverse();
  for (const f of files) {
    const entry = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    if (entry.email === email) {
      t.equal(statSync(path.join(dir, f)).mode & 0o777, 0o600);
      return entry.code;
    }
  }
  throw new Error(`no code for ${email}`);
}

/** Creates a user with a role and a password, through the API; returns its email and password. */
async function newUser(role_id: string): Promise<{ email: string; password: string; id: number }> {
  const email = `u${Math.random().toString(36).slice(2)}@example.com`;
  const created = await admin.post('/api/v2/auth/create_account', { username: email.split('@')[0], email: email.toUpperCase(), role_id });
  if (created.status !== 201) throw new Error(created.text);
  const password = 'Correct-Horse-42';
  const reset = await as(undefined).post('/api/v2/auth/reset_password', { email, new_password: password, otp: outboxCode(email) });
  if (reset.status !== 200) throw new Error(reset.text);
  return { email, password, id: created.json.id };
}

t.test('first start writes the administrator credentials to a 0600 file, never to the log', async (t) => {
  const file = path.join(a.stateDir, 'bootstrap-admin.json');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.match(boot, { email: 'admin@warehouse.local', password: String, api_key: /^whk_/ });
  t.ok(a.lines.some((l) => l.file === file), 'the log says where the file is');
  const log = JSON.stringify(a.lines);
  t.notOk(log.includes(boot.password) || log.includes(boot.api_key), 'the log holds neither secret');
  const me = await admin.get('/api/v2/auth/authenticate');
  t.equal(me.status, 200);
  t.ok(me.json.permissions.includes('system:delete_bots'), 'the bootstrap key holds every permission');
});

t.test('login, refresh rotation, reuse detection', async (t) => {
  const anon = as(undefined);
  const login = await anon.post('/api/v2/auth/login', { email: boot.email.toUpperCase(), password: boot.password });
  t.equal(login.status, 200);
  t.equal(login.json.token_type, 'bearer');
  const viaToken = await as(login.json.access_token).get('/api/v2/auth/roles');
  t.equal(viaToken.status, 200);

  const r1 = await anon.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token });
  t.equal(r1.status, 200);
  t.not(r1.json.refresh_token, login.json.refresh_token, 'rotated');
  const reuse = await anon.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token });
  t.equal(reuse.status, 401, 'a used refresh token is refused');
  const afterReuse = await anon.post('/api/v2/auth/refresh_token', { refresh_token: r1.json.refresh_token });
  t.equal(afterReuse.status, 401, 'and its whole chain is revoked');
  t.equal((await anon.post('/api/v2/auth/refresh_token', { refresh_token: 'whr_nonsense' })).status, 401);
  anon.close();
});

t.test('wrong credentials say nothing about the account; repeated failures slow down', async (t) => {
  const anon = as(undefined);
  const wrong = await anon.post('/api/v2/auth/login', { email: boot.email, password: 'wrong' });
  const unknown = await anon.post('/api/v2/auth/login', { email: 'nobody@example.com', password: 'wrong' });
  t.equal(wrong.status, 401);
  t.equal(unknown.status, 401);
  t.equal(wrong.json.detail, unknown.json.detail, 'same answer for a wrong password and an unknown email');
  const forgotKnown = await anon.post('/api/v2/auth/forgot_password', { email: 'x-known@example.com' });
  t.equal(forgotKnown.status, 202);

  const victim = await newUser('viewer');
  // The auth clock stands still meanwhile: a slow machine must not let the delay run out.
  const deps = a.app.auth.deps;
  const realNow = deps.now;
  const frozen = Date.now();
  deps.now = () => frozen;
  t.teardown(() => {
    deps.now = realNow;
  });
  let limited;
  for (let i = 0; i < 8 && !limited; i++) {
    const r = await anon.post('/api/v2/auth/login', { email: victim.email, password: `guess-${i}` });
    if (r.status === 429) limited = r;
  }
  t.ok(limited, 'guessing is rate limited');
  t.match(limited!.headers['retry-after'], /^\d+$/);
  const evenRight = await anon.post('/api/v2/auth/login', { email: victim.email, password: victim.password });
  t.equal(evenRight.status, 429, 'while limited, even the right password waits');
  anon.close();
});

t.test('the authorization matrix of every route', async (t) => {
  const expired = await newKey(['roles:view']);
  const deleted = await newKey(['roles:view']);
  const noPermission = await newKey([]);
  // Expiry cannot be set in the past through the API: age the key in the store.
  const record = keyByDigest(a.app.auth.deps, presentedDigest(a.app.auth.deps, expired)!)!;
  await a.app.store.write(() => a.app.store.collection(apiKeys).put({ ...record, expires_at: Date.now() - 1000 }));
  const deletedId = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(deleted)).id;
  t.equal((await admin.request(`/api/v2/auth/api_keys/${deletedId}`, { method: 'DELETE' })).status, 200);

  // A session of each built-in role: the bootstrap user is the Super Admin.
  const loginAs = async (email: string, password: string) => as((await as(undefined).post('/api/v2/auth/login', { email, password })).json.access_token);
  const roleLogins: [string, Client][] = [['super_admin', await loginAs(boot.email, boot.password)]];
  for (const role of ['admin', 'operator', 'viewer']) {
    const u = await newUser(role);
    roleLogins.push([role, await loginAs(u.email, u.password)]);
  }
  const cases: [string, Client][] = [
    ['no credentials', as(undefined)],
    ['malformed token', as('not-a-token')],
    ['expired key', as(expired)],
    ['deleted key', as(deleted)],
  ];
  const protectedRoutes = a.app.server.router.routes.filter((r) => r.permission !== null);
  t.ok(protectedRoutes.length >= 16, `${protectedRoutes.length} protected routes`);
  for (const r of protectedRoutes) {
    // Ids that exist nowhere: the matrix must not delete or change real records.
    const url = r.path.replace(/\{\w+\}/g, '999999');
    const send = (c: Client) => c.request(url, { method: r.method, ...(r.body !== undefined ? { json: {} } : {}) });
    for (const [name, client] of cases) t.equal((await send(client)).status, 401, `${r.method} ${r.path}: ${name}`);
    const lacking = (await send(as(noPermission))).status;
    if (r.permission === AUTHENTICATED) t.not(lacking, 401, `${r.method} ${r.path}: any identity`);
    else t.equal(lacking, 403, `${r.method} ${r.path}: key lacking ${r.permission}`);
    const holder = as(await newKey(r.permission === AUTHENTICATED ? [] : [r.permission!]));
    const holding = (await send(holder)).status;
    t.ok(holding !== 401 && holding !== 403, `${r.method} ${r.path}: key holding the permission gets ${holding}`);
    holder.close();
    // A route that also admits other keys (its handler narrows what each may see) lets each in.
    const admitting = [r.permission!, ...(r.alsoPermitted ?? [])];
    for (const also of r.alsoPermitted ?? []) {
      const alsoHolder = as(await newKey([also]));
      const status = (await send(alsoHolder)).status;
      t.ok(status !== 401 && status !== 403, `${r.method} ${r.path}: key holding ${also} gets ${status}`);
      alsoHolder.close();
    }
    // A key with every permission but those admitted here (all the others of their area included).
    const others = as(await newKey(ALL_PERMISSION_KEYS.filter((k) => !admitting.some((p) => k === p || expandPermissions([k]).has(p)))));
    if (r.permission !== AUTHENTICATED) t.equal((await send(others)).status, 403, `${r.method} ${r.path}: key with every other permission`);
    others.close();
    // Each built-in role: allowed exactly when the role holds a permission the route admits.
    for (const [role, login] of roleLogins) {
      const granted = rolePermissions(a.app.store.collection(roles).get(role)!);
      const holds = r.permission === AUTHENTICATED || admitting.some((p) => granted.has(p));
      const status = (await send(login)).status;
      if (holds) t.ok(status !== 401 && status !== 403, `${r.method} ${r.path}: ${role} holds it (${status})`);
      else t.equal(status, 403, `${r.method} ${r.path}: ${role} lacks it`);
    }
  }
  for (const [, c] of cases) c.close();
});

t.test('no permission implies another by accident: removing bots is granted by name only', async (t) => {
  for (const def of PERMISSIONS) {
    for (const part of def.composes ?? []) t.ok(part.startsWith(`${def.group}:`), `${def.key} composes ${part} of its own area`);
  }
  t.notOk(expandPermissions(['system:manage']).has('system:delete_bots'), 'system:manage does not remove bots');
  t.notOk(rolePermissions(a.app.store.collection(roles).get('admin')!).has('system:delete_bots'), 'so the Admin role cannot');
  t.ok(rolePermissions(a.app.store.collection(roles).get('super_admin')!).has('system:delete_bots'), 'the Super Admin can');
  const adminUser = await newUser('admin');
  const login = await as(undefined).post('/api/v2/auth/login', { email: adminUser.email, password: adminUser.password });
  t.equal((await as(login.json.access_token).request('/api/v2/bot?bot_idxs=999999', { method: 'DELETE' })).status, 403, 'DELETE /bot refused to an Admin');
});

t.test('escalation attempts are refused', async (t) => {
  const keyMaker = as(await newKey(['api_keys:create']));
  const grant = await keyMaker.post('/api/v2/auth/generate_api_key', { name: 'x', permission_keys: ['users:view'] });
  t.equal(grant.status, 403, 'cannot grant a permission it lacks');
  t.equal((await keyMaker.post('/api/v2/auth/generate_api_key', { name: 'x', permission_keys: ['api_keys:create'] })).status, 201);
  t.equal((await keyMaker.post('/api/v2/auth/generate_api_key', { name: 'x', permission_keys: ['no:such'] })).status, 422);
  keyMaker.close();

  const adminUser = await newUser('admin');
  const login = await as(undefined).post('/api/v2/auth/login', { email: adminUser.email, password: adminUser.password });
  const adminClient = as(login.json.access_token);
  const up = await adminClient.post('/api/v2/auth/create_account', { username: 'boss', email: 'boss@example.com', role_id: 'super_admin' });
  t.equal(up.status, 403, 'cannot create an account above its level');
  const peer = await adminClient.post('/api/v2/auth/create_account', { username: 'peer', email: 'peer@example.com', role_id: 'admin' });
  t.equal(peer.status, 403, 'nor at its own level');
  const sameLevel = await adminClient.post('/api/v2/auth/roles', { name: 'Peer', authority_level: 80 });
  t.equal(sameLevel.status, 403, 'cannot create a role at its own level');
  const self = await adminClient.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: adminUser.id, role_id: 'super_admin' } });
  t.equal(self.status, 403, 'cannot raise itself');
  const assignable = await adminClient.get('/api/v2/auth/roles/assignable');
  t.same(assignable.json.map((r: any) => r.id).sort(), ['operator', 'viewer']);
  t.equal((await adminClient.request('/api/v2/auth/roles/viewer', { method: 'PATCH', json: { name: 'x' } })).status, 409, 'seeded roles cannot be edited');
  t.equal((await admin.request('/api/v2/auth/roles/admin', { method: 'DELETE' })).status, 409, 'seeded roles cannot be deleted');

  // A token stops working when its user is gone.
  await a.app.store.write(() => a.app.store.collection(users).remove(adminUser.id));
  t.equal((await adminClient.get('/api/v2/auth/roles')).status, 401, 'token of a deleted user');
  adminClient.close();
});

t.test('custom roles: create, edit, assign, delete, and client_state moves', async (t) => {
  const before = (await admin.get('/api/v2/auth/client_state')).json.auth_version;
  const created = await admin.post('/api/v2/auth/roles', { name: 'Picker', authority_level: 30, permissions: ['jobs:view', 'jobs:trigger'] });
  t.equal(created.status, 201);
  t.match(created.json, { name: 'Picker', authority_level: 30, is_seeded: false, permissions: ['jobs:view', 'jobs:trigger'] });
  t.not((await admin.get('/api/v2/auth/client_state')).json.auth_version, before);
  t.equal((await admin.post('/api/v2/auth/roles', { name: 'picker', authority_level: 30 })).status, 409, 'names are unique');
  const edited = await admin.request(`/api/v2/auth/roles/${created.json.id}`, { method: 'PATCH', json: { permissions: ['jobs:manage'] } });
  t.same(edited.json.permissions, ['jobs:manage']);
  const perms = (await admin.get('/api/v2/auth/permissions')).json;
  t.same(perms.find((p: any) => p.key === 'jobs:trigger').roles.includes('Picker'), true, 'composites count as holding');
  t.same(perms.find((p: any) => p.key === 'jobs:manage').composes, ['jobs:view', 'jobs:trigger']);

  const u = await newUser(created.json.id);
  t.equal((await admin.request(`/api/v2/auth/roles/${created.json.id}`, { method: 'DELETE' })).status, 409, 'a held role stays');
  await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: u.id, role_id: 'viewer' } });
  t.equal((await admin.request(`/api/v2/auth/roles/${created.json.id}`, { method: 'DELETE' })).status, 200);
  t.equal((await admin.request(`/api/v2/auth/roles/${created.json.id}`, { method: 'DELETE' })).status, 404);
});

t.test('API keys: one-time value, listing, permissions patch, delete, last_used', async (t) => {
  const value = await newKey(['roles:view'], { never_expires: true });
  const list = await admin.get('/api/v2/auth/api_keys?size=1000');
  const info = list.json.items.find((k: any) => k.api_key === hintOf(value));
  t.ok(info, 'listed by its hint');
  t.notOk(list.text.includes(value), 'no list shows a key\'s value');
  t.match(info.owner, { email: 'admin@warehouse.local' }, 'with its owner');
  t.equal(info.expires_at, null);
  const stored = a.app.store.collection(apiKeys).get(info.id)!;
  t.notOk(JSON.stringify(stored).includes(value.slice(4)), 'the store keeps no form of the value but its digest');
  t.notOk('sealed_key' in stored);
  const defaultExpiry = await newKey([]);
  const d = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(defaultExpiry));
  const days = (Date.parse(d.expires_at_utc) - Date.now()) / 86400_000;
  t.ok(days > 29.9 && days <= 30, 'expires in 30 days by default');

  const user = as(value);
  t.equal((await user.get('/api/v2/auth/roles')).status, 200);
  await a.app.auth.lastUsed.flush();
  const used = (await admin.get(`/api/v2/auth/api_keys?id__eq=${info.id}`)).json.items[0];
  t.type(used.last_used_utc, 'string', 'last_used kept');

  const patched = await admin.request(`/api/v2/auth/api_keys/${info.id}/permissions`, { method: 'PATCH', json: { permission_keys: ['users:view'] } });
  t.same(patched.json, { api_key_id: info.id, message: 'Permissions replaced', permission_keys: ['users:view'] });
  t.equal((await user.get('/api/v2/auth/roles')).status, 403, 'the old permission is gone at once');
  t.equal((await user.get('/api/v2/auth/users')).status, 200);

  const del = await admin.request(`/api/v2/auth/api_keys/${info.id}`, { method: 'DELETE' });
  t.match(del.json, { deleted_key_id: info.id, deleted_key: /^whk_.{4}….{4}$/ });
  t.equal((await user.get('/api/v2/auth/users')).status, 401, 'a deleted key stops at once');
  t.equal((await admin.request(`/api/v2/auth/api_keys/${info.id}`, { method: 'DELETE' })).status, 404);
  t.equal((await admin.post('/api/v2/auth/generate_api_key', { name: 'p', expires_at: '2001-01-01T00:00:00Z' })).status, 422, 'expiry in the past');
  t.equal((await admin.post('/api/v2/auth/generate_api_key', { name: 'p', expires_at: '2999-01-01T00:00:00Z', never_expires: true })).status, 422);
  user.close();
});

t.test('a key in use is read from the store once, until a key, user or role changes or it expires', async (t) => {
  const expiresAt = Date.now() + 2000;
  const value = await newKey(['roles:view'], { expires_at: new Date(expiresAt).toISOString() });
  const user = as(value);
  const keys = a.app.store.collection(apiKeys);
  const findOne = keys.findOne;
  const digest = presentedDigest(a.app.auth.deps, value);
  let reads = 0;
  keys.findOne = function (this: typeof keys, ...args: Parameters<typeof findOne>) {
    if (args[1] === digest) reads++;
    return findOne.apply(this, args);
  } as typeof findOne;
  t.teardown(() => {
    keys.findOne = findOne;
    user.close();
  });
  for (let i = 0; i < 3; i++) t.equal((await user.get('/api/v2/auth/roles')).status, 200);
  t.equal(reads, 1, 'three requests, one read of the key');
  await newUser('operator');
  t.equal((await user.get('/api/v2/auth/roles')).status, 200);
  t.equal(reads, 2, 'a user written: the key is read again');
  await new Promise((resolve) => setTimeout(resolve, expiresAt + 50 - Date.now()));
  t.equal((await user.get('/api/v2/auth/roles')).status, 401, 'past its expiry, with nothing committed since: refused at once');
  t.equal(reads, 2, 'by the key kept, not by a read');
});

t.test('a key is bounded by its owner\'s authority at every use', async (t) => {
  const owner = await newUser('admin');
  const login = await as(undefined).post('/api/v2/auth/login', { email: owner.email, password: owner.password });
  const session = as(login.json.access_token);
  const made = await session.post('/api/v2/auth/generate_api_key', { name: 'admin key', permission_keys: ['users:view', 'users:update', 'roles:view'] });
  t.equal(made.status, 201);
  const key = as(made.json.api_key);
  t.equal((await key.get('/api/v2/auth/users')).status, 200, 'the key works while its owner is an admin');
  // The owner is demoted: the key is narrowed at once, and cannot win the role back.
  t.equal((await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: owner.id, role_id: 'operator' } })).status, 200);
  t.equal((await key.get('/api/v2/auth/users')).status, 403, 'after the demotion: refused');
  const back = await key.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: owner.id, role_id: 'admin' } });
  t.equal(back.status, 403, 'the key cannot re-promote its owner');
  t.equal((await admin.get(`/api/v2/auth/users?id__eq=${owner.id}`)).json.items[0].role, 'operator');
  // Permissions taken from the owner's role narrow it too; given back, they come back.
  const role = await admin.post('/api/v2/auth/roles', { name: `readers ${Math.random()}`, authority_level: 50, permissions: ['users:view', 'roles:view'] });
  await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: owner.id, role_id: role.json.id } });
  t.equal((await key.get('/api/v2/auth/users')).status, 200, 'within the owner\'s new role');
  await admin.request(`/api/v2/auth/roles/${role.json.id}`, { method: 'PATCH', json: { permissions: ['roles:view'] } });
  t.equal((await key.get('/api/v2/auth/users')).status, 403, 'a permission taken from the owner\'s role is gone from the key at once');
  t.equal((await key.get('/api/v2/auth/roles')).status, 200, 'the rest stays');
  // A key made by that key belongs to the same owner.
  await admin.request(`/api/v2/auth/roles/${role.json.id}`, { method: 'PATCH', json: { permissions: ['roles:view', 'api_keys:create'] } });
  // (A role change revoked the owner's tokens: log in again.)
  const again = as((await as(undefined).post('/api/v2/auth/login', { email: owner.email, password: owner.password })).json.access_token);
  const maker = as((await again.post('/api/v2/auth/generate_api_key', { name: 'key maker', permission_keys: ['api_keys:create', 'roles:view'] })).json.api_key);
  const keyMade = await maker.post('/api/v2/auth/generate_api_key', { name: 'grandchild', permission_keys: ['roles:view'] });
  t.equal(keyMade.status, 201);
  const grandchild = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(keyMade.json.api_key));
  t.equal(grandchild.owner.id, owner.id, 'a key made by a key has that key\'s owner');
  key.close();
});

t.test('users: create, reset, list with filters, update', async (t) => {
  const u = await newUser('operator');
  const list = await admin.get(`/api/v2/auth/users?email__eq=${encodeURIComponent(u.email)}`);
  t.equal(list.json.total, 1);
  t.match(list.json.items[0], { id: u.id, email: u.email, otp: null, role: 'operator', role_details: { id: 'operator', authority_level: 40 } });
  t.type(list.json.items[0].password_expires_at_utc, 'string');
  const byRole = await admin.get('/api/v2/auth/users?role__in=operator&role__in=viewer&sort_by=-id');
  t.ok(byRole.json.items.every((x: any) => ['operator', 'viewer'].includes(x.role)));
  const search = await admin.get(`/api/v2/auth/users?search=${encodeURIComponent(`email:${u.email.slice(0, 6)}`)}`);
  t.ok(search.json.items.some((x: any) => x.id === u.id));
  t.equal((await admin.get('/api/v2/auth/users?sort_by=nope')).status, 422);

  const updated = await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: u.id, username: 'renamed' } });
  t.same(updated.json, { id: u.id, username: 'renamed', email: u.email, role_id: 'operator' });
  t.equal((await admin.post('/api/v2/auth/create_account', { username: 'dup', email: u.email })).status, 409, 'emails are unique');
  t.equal((await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: 99999 } })).status, 404);

  const login = await as(undefined).post('/api/v2/auth/login', { email: u.email, password: u.password });
  t.equal(login.status, 200, 'the password set with the reset code works');
  const changed = await as(undefined).post('/api/v2/auth/reset_password', { email: u.email, old_password: u.password, new_password: 'Another-Secret-77' });
  t.equal(changed.status, 200);
  t.equal((await as(login.json.access_token).get('/api/v2/auth/authenticate')).status, 401, 'old tokens die with the old password');
  const badCode = await as(undefined).post('/api/v2/auth/reset_password', { email: u.email, otp: '00000000', new_password: 'Another-Secret-78' });
  t.equal(badCode.status, 401);
});

t.test('bad input on auth bodies', async (t) => {
  const policy = (await admin.get('/api/v2/auth/password_policy')).json;
  t.match(policy, { min_length: Number, require_digit: true, special_characters: String, special_characters_pattern: String });
  const u = await newUser('viewer');
  const attempts: [string, RegExp][] = [
    ['Sh0rt!', /at least/],
    ['no-digits-at-all-here!', /digit/],
    ['NO-LOWERCASE-1234!', /lowercase/],
    ['no-uppercase-1234!', /uppercase/],
    ['NoSpecialChars1234', /special/],
  ];
  for (const [pw, why] of attempts) {
    const r = await as(undefined).post('/api/v2/auth/reset_password', { email: u.email, old_password: u.password, new_password: pw });
    t.equal(r.status, 422, pw);
    t.match(JSON.stringify(r.json.detail), why);
  }
  const bodies: [string, string, unknown][] = [
    ['POST', '/api/v2/auth/create_account', { username: 'x', email: 'not-an-email' }],
    ['POST', '/api/v2/auth/create_account', { username: 'x', email: 'a@b.co', admin: true }],
    ['POST', '/api/v2/auth/create_account', { email: 'a@b.co' }],
    ['POST', '/api/v2/auth/create_account', { username: 'x'.repeat(256), email: 'a@b.co' }],
    ['POST', '/api/v2/auth/create_account', { username: 'x', email: 'a@b.co', role: 'no-such-role' }],
    ['PATCH', '/api/v2/auth/update_user', { user_id: 'one' }],
    ['PATCH', '/api/v2/auth/update_user', { user_id: 1, password: 'x' }],
    ['POST', '/api/v2/auth/roles', { name: 'x', authority_level: 'high' }],
    ['POST', '/api/v2/auth/roles', { name: '', authority_level: 1 }],
    ['POST', '/api/v2/auth/generate_api_key', { permission_keys: 'all' }],
    ['POST', '/api/v2/auth/login', { email: 'a@b.co' }],
    ['POST', '/api/v2/auth/login', { email: 'a@b.co', password: 'x'.repeat(300) }],
  ];
  for (const [method, url, json] of bodies) t.equal((await admin.request(url, { method, json })).status, 422, `${method} ${url} ${JSON.stringify(json).slice(0, 60)}`);
  const legacy = await admin.post('/api/v2/auth/create_account', { username: 'legacy', email: 'legacy@example.com', role: 'Operator' });
  t.equal(legacy.status, 201, 'the deprecated role field is honoured');
});

t.test('a password reset ends every refresh session of the user', async (t) => {
  const u = await newUser('viewer');
  const anon = as(undefined);
  const login = await anon.post('/api/v2/auth/login', { email: u.email, password: u.password });
  t.equal(login.status, 200);
  const other = await anon.post('/api/v2/auth/login', { email: u.email, password: u.password });
  const rotated = await anon.post('/api/v2/auth/refresh_token', { refresh_token: other.json.refresh_token });
  t.equal(rotated.status, 200);
  const changed = await anon.post('/api/v2/auth/reset_password', { email: u.email, old_password: u.password, new_password: 'Brand-New-Secret-91' });
  t.equal(changed.status, 200);
  t.equal((await anon.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token })).status, 401, 'a refresh token from before the reset');
  t.equal((await anon.post('/api/v2/auth/refresh_token', { refresh_token: rotated.json.refresh_token })).status, 401, 'and a rotated one too');
  const fresh = await anon.post('/api/v2/auth/login', { email: u.email, password: 'Brand-New-Secret-91' });
  t.equal((await anon.post('/api/v2/auth/refresh_token', { refresh_token: fresh.json.refresh_token })).status, 200, 'sessions after the reset work');
});

t.test('a role change ends the refresh sessions too', async (t) => {
  const u = await newUser('viewer');
  const anon = as(undefined);
  const login = await anon.post('/api/v2/auth/login', { email: u.email, password: u.password });
  t.equal((await admin.request('/api/v2/auth/update_user', { method: 'PATCH', json: { user_id: u.id, role_id: 'operator' } })).status, 200);
  t.equal((await anon.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token })).status, 401);
});

t.test('an expired password is refused at login and at refresh', async (t) => {
  const u = await newUser('viewer');
  const anon = as(undefined);
  const login = await anon.post('/api/v2/auth/login', { email: u.email, password: u.password });
  t.equal(login.status, 200);
  // Expiry is 180 days away; age the password in the store.
  const record = a.app.store.collection(users).get(u.id)!;
  await a.app.store.write(() => a.app.store.collection(users).put({ ...record, password_expires_at: Date.now() - 1000 }));
  const again = await anon.post('/api/v2/auth/login', { email: u.email, password: u.password });
  t.equal(again.status, 401);
  t.match(again.json.detail, /expired/);
  const refresh = await anon.post('/api/v2/auth/refresh_token', { refresh_token: login.json.refresh_token });
  t.equal(refresh.status, 401, 'refresh is refused as login is');
  t.match(refresh.json.detail, /expired/);
  const changed = await anon.post('/api/v2/auth/reset_password', { email: u.email, old_password: u.password, new_password: 'Renewed-Secret-55' });
  t.equal(changed.status, 200, 'the old password still sets a new one');
  t.equal((await anon.post('/api/v2/auth/login', { email: u.email, password: 'Renewed-Secret-55' })).status, 200);
});

/** Logs a fresh user of the role in; a client with its access token. */
async function userClient(role_id: string): Promise<Client> {
  const u = await newUser(role_id);
  const login = await as(undefined).post('/api/v2/auth/login', { email: u.email, password: u.password });
  if (login.status !== 200) throw new Error(login.text);
  return as(login.json.access_token);
}

async function listedKeys(c: Client): Promise<Map<number, string>> {
  const r = await c.get('/api/v2/auth/api_keys?size=1000');
  if (r.status !== 200) throw new Error(r.text);
  return new Map(r.json.items.map((k: any) => [k.id, k.api_key]));
}

async function generated(c: Client, permission_keys: string[]): Promise<{ id: number; value: string }> {
  const r = await c.post('/api/v2/auth/generate_api_key', { name: `g${Math.random()}`, permission_keys });
  if (r.status !== 201) throw new Error(r.text);
  const id = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(r.json.api_key)).id;
  return { id, value: r.json.api_key };
}

t.test('no list shows a key\'s value, whoever asks: the hint and the owner', async (t) => {
  const role = async (name: string, permissions: string[]) => (await admin.post('/api/v2/auth/roles', { name, authority_level: 50, permissions })).json.id;
  const keyViewer = await userClient(await role('Key viewer', ['api_keys:view', 'api_keys:create', 'jobs:view']));
  const adminUser = await userClient('admin');
  const own = await generated(keyViewer, ['jobs:view']);
  const adminsOwn = await generated(adminUser, ['jobs:view']);
  const bootstrapId = (await admin.get('/api/v2/auth/api_keys?name__eq=bootstrap')).json.items[0].id;
  for (const [who, client] of [['its maker', keyViewer], ['an Admin', adminUser], ['the bootstrap key', admin]] as const) {
    const listed = await listedKeys(client);
    t.equal(listed.get(own.id), hintOf(own.value), `${who} sees the hint`);
    t.equal(listed.get(adminsOwn.id), hintOf(adminsOwn.value));
    t.notOk([...listed.values()].some((v) => v === own.value || v === adminsOwn.value || v === boot.api_key), `${who} sees no value`);
  }
  t.equal((await listedKeys(admin)).get(bootstrapId), hintOf(boot.api_key));
});

t.test('deleting a key made with more authority is refused, as patching it is', async (t) => {
  const adminUser = await userClient('admin');
  const above = await newKey(['jobs:view']); // made with the bootstrap key: authority 100
  const aboveId = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(above)).id;
  t.equal((await adminUser.request(`/api/v2/auth/api_keys/${aboveId}`, { method: 'DELETE' })).status, 403);
  t.equal((await adminUser.request(`/api/v2/auth/api_keys/${aboveId}/permissions`, { method: 'PATCH', json: { permission_keys: [] } })).status, 403);
  t.equal((await as(above).get('/api/v2/jobs')).status, 200, 'the key still works');
  const own = await generated(adminUser, ['jobs:view']);
  t.equal((await adminUser.request(`/api/v2/auth/api_keys/${own.id}`, { method: 'DELETE' })).status, 200, 'its own key it may delete');
  t.equal((await as(own.value).get('/api/v2/jobs')).status, 401);
});

t.test('only the routes meant to be public are public', async (t) => {
  const open = a.app.server.router.routes.filter((r) => r.permission === null).map((r) => `${r.method} ${r.path}`).sort();
  t.same(open, [
    'GET /api',
    'GET /api/docs',
    'GET /api/docs/{file}',
    'GET /api/openapi.json',
    'GET /api/static/{file}',
    'GET /api/v2/auth/password_policy',
    'GET /api/v2/health',
    'GET /console',
    'GET /console/assets/{file}',
    'POST /api/v2/auth/forgot_password',
    'POST /api/v2/auth/login',
    'POST /api/v2/auth/logout',
    'POST /api/v2/auth/refresh_token',
    'POST /api/v2/auth/reset_password',
  ], 'a route made public by mistake fails here; docs/auth.md lists the same');
});

t.test('GET /auth/authenticate: identity, permissions, assigned permissions and settings', async (t) => {
  const key = as(await newKey(['jobs:manage']));
  const byKey = await key.get('/api/v2/auth/authenticate');
  t.equal(byKey.status, 200);
  t.same(byKey.json.permissions, ['jobs:manage', 'jobs:trigger', 'jobs:view'], 'composites expanded');
  t.same(byKey.json.assigned_permissions, ['jobs:manage'], 'as granted');
  t.match(byKey.json.user, { email: '', role_id: '', username: /^api_key:/ });
  t.ok(byKey.json.user.id < 0, 'a key\'s identity id is never a user\'s (users count from 1)');
  const users = (await admin.get('/api/v2/auth/users')).json;
  t.notOk((Array.isArray(users) ? users : users.items ?? []).some((u: { id: number }) => u.id === byKey.json.user.id), 'no user has it');
  t.equal(byKey.json.settings['api.jobs.showCreated'], false, 'settings resolved for the caller');

  const user = await userClient('operator');
  const byUser = await user.get('/api/v2/auth/authenticate');
  const operator = (await admin.get('/api/v2/auth/roles')).json.find((r: any) => r.id === 'operator');
  t.same(byUser.json.assigned_permissions, operator.permissions, 'the role\'s permissions');
  t.match(byUser.json.user, { role_id: 'operator', email: /@example\.com$/ });
  t.type(byUser.json.settings, 'object');
  t.equal((await admin.get('/api/v2/auth/authenticate')).json.settings['auth.accessTokenMinutes'], 15);
});

t.test('POST /requests needs the permission of the request type', async (t) => {
  const fulfillment = { type: 'FULFILLMENT', entities: [{ sku_id: 'A', quantity: 1 }] };
  const replenishment = { type: 'REPLENISHMENT', entities: [{ sku_id: 'A', quantity: 1 }] };
  const viewer = as(await newKey(['requests:view']));
  const denied = await viewer.post('/api/v2/requests', fulfillment);
  t.equal(denied.status, 403, 'viewing requests does not create them');
  t.match(denied.json, { code: String, detail: /requests:fulfillment/, request_id: String });
  const picker = as(await newKey(['requests:fulfillment']));
  const other = await picker.post('/api/v2/requests', replenishment);
  t.equal(other.status, 403, 'one creation permission does not grant another');
  t.match(other.json.detail, /requests:replenishment/);
  const own = await picker.post('/api/v2/requests', fulfillment);
  t.ok(![401, 403, 500].includes(own.status), `its own type gets through authorization (${own.status})`);
  t.not((await as(await newKey(['requests:manage'])).post('/api/v2/requests', replenishment)).status, 403, 'requests:manage composes every type');
});

t.test('bad input on the bodies of reset, refresh, forgot, role and key-permission changes', async (t) => {
  const role = (await admin.post('/api/v2/auth/roles', { name: 'Bad input target', authority_level: 20 })).json;
  const keyValue = await newKey([]);
  const keyId = (await admin.get('/api/v2/auth/api_keys?size=1000')).json.items.find((k: any) => k.api_key === hintOf(keyValue)).id;
  const long = 'x'.repeat(2000);
  const cases: [string, string, unknown][] = [
    ['POST', '/api/v2/auth/forgot_password', {}],
    ['POST', '/api/v2/auth/forgot_password', { email: 42 }],
    ['POST', '/api/v2/auth/forgot_password', { email: 'not-an-email' }],
    ['POST', '/api/v2/auth/forgot_password', { email: `${long}@example.com` }],
    ['POST', '/api/v2/auth/refresh_token', {}],
    ['POST', '/api/v2/auth/refresh_token', { refresh_token: 7 }],
    ['POST', '/api/v2/auth/refresh_token', { refresh_token: '' }],
    ['POST', '/api/v2/auth/refresh_token', { refresh_token: long }],
    ['POST', '/api/v2/auth/reset_password', {}],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co' }],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co', new_password: 12345678 }],
    ['POST', '/api/v2/auth/reset_password', { email: 'not-an-email', otp: '12345678', new_password: 'Good-Password-12' }],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co', otp: 12345678, new_password: 'Good-Password-12' }],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co', otp: long, new_password: 'Good-Password-12' }],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co', old_password: long, new_password: 'Good-Password-12' }],
    ['POST', '/api/v2/auth/reset_password', { email: 'a@b.co', new_password: 'Good-Password-12' }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { authority_level: 'high' }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { authority_level: -1 }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { name: '' }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { name: long }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { permissions: 'jobs:view' }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { permissions: ['no:such'] }],
    ['PATCH', `/api/v2/auth/roles/${role.id}`, { permissions: [long] }],
    ['PATCH', `/api/v2/auth/api_keys/${keyId}/permissions`, {}],
    ['PATCH', `/api/v2/auth/api_keys/${keyId}/permissions`, { permission_keys: 'jobs:view' }],
    ['PATCH', `/api/v2/auth/api_keys/${keyId}/permissions`, { permission_keys: [3] }],
    ['PATCH', `/api/v2/auth/api_keys/${keyId}/permissions`, { permission_keys: ['no:such'] }],
    ['PATCH', `/api/v2/auth/api_keys/${keyId}/permissions`, { permission_keys: [long] }],
    ['PATCH', '/api/v2/auth/api_keys/zero/permissions', { permission_keys: [] }],
  ];
  for (const [method, url, json] of cases) {
    const r = await admin.request(url, { method, json });
    const what = `${method} ${url.replace(/\/[0-9a-f-]{36}|\/\d+\//, '/…/')} ${JSON.stringify(json).slice(0, 50)}`;
    t.equal(r.status, 422, what);
    t.ok(Array.isArray(r.json?.detail) && r.json.detail.every((d: any) => Array.isArray(d.loc) && typeof d.msg === 'string' && typeof d.type === 'string'), `${what}: detail[] of {loc, msg, type}`);
  }
  const unchanged = (await admin.get('/api/v2/auth/roles')).json.find((r: any) => r.id === role.id);
  t.same(unchanged, { ...role, permissions: [] }, 'no bad body changed the role');
});

t.test('a start that refreshes the seeded roles moves auth_version', async (t) => {
  const version = async () => (await admin.get('/api/v2/auth/client_state')).json.auth_version;
  const viewer = a.app.store.collection(roles).get('viewer')!;
  // As a store from before the catalogue grew: the viewer role lacks a key.
  await a.app.store.write(() => a.app.store.collection(roles).put({ ...viewer, permissions: viewer.permissions.slice(1) }));
  const before = await version();
  const restarted = await Auth.open(a.app.auth.deps);
  await restarted.close();
  t.same(a.app.store.collection(roles).get('viewer')!.permissions, viewer.permissions, 'the seeded permissions are back');
  const after = await version();
  t.not(after, before, 'clients learn that permissions changed');
  const again = await Auth.open(a.app.auth.deps);
  await again.close();
  t.equal(await version(), after, 'a start that changes nothing leaves it');
});

t.test('every start warns while the first administrator\'s credentials file is there', async (t) => {
  const file = path.join(a.stateDir, 'bootstrap-admin.json');
  const warned = (lines: any[]) => lines.some((l) => l.level === 'warn' && l.file === file && /still in this file/.test(l.msg));
  const { logger, lines } = memoryLogger();
  const restarted = await Auth.open({ ...a.app.auth.deps, logger });
  await restarted.close();
  t.ok(warned(lines), 'a later start names the file');
  const kept = readFileSync(file);
  rmSync(file);
  t.teardown(() => writeFileSync(file, kept, { mode: 0o600 }));
  const quiet = memoryLogger();
  const again = await Auth.open({ ...a.app.auth.deps, logger: quiet.logger });
  await again.close();
  t.notOk(warned(quiet.lines), 'deleted: no warning');
});
