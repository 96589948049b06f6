// Durations across a step of the wall clock (a box booted with a wrong hardware clock, NTP
// setting it right by hours): waits kept in memory run on the monotonic clock, and waits kept
// as stored instants are bounded by their own length. The wall clock and the monotonic one are
// both fakes here, moved by the tests; nothing waits for real time. The whole daemon under
// libfaketime is test/process/clock-steps-daemon.test.ts.
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAdminApp, type AdminApp } from '../helpers/app.js';
import { Client } from '../helpers/client.js';
import { memoryLogger } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { sessions } from '../../src/domain/auth/records.js';
import { issuedAhead, pruneSessions } from '../../src/domain/auth/tokens.js';
import { retryDue } from '../../src/brain/worker/policy/recovery.js';
import { boundedEnd, setBeforeStepBack, STEP_SLACK_MS, waitedFor } from '../../src/domain/wall-clock.js';
import { SupportOutbox } from '../../src/domain/support/outbox.js';
import { SupportForwarder } from '../../src/domain/support/forwarder.js';

const HOUR = 3600_000;
const NOW = Date.parse('2026-10-25T01:30:00Z');

t.test('stored instants that stand for a wait, against steps of the wall clock', async (t) => {
  // [what, end, longest, now, set before a step back, bounded end]
  const ends: [string, number, number, number, boolean, number][] = [
    ['a refresh session as issued', NOW + 7 * 24 * HOUR, 7 * 24 * HOUR, NOW, false, NOW + 7 * 24 * HOUR],
    ['issued 5 h ahead', NOW + 5 * HOUR + 7 * 24 * HOUR, 7 * 24 * HOUR, NOW, true, NOW + 7 * 24 * HOUR],
    ['issued within the slack ahead', NOW + STEP_SLACK_MS + 7 * 24 * HOUR, 7 * 24 * HOUR, NOW, false, NOW + STEP_SLACK_MS + 7 * 24 * HOUR],
    ['issued 5 h behind (the clock went forward): ends early, as it would', NOW - 5 * HOUR + 15 * 60_000, 15 * 60_000, NOW, false, NOW - 5 * HOUR + 15 * 60_000],
    ['already over', NOW - 1, 1000, NOW, false, NOW - 1],
  ];
  for (const [what, end, longest, now, ahead, bounded] of ends) {
    t.equal(setBeforeStepBack(end, longest, now), ahead, `${what}: set before a step back`);
    t.equal(boundedEnd(end, longest, now), bounded, `${what}: its end`);
  }
  // [what, since, limit, now, waited]
  const waits: [string, number, number, number, boolean][] = [
    ['not yet', NOW - 1000, 30_000, NOW, false],
    ['just', NOW - 30_000, 30_000, NOW, true],
    ['began 5 h "ahead": the clock went back since', NOW + 5 * HOUR, 30_000, NOW, true],
    ['began a little ahead: no step', NOW + 30_000, 30_000, NOW, false],
    ['began 5 h before a step forward', NOW - 5 * HOUR, 30_000, NOW, true],
  ];
  for (const [what, since, limit, now, waited] of waits) t.equal(waitedFor(since, limit, now), waited, what);
});

t.test('access tokens and retries, judged at a wall time', async (t) => {
  const sec = (ms: number) => Math.floor(ms / 1000);
  // [what, iat, exp, now, refused for being issued ahead]
  const tokens: [string, number, number, number, boolean][] = [
    ['as issued', sec(NOW), sec(NOW) + 900, NOW, false],
    ['issued 5 h ahead of now', sec(NOW + 5 * HOUR), sec(NOW + 5 * HOUR) + 900, NOW, true],
    ['issued 30 s ahead (NTP slewing, rounding)', sec(NOW + 30_000), sec(NOW + 30_000) + 900, NOW, false],
    ['issued 5 h before a step forward (jose says expired)', sec(NOW - 5 * HOUR), sec(NOW - 5 * HOUR) + 900, NOW, false],
  ];
  for (const [what, iat, exp, now, refused] of tokens) t.equal(issuedAhead({ iat, exp }, now), refused, what);
  t.equal(issuedAhead({ exp: sec(NOW) + 900 }, NOW), true, 'no iat: refused');
  // [what, created_at, retry_at, now, due]
  const retries: [string, number, number | null, number, boolean][] = [
    ['no retry wait', NOW, null, NOW, true],
    ['waiting out its 4 s', NOW - 1000, NOW + 3000, NOW, false],
    ['waited', NOW - 4000, NOW, NOW, true],
    ['set 5 h "ahead": the clock went back since', NOW + 5 * HOUR, NOW + 5 * HOUR + 4000, NOW, true],
    ['set 5 h before a step forward', NOW - 5 * HOUR, NOW - 5 * HOUR + 4000, NOW, true],
  ];
  for (const [what, created_at, retry_at, now, due] of retries) t.equal(retryDue({ created_at, retry_at }, now), due, what);
});

