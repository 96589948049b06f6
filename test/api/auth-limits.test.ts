// Abuse resistance over the real API: login and password-reset attempts limited per account
// and per client address with growing delays, parallel guesses included, and answers that do
// not tell whether an email exists. The limiters' (monotonic) clock stands still and is moved forward by the
// tests instead of waiting, so slow password checks on a busy machine change nothing; each
// test starts past the limiter's one-hour window, so none inherits another's failures.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';

let a: AdminApp;
let anon: Client;
let offset = 0;

t.before(async () => {
  a = await startAdminApp();
  anon = new Client(a.app.port, readFileSync(a.app.tls.certFile));
  const start = performance.now();
  a.app.auth.deps.monotonic = () => start + offset;
});
t.teardown(async () => {
  anon.close();
  await a.close();
});

/** Moves the limiters' clock forward. */
function advance(ms: number): void {
  offset += ms;
}

/** Every test starts with the limiters' windows (one hour) behind it. */
t.beforeEach(() => advance(2 * 3600_000));

const login = (email: string, password: string) => anon.post('/api/v2/auth/login', { email, password });
const forgot = (email: string) => anon.post('/api/v2/auth/forgot_password', { email });

/** A viewer with a password set through the reset outbox. */
async function newUser(): Promise<{ email: string; password: string }> {
  const email = `u${Math.random().toString(36).slice(2)}@example.com`;
  const created = await a.admin.post('/api/v2/auth/create_account', { username: email.split('@')[0], email, role_id: 'viewer' });
  if (created.status !== 201) throw new Error(created.text);
  const dir = path.join(a.stateDir, 'password-resets');
  const entry = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).find((e) => e.email === email);
  const password = 'Correct-Horse-42';
  const reset = await anon.post('/api/v2/auth/reset_password', { email, new_password: password, otp: entry.code });
  if (reset.status !== 200) throw new Error(reset.text);
  return { email, password };
}

function statuses(answers: { status: number }[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of answers) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

t.test('the failure that starts a lock records the lockout, however long its password check took', async (t) => {
  // On a loaded machine the fifth check outlasted the first delay (1 s): the lock had run out
  // by the time the failure was counted, and no lockout event was written (CI, events.test).
  const u = await newUser();
  for (let i = 0; i < 4; i++) await login(u.email, `Wrong-Guess-${i}!`);
  const lockouts = async () => (await a.admin.request('/api/v2/events?hex_value__eq=0x2002&size=1')).json.total as number;
  const before = await lockouts();
  const steady = a.app.auth.deps.monotonic!;
  let reads = 0;
  // Each reading of the limiters' clock comes 2 s after the last.
  a.app.auth.deps.monotonic = () => steady() + 2000 * ++reads;
  try {
    t.equal((await login(u.email, 'Wrong-Guess-5!')).status, 401);
  } finally {
    a.app.auth.deps.monotonic = steady;
    advance(2000 * reads);
  }
  t.equal(await lockouts(), before + 1, 'the lockout is recorded');
});

t.test('parallel wrong logins: only the free attempts are checked, the rest wait', async (t) => {
  const u = await newUser();
  const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => login(u.email, `Wrong-Guess-${i}!`)));
  t.same(statuses(burst), { 401: 5, 429: 7 }, 'five checked (the free failures per account), seven refused');
  t.equal((await login(u.email, u.password)).status, 429, 'even the right password waits');
});

t.test('per account: delays grow 1 s, 2 s, 4 s; a success clears them', async (t) => {
  const u = await newUser();
  for (let i = 0; i < 5; i++) t.equal((await login(u.email, `Wrong-Guess-${i}!`)).status, 401);
  for (const seconds of [1, 2, 4]) {
    const refused = await login(u.email, 'Wrong-Guess-x!');
    t.equal(refused.status, 429);
    t.equal(refused.headers['retry-after'], String(seconds), `then wait ${seconds} s`);
    advance(seconds * 1000);
    t.equal((await login(u.email, 'Wrong-Guess-y!')).status, 401, 'one more guess after the wait');
  }
  advance(8000);
  t.equal((await login(u.email, u.password)).status, 200);
  t.equal((await login(u.email, 'Wrong-Guess-z!')).status, 401, 'the success cleared the account\'s count');
  t.equal((await login(u.email, u.password)).status, 200);
});

