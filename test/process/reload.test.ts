// SIGHUP (systemctl reload) on a running daemon: a renewed certificate is served to new
// connections while open ones go on, the log level changes at once, a bad certificate is
// refused and the old one kept; a certificate near its end raises a warning event.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { Client } from '../helpers/client.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { DEFAULTS } from '../../src/config/config.js';
import { planReload } from '../../src/reload.js';
import { expiryWarning, notYetValidWarning } from '../../src/http/tls.js';

t.setTimeout(300_000);

const DAY = 24 * 3600_000;

/** A self-signed pair for localhost valid for `days` from `fromDays` away (yesterday by default). */
async function pair(days: number, fromDays = -1): Promise<{ cert: string; key: string; fingerprint: string }> {
  const notBefore = new Date(Date.now() + fromDays * DAY);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notBeforeDate: notBefore, notAfterDate: new Date(Date.now() + days * DAY),
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  });
  return { cert: pems.cert, key: pems.private, fingerprint: new X509Certificate(pems.cert).fingerprint256 };
}

/** The fingerprint of the certificate a new TLS connection is served. */
function served(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = s.getPeerX509Certificate()!.fingerprint256;
      s.destroy();
      resolve(fp);
    });
    s.once('error', reject);
  });
}

async function until(d: Daemon, test: (line: any) => boolean, what: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const line = d.lines.find(test);
    if (line) return line;
    if (d.child.exitCode !== null) throw new Error(`the daemon exited (${d.child.exitCode}) waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no log line: ${what}`);
}

t.test('planReload: the log level at once, the rest waits for a restart', async (t) => {
  const running = { ...DEFAULTS };
  const cases = [
    { next: { ...DEFAULTS }, logLevel: undefined, restartOnly: [], tls: undefined },
    { next: { ...DEFAULTS, log_level: 'debug' as const }, logLevel: 'debug', restartOnly: [], tls: undefined },
    { next: { ...DEFAULTS, port: 9443, site: 'other.json' }, logLevel: undefined, restartOnly: ['port', 'site'], tls: undefined },
    { next: { ...DEFAULTS, tls_cert: '/c.pem', tls_key: '/k.pem' }, logLevel: undefined, restartOnly: [], tls: { cert: '/c.pem', key: '/k.pem' } },
    { next: { ...DEFAULTS, tls_cert: '/c.pem' }, logLevel: undefined, restartOnly: [], tls: undefined },
  ];
  for (const c of cases) t.same(planReload(running, c.next), { logLevel: c.logLevel, restartOnly: c.restartOnly, tls: c.tls }, JSON.stringify(c.next));
});

t.test('expiryWarning: within 30 days only', async (t) => {
  const now = Date.parse('2026-11-25T00:00:00Z');
  t.equal(expiryWarning('/c.pem', now + 31 * DAY, now), undefined);
  t.match(expiryWarning('/c.pem', now + 10 * DAY + 3600_000, now), /c\.pem expires on 2026-12-05.*in 10 days/);
  t.match(expiryWarning('/c.pem', now + 3600_000, now), /in 0 days/);
});

t.test('notYetValidWarning: only for a certificate valid from after now', async (t) => {
  const now = Date.parse('2026-11-25T00:00:00Z');
  t.equal(notYetValidWarning('/c.pem', now - DAY, now), undefined);
  t.equal(notYetValidWarning('/c.pem', now, now), undefined);
  t.match(notYetValidWarning('/c.pem', now + 2 * DAY, now), /c\.pem is valid only from 2026-11-27T00:00:00\.000Z, and this box's clock says 2026-11-25T00:00:00\.000Z/);
});

t.test('a site certificate not yet valid by the box\'s clock: the daemon starts and warns (a clock behind must not stop the site)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-early-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const early = await pair(365, 2);
  writeFileSync(path.join(dir, 'cert.pem'), early.cert);
  writeFileSync(path.join(dir, 'key.pem'), early.key);
  const d = startDaemon({
    WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off',
    WAREHOUSE_TLS_CERT: path.join(dir, 'cert.pem'), WAREHOUSE_TLS_KEY: path.join(dir, 'key.pem'),
  });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await Promise.race([d.listening, new Promise<never>((_, reject) => d.child.once('exit', (code) => reject(new Error(`exited ${code}: ${d.stderr()}`))))]);
  t.equal(await served(port), early.fingerprint, 'serving the certificate');
  const warned = await until(d, (l) => l.level === 'warn' && /is valid only from/.test(l.msg), 'the warning');
  t.match(warned.msg, /clock is behind/);
  const key = JSON.parse(readFileSync(path.join(dir, 'state', 'bootstrap-admin.json'), 'utf8')).api_key as string;
  // This client shares the box's clock, so it too finds the certificate not yet valid: it skips that check.
  const events = await new Promise<any>((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, path: '/api/v2/events?hex_value__eq=0x1010', headers: { authorization: `Bearer ${key}` }, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(JSON.parse(body)));
    }).once('error', reject);
  });
  t.ok(events.items.some((e: any) => /is valid only from/.test(e.description)), 'event 0x1010');
});