t.test('the auth domain across wall-clock steps', async (t) => {
  let a: AdminApp;
  let anon: Client;
  /** The wall clock is the real one plus `wallOffset`; the monotonic one moves only when told. */
  let wallOffset = 0;
  let mono = 0;

  t.before(async () => {
    a = await startAdminApp();
    anon = new Client(a.app.port, readFileSync(a.app.tls.certFile));
    a.app.auth.deps.now = () => Date.now() + wallOffset;
    a.app.auth.deps.monotonic = () => mono;
  });
  t.teardown(async () => {
    anon.close();
    await a.close();
  });
  // Every test starts with the wall clock right and the limiters' windows (one hour) behind it.
  t.beforeEach(() => {
    wallOffset = 0;
    mono += 2 * HOUR;
  });

  const login = (email: string, password: string) => anon.post('/api/v2/auth/login', { email, password });
  /** Fails the free attempts of an account; the next one is refused for the first delay (1 s). */
  async function lockOut(t: Test): Promise<string> {
    const email = `nobody-${Math.random().toString(36).slice(2)}@example.com`;
    for (let i = 0; i < 5; i++) t.equal((await login(email, 'Wrong-Guess-1!')).status, 401);
    const refused = await login(email, 'Wrong-Guess-1!');
    t.equal(refused.status, 429, 'locked out');
    t.equal(refused.headers['retry-after'], '1');
    return email;
  }

  t.test('a step back of hours does not lock an account out for those hours', async (t) => {
    const email = await lockOut(t);
    wallOffset = -3 * HOUR;
    mono += 1001;
    const next = await login(email, 'Wrong-Guess-1!');
    t.equal(next.status, 401, `tried again once the lock ran out (retry-after ${next.headers['retry-after'] ?? 'none'})`);
  });

  t.test('a step forward of hours does not forgive the failures', async (t) => {
    const email = await lockOut(t);
    wallOffset = 3 * HOUR;
    t.equal((await login(email, 'Wrong-Guess-1!')).status, 429, 'still locked');
  });

  t.test('an access token issued while the clock was hours ahead stops working when it is set right; refreshing gives one that works', async (t) => {
    wallOffset = 5 * HOUR;
    const tokens = await login(a.boot.email, a.boot.password);
    t.equal(tokens.status, 200);
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    t.equal((await anon.get('/api/v2/auth/authenticate', bearer(tokens.json.access_token))).status, 200, 'valid while the clock stays ahead');
    wallOffset = 0;
    t.equal((await anon.get('/api/v2/auth/authenticate', bearer(tokens.json.access_token))).status, 401, 'not valid for 5 h more');
    const refreshed = await anon.post('/api/v2/auth/refresh_token', { refresh_token: tokens.json.refresh_token });
    t.equal(refreshed.status, 200, 'the refresh token still refreshes');
    t.equal((await anon.get('/api/v2/auth/authenticate', bearer(refreshed.json.access_token))).status, 200);
  });

  t.test('a refresh session started while the clock was hours ahead expires one lifetime after it is set right', async (t) => {
    wallOffset = 5 * HOUR;
    const tokens = await login(a.boot.email, a.boot.password);
    t.equal(tokens.status, 200);
    const id = /^whr_([0-9a-f-]{36})\./.exec(tokens.json.refresh_token)![1]!;
    const lifetime = a.app.auth.deps.settings().refreshTokenSeconds * 1000;
    wallOffset = 0;
    await pruneSessions(a.app.auth.deps);
    const session = a.app.store.collection(sessions).get(id)!;
    t.ok(session.expires_at <= Date.now() + lifetime + 1000, `expires ${((session.expires_at - Date.now()) / HOUR).toFixed(1)} h from now`);
    t.ok(session.expires_at > Date.now() + lifetime - 60_000, 'and not before');
  });

  t.test('a reset code issued while the clock was hours ahead is refused once it is set right', async (t) => {
    wallOffset = 5 * HOUR;
    t.equal((await anon.post('/api/v2/auth/forgot_password', { email: a.boot.email })).status, 202);
    const dir = path.join(a.stateDir, 'password-resets');
    const code = readdirSync(dir).map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).find((e) => e.email === a.boot.email).code as string;
    wallOffset = 0;
    const reset = await anon.post('/api/v2/auth/reset_password', { email: a.boot.email, otp: code, new_password: 'Another-Horse-43' });
    t.equal(reset.status, 401, 'a code issued 5 h "from now" would live 5 h 15 min');
  });
});