t.test('per address: twenty failures over any accounts, then every login from there waits', async (t) => {
  const u = await newUser();
  for (let i = 0; i < 20; i++) t.equal((await login(`nobody${i}@example.com`, 'Wrong-Guess-1!')).status, 401);
  const refused = await login(u.email, u.password);
  t.equal(refused.status, 429, 'an account never tried before, from the same address');
  t.equal(refused.headers['retry-after'], '1');
  advance(1000);
  t.equal((await login('nobody-else@example.com', 'Wrong-Guess-1!')).status, 401);
  t.equal((await login(u.email, u.password)).headers['retry-after'], '2', 'the address delay grows too');
  advance(2000);
  t.equal((await login(u.email, u.password)).status, 200);
});

t.test('forgot_password: five codes per account, then 429, whether the account exists or not', async (t) => {
  const u = await newUser();
  for (const email of [u.email, 'nobody@example.com']) {
    for (let i = 0; i < 5; i++) t.equal((await forgot(email)).status, 202);
    const refused = await forgot(email);
    t.equal(refused.status, 429, email);
    t.match(refused.headers['retry-after'], /^\d+$/);
  }
});

t.test('forgot_password answers the same for a known and an unknown email', async (t) => {
  const u = await newUser();
  const known = await forgot(u.email);
  const unknown = await forgot('nobody-at-all@example.com');
  t.equal(known.status, 202);
  t.equal(unknown.status, known.status);
  t.same(unknown.json, known.json);
  t.equal(unknown.headers['content-type'], known.headers['content-type']);
});

t.test('forgot_password moves auth_version alike for a known and an unknown email', async (t) => {
  const u = await newUser();
  const version = async () => Number((await a.admin.get('/api/v2/auth/client_state')).json.auth_version);
  const v0 = await version();
  await forgot(u.email);
  const v1 = await version();
  await forgot('nobody-at-all@example.com');
  const v2 = await version();
  t.ok(v1 > v0, 'a new code changes the user (otp_expires_at)');
  t.equal(v2 - v1, v1 - v0, 'client_state cannot tell the two apart');
});

t.test('reset_password with the old password: limited per account, parallel guesses included', async (t) => {
  const u = await newUser();
  const reset = (old_password: string) => anon.post('/api/v2/auth/reset_password', { email: u.email, old_password, new_password: 'Fresh-Secret-314' });
  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => reset(`Wrong-Old-${i}!`)));
  t.same(statuses(burst), { 401: 5, 429: 5 });
  t.equal((await reset(u.password)).status, 429, 'the right old password waits too');
  advance(1000);
  t.equal((await reset(u.password)).status, 200);
});

t.test('reset_password with a code: wrong codes are limited as passwords are', async (t) => {
  const u = await newUser();
  const reset = (otp: string) => anon.post('/api/v2/auth/reset_password', { email: u.email, otp, new_password: 'Fresh-Secret-314' });
  for (let i = 0; i < 5; i++) t.equal((await reset(String(10_000_000 + i))).status, 401);
  t.equal((await reset('20000000')).status, 429);
});

t.test('a new password failing the policy is not counted as a guess', async (t) => {
  const u = await newUser();
  for (let i = 0; i < 8; i++) {
    const r = await anon.post('/api/v2/auth/reset_password', { email: u.email, old_password: u.password, new_password: 'short' });
    t.equal(r.status, 422);
  }
  t.equal((await login(u.email, u.password)).status, 200);
});