t.test('SIGHUP: renewed certificate for new connections, open ones go on; a bad one is refused; log level', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-reload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const configFile = path.join(dir, 'config.json');
  const first = await pair(10); // expires within 30 days: a warning at start
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  writeFileSync(configFile, JSON.stringify({ tls_cert: certFile, tls_key: keyFile, log_level: 'info' }));
  const d = startDaemon({ WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off', WAREHOUSE_CONFIG: configFile });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await d.listening;
  t.equal(await served(port), first.fingerprint);
  const expiring = await until(d, (l) => l.level === 'warn' && /expires on/.test(l.msg), 'the expiry warning');
  t.match(expiring.msg, /in 9 days|in 10 days/);

  const key = JSON.parse(readFileSync(path.join(dir, 'state', 'bootstrap-admin.json'), 'utf8')).api_key as string;
  const open = new Client(port, Buffer.from(first.cert), key);
  t.teardown(() => open.close());
  const events = await open.get('/api/v2/events?hex_value__eq=0x1005');
  t.equal(events.status, 200);
  t.ok(events.json.items.some((e: any) => /expires on/.test(e.description)), 'event 0x1005 at start');

  // A renewal in place, and a log level for the brain and the API.
  const renewed = await pair(365);
  writeFileSync(certFile, renewed.cert);
  writeFileSync(keyFile, renewed.key);
  writeFileSync(configFile, JSON.stringify({ tls_cert: certFile, tls_key: keyFile, log_level: 'debug', max_page_size: 500 }));
  d.child.kill('SIGHUP');
  const reloaded = await until(d, (l) => /^configuration reloaded/.test(l.msg), 'the reload line');
  t.match(reloaded.msg, /certificate .*cert\.pem/);
  t.match(reloaded.msg, /log level debug/);
  t.match(reloaded.msg, /waiting for a restart: max_page_size/);
  t.equal(d.child.exitCode, null, 'still running');
  t.equal(await served(port), renewed.fingerprint, 'a new connection gets the renewed certificate');
  const again = await open.get('/api/v2/health');
  t.equal(again.text, 'OK', 'a connection opened before the reload goes on');
  const listed = await open.get('/api/v2/events?hex_value__eq=0x1006');
  t.ok(listed.json.items.some((e: any) => /log level debug/.test(e.description)), 'event 0x1006');
  const before = d.lines.length;
  const renewedClient = new Client(port, Buffer.from(renewed.cert), key);
  t.teardown(() => renewedClient.close());
  t.equal((await renewedClient.get('/api/v2/health')).text, 'OK');
  await until(d, (l) => d.lines.indexOf(l) >= before && l.level === 'debug', 'a debug line after the reload');

  // A broken renewal: refused, the renewed certificate stays.
  writeFileSync(certFile, 'garbage');
  d.child.kill('SIGHUP');
  const refused = await until(d, (l) => l.code === 'reload_refused', 'the refusal');
  t.equal(refused.level, 'error');
  t.match(refused.problems.join('\n'), /cert\.pem is not a PEM certificate/);
  t.equal(await served(port), renewed.fingerprint, 'the previous certificate is kept');
  t.equal((await renewedClient.get('/api/v2/events?hex_value__eq=0x1007')).json.items.length, 1, 'event 0x1007');
  t.equal(d.child.exitCode, null, 'still running');
});
