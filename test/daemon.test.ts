// The daemon as a process: start, serve HTTPS only, log JSON lines, stop cleanly on SIGTERM,
// refuse a bad configuration with a message naming the key.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from './helpers/client.js';
import { exited, startDaemon } from './helpers/daemon.js';

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

t.test('a bad configuration stops the start with the key named', async (t) => {
  const d = startDaemon({ WAREHOUSE_PORT: 'eighty', WAREHOUSE_TIMEZONE: 'Nowhere/Land' });
  t.equal(await exited(d.child), 78, 'EX_CONFIG');
  t.match(d.stderr(), /WAREHOUSE_PORT/);
  t.match(d.stderr(), /Nowhere\/Land/);
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