t.test('support forwarding retries on time after the wall clock went back 5 hours', async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-clock-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  let answers = 0;
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answers++;
      if (answers === 1) res.writeHead(503, { 'retry-after': '0' }).end('busy');
      else res.writeHead(201, { 'content-type': 'application/json' }).end('{"key":"REMOTE-1"}');
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  t.teardown(() => endpoint.close());
  const outbox = await SupportOutbox.open(stateDir);
  let wallOffset = 0;
  const forwarder = new SupportForwarder({
    outbox, url: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/`, logger: memoryLogger('silent').logger, baseDelayMs: 20, maxDelayMs: 200,
    now: () => Date.now() + wallOffset,
    // Drawn when a failed attempt's retry is set: the clock goes back right after.
    random: () => {
      wallOffset = -5 * HOUR;
      return 0.5;
    },
  });
  t.teardown(() => forwarder.close());
  await forwarder.start();
  const issue = await outbox.create({ payload: { title: 'clock' }, files: [] });
  const done = await until('the retry', async () => {
    const { status } = await outbox.get(issue.key);
    return status.status === 'forwarded' ? status : undefined;
  });
  t.equal(done.attempts, 2, 'forwarded by the retry, not 5 h later');
});

t.test('waits kept in memory in the brain, its host, the lines and the bot stream read the monotonic clock', async (t) => {
  // Their state is made anew at each start, so nothing there needs the wall clock; reading it
  // stretched a charging retry, a fault clearing or a restart backoff by a step back of hours.
  const root = path.join(import.meta.dirname, '../..');
  const files = ['src/brain/worker/motion/planned-motion.ts', 'src/brain/host/host.ts', 'src/lines/simulated-site.ts', 'src/http/routes/bot-stream.ts'];
  for (const file of files) t.notMatch(readFileSync(path.join(root, file), 'utf8'), /Date\.now\(\)/, file);
  // The brain reads the wall clock for the instants it stores; its own waits take the other one.
  const source = (file: string) => readFileSync(path.join(root, 'src/brain/worker', file), 'utf8');
  t.match(source('storage-status.ts'), /this\.startedAt = this\.deps\.monotonic\(\)/, 'the silent-level grace');
  t.match(source('auto-charging.ts'), /refusedUntil\.set\(bot\.id, this\.deps\.monotonic\(\) \+ CHARGE_RETRY_MS\)/, 'a refused charging request');
  t.match(source('level-recovery.ts'), /const now = this\.deps\.monotonic\(\);\n\s+const held = motion\.bots\(\)/, 'reading held carriers again');
  for (const file of ['brain.ts', 'storage-status.ts', 'auto-charging.ts', 'level-recovery.ts', 'control-jobs.ts']) t.notMatch(source(file), /Date\.now\(\)/, `no wall clock in ${file}`);
});
