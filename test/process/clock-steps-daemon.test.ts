// The daemon as a real process whose wall clock is stepped under it by libfaketime, as NTP
// steps a box that booted with a wrong hardware clock: it starts 5 h ahead, goes back to the
// right time, then 3 h forward. Token lifetimes and login rate limits must hold across the
// steps; the monotonic clock is left alone (DONT_FAKE_MONOTONIC), as a step leaves it. Unit
// tests of the same rules with faked clocks, both directions: test/api/clock-steps.test.ts.
import t from 'tap';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startWithClient } from '../helpers/daemon.js';
import { Client } from '../helpers/client.js';
import { until } from '../helpers/until.js';
import { libfaketime, steppedClock } from '../helpers/faketime.js';

// One daemon start from sources; on a loaded 2-core machine that takes seconds.
t.setTimeout(300_000);

const LIB = libfaketime();

t.test('token lifetimes and login limits across steps of the wall clock of a running daemon', { skip: LIB ? false : 'no libfaketime (apt-get install faketime; .ci/run installs it)' }, async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-clock-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  // libfaketime reads the offset from this file at every reading of the clock (no cache): writing it steps the clock.
  const clockFile = path.join(stateDir, 'faketime');
  // Renamed into place: a reading must never find the file half written.
  const step = (offset: string): void => {
    writeFileSync(`${clockFile}.new`, `${offset}\n`);
    renameSync(`${clockFile}.new`, clockFile);
  };
  step('+5h');
  const { c } = await startWithClient(t, path.join(stateDir, 'state'), {
    WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off',
    ...steppedClock(clockFile),
  });
  const anon = new Client(c.port, readFileSync(path.join(stateDir, 'state/tls/self-signed-cert.pem')));
  t.teardown(() => anon.close());
  const boot = JSON.parse(readFileSync(path.join(stateDir, 'state/bootstrap-admin.json'), 'utf8')) as { email: string; password: string };
  /** Waits until the daemon's clock (its answers' Date header, refreshed every second) is `hours` off ours. */
  const runsAt = (hours: number) => until(`the daemon's clock ${hours} h off`, async () => {
    const date = Date.parse(String((await c.get('/api/v2/health')).headers.date));
    return Math.abs(date - Date.now() - hours * 3600_000) < 1800_000;
  });
  await runsAt(5);

  const login = (email: string) => anon.post('/api/v2/auth/login', { email, password: 'Wrong-Guess-1!' });

  const tokens = await anon.post('/api/v2/auth/login', { email: boot.email, password: boot.password });
  t.equal(tokens.status, 200);
  const bearer = { authorization: `Bearer ${tokens.json.access_token as string}` };
  t.equal((await anon.get('/api/v2/auth/authenticate', bearer)).status, 200);
  // The free failures of an account: its next attempt is refused for a second from the last.
  const locked = 'nobody@example.com';
  for (let i = 0; i < 5; i++) t.equal((await login(locked)).status, 401);

  step('+0'); // NTP sets the clock right: 5 h back
  await runsAt(0);
  t.equal((await anon.get('/api/v2/auth/authenticate', bearer)).status, 401, 'the access token issued 5 h "ahead" does not live 5 h longer');
  const refreshed = await anon.post('/api/v2/auth/refresh_token', { refresh_token: tokens.json.refresh_token });
  t.equal(refreshed.status, 200, 'its refresh token still refreshes');
  t.equal((await anon.get('/api/v2/auth/authenticate', { authorization: `Bearer ${refreshed.json.access_token as string}` })).status, 200);
  const retryAfter = new Set<string>();
  await until('the lock to run out', async () => {
    const r = await login(locked);
    if (r.status === 429) retryAfter.add(String(r.headers['retry-after']));
    return r.status === 401;
  });
  t.same([...retryAfter].filter((s) => s !== '1'), [], 'the account was never locked for more than its second, not for 5 h');

  step('+3h');
  await runsAt(3);
  t.equal((await anon.get('/api/v2/auth/authenticate', { authorization: `Bearer ${refreshed.json.access_token as string}` })).status, 401, 'an access token expires with a step forward past its end');
  t.equal((await c.get('/api/v2/health')).text, 'OK');
});
