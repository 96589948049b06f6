// The daemon as a process: start, serve HTTPS only, log JSON lines, stop cleanly on SIGTERM,
// refuse a bad configuration with a message naming the key.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '../helpers/client.js';
import { exited, startDaemon } from '../helpers/daemon.js';

// Each test starts a daemon from sources; on a loaded 2-core machine a start takes seconds.
t.setTimeout(600_000);

t.test('start, serve, stop on SIGTERM', async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LOG_LEVEL: 'debug' });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await d.listening;

  const client = new Client(port, readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem')));
  const r = await client.get('/api/v2/health');
  t.equal(r.text, 'OK');
  client.close();

  // Plain HTTP on the same port gets no HTTP answer: HTTPS only.
  const plain = await new Promise<string>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('GET /api/v2/health HTTP/1.1\r\nHost: x\r\n\r\n'));
    let got = '';
    s.on('data', (b) => (got += b.toString('latin1')));
    s.on('close', () => resolve(got));
    s.on('error', () => resolve(got));
    setTimeout(() => s.destroy(), 2000);
  });
  t.notMatch(plain, /HTTP\/1\.1 200/);

  const started = Date.now();
  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0, 'exits 0');
  t.ok(Date.now() - started < 10000, 'within the shutdown bound');
  t.ok(d.lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
  t.ok(d.lines.some((l) => l.msg === 'stopped'));
  t.ok(d.lines.every((l) => typeof l.level === 'string' && typeof l.time === 'string'), 'every line is structured JSON');
  t.ok(d.lines.some((l) => l.msg === 'request' && l.url === '/api/v2/health' && l.req_id), 'requests logged with their id');
});

t.test('SIGTERM while the daemon is still starting ends in an orderly close, not a signal death', async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0' });
  t.teardown(() => d.child.kill('SIGKILL'));
  // The first line is written before the store opens and the port binds.
  while (!d.lines.some((l) => l.msg === 'starting')) await new Promise((r) => setTimeout(r, 2));
  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0, 'exits 0, not killed by the signal');
  t.ok(d.lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
  t.ok(d.lines.some((l) => l.msg === 'stopped'), 'the store was closed');
});

t.test('a bad configuration stops the start with the key named', async (t) => {
  const d = startDaemon({ WAREHOUSE_PORT: 'eighty', WAREHOUSE_TIMEZONE: 'Nowhere/Land' });
  t.equal(await exited(d.child), 78, 'EX_CONFIG');
  const fatal = d.lines.find((l) => l.level === 'fatal');
  t.equal(fatal?.code, 'config_invalid', 'one structured line with a stable code');
  t.match(fatal?.problems.join('\n'), /WAREHOUSE_PORT/);
  t.match(fatal?.problems.join('\n'), /Nowhere\/Land/);
  t.match(fatal?.hint, /check-config/);
  t.equal(d.stderr(), '', 'nothing in plain text: the journal stays JSON');
});

t.test('a port in use fails the start with a clear message', async (t) => {
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => blocker.once('listening', r));
  t.teardown(() => blocker.close());
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const port = (blocker.address() as net.AddressInfo).port;
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: String(port) });
  t.equal(await exited(d.child), 70);
  t.ok(d.lines.some((l) => l.level === 'fatal' && /cannot listen/.test(l.err?.message ?? '')));
});

t.test('one daemon per state directory: a second one exits at once naming the first one\'s pid', async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  // A fixed port: an ephemeral one is never shared, whatever the socket options.
  const free = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => free.once('listening', r));
  const fixed = (free.address() as net.AddressInfo).port;
  await new Promise((r) => free.close(r));
  const first = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: String(fixed), WAREHOUSE_LINKS: 'off' });
  t.teardown(() => first.child.kill('SIGKILL'));
  const port = await first.listening;
  const second = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off' });
  t.equal(await exited(second.child), 78, 'a configuration problem: systemd does not restart it');
  const fatal = second.lines.find((l) => l.level === 'fatal');
  t.equal(fatal?.code, 'state_dir_in_use', 'one structured line with a code');
  t.match(fatal?.msg, new RegExp(`in use by another daemon \\(pid ${first.child.pid}\\)`));
  t.notOk(second.lines.some((l) => l.msg === 'store opened'), 'it opened nothing');
  t.equal(first.child.exitCode, null, 'the first one runs on');
  // The same port is not shared with another daemon either (it asks without SO_REUSEPORT first).
  const third = startDaemon({ WAREHOUSE_STATE_DIR: mkdtempSync(path.join(tmpdir(), 'wh-daemon-')), WAREHOUSE_PORT: String(port), WAREHOUSE_LINKS: 'off' });
  t.equal(await exited(third.child), 70, 'a daemon on another directory cannot bind the same port');
  first.child.kill('SIGTERM');
  t.equal(await exited(first.child), 0);
  // The lock goes with the process: a new daemon starts on the directory.
  const after = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off' });
  t.teardown(() => after.child.kill('SIGKILL'));
  t.ok(await after.listening, 'the directory is free once the first one stopped');
});

/**
 * A login whose body has not arrived in full: a request in flight for as long as the test
 * wants. Resolves once the daemon has it (uWS answers `Expect: 100-continue` from the handler).
 */
async function loginInFlight(port: number, ca: Buffer): Promise<{ socket: tls.TLSSocket; finish: () => Promise<string> }> {
  const body = JSON.stringify({ email: 'nobody@example.com', password: 'not-the-password' });
  const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca, checkServerIdentity: () => undefined }, () => resolve(s));
    s.once('error', reject);
  });
  socket.on('error', () => undefined); // the daemon may cut it off; the test looks at what came back
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.write(`POST /api/v2/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
  socket.write(body.slice(0, 10));
  while (!text.includes('100 Continue')) await new Promise((r) => setTimeout(r, 10));
  text = '';
  return {
    socket,
    finish: () => new Promise((resolve) => {
      // Cut off already (the shutdown's bound passed): what came back is the answer.
      if (socket.closed) return resolve(text);
      socket.write(body.slice(10));
      const done = () => (/\r\n\r\n/.test(text) ? resolve(text) : undefined);
      socket.on('data', done);
      socket.once('close', () => resolve(text));
    }),
  };
}

/** Whether a TCP connection to the port is accepted. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} with a request in flight: it is answered, then the process exits 0`, async (t) => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
    t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
    const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0' });
    t.teardown(() => d.child.kill('SIGKILL'));
    const port = await d.listening;
    const ca = readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem'));
    const login = await loginInFlight(port, ca);

    d.child.kill(signal);
    // The rest of the body only once the daemon refuses new connections: it is closing, and waits.
    while (await accepts(port)) await new Promise((r) => setTimeout(r, 10));
    const answer = await login.finish();
    t.match(answer, /^HTTP\/1\.1 401 /, 'the in-flight login got its answer, not a refusal');
    login.socket.destroy();
    t.equal(await exited(d.child), 0, 'exits 0');
    t.ok(d.lines.some((l) => l.msg === 'shutting down' && l.signal === signal));
    t.ok(d.lines.some((l) => l.msg === 'request' && l.url === '/api/v2/auth/login' && l.status === 401), 'the request was logged as answered');
    t.notOk(d.lines.some((l) => l.msg === 'shutdown timeout: requests still running were cut off'));
    t.ok(d.lines.some((l) => l.msg === 'stopped'));
  });
}

t.test('a request that outlasts shutdown_timeout_ms does not hold the process past its bound', async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const timeoutMs = 500;
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_SHUTDOWN_TIMEOUT_MS: String(timeoutMs) });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await d.listening;
  const login = await loginInFlight(port, readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem')));
  t.teardown(() => login.socket.destroy());

  const started = Date.now();
  d.child.kill('SIGTERM');
  const code = await exited(d.child);
  // main.ts ends the process at the latest shutdown_timeout_ms + 5 s after the signal (then with 1).
  t.ok(Date.now() - started < timeoutMs + 5000, 'exits within the shutdown bound');
  t.equal(code, 0, 'a clean exit: the store was closed');
  t.ok(d.lines.some((l) => l.msg === 'shutdown timeout: requests still running were cut off' && l.unfinished === 1), 'says a request was cut off');
  t.ok(d.lines.some((l) => l.msg === 'stopped'));
});
