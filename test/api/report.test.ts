// The diagnostics report: the archive's contents are listed and scanned for every secret the
// box holds; old archives are pruned; the download serves the same bytes.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { extract, list } from 'tar';
import { startAdminApp, type AdminApp, type Bootstrap } from '../helpers/app.js';
import { Client } from '../helpers/client.js';
import { REPORTS_KEPT, publicConfig, redactUrl } from '../../src/domain/diagnostics/report.js';
import { loadConfig } from '../../src/config/config.js';

let a: AdminApp;
let c: Client;
let boot: Bootstrap;

// A support endpoint whose URL carries credentials in every place a URL can.
const SUPPORT_URL = 'https://intake-user:intake-password-xyz@127.0.0.1:9/support/intake?token=support-query-token-9f8e7d#fragment-secret-5a4b';
const URL_SECRETS = ['intake-password-xyz', 'support-query-token-9f8e7d', 'fragment-secret-5a4b'];

t.before(async () => {
  a = await startAdminApp({ WAREHOUSE_SUPPORT_URL: SUPPORT_URL });
  ({ admin: c, boot } = a);
});
t.teardown(() => a.close());

/** Every file of the state directory that holds a secret, as text. */
function secrets(): string[] {
  const out = [boot.password, boot.api_key, readFileSync(a.app.tls.keyFile, 'utf8').split('\n').slice(1, 3).join('')];
  for (const f of readdirSync(path.join(a.stateDir, 'secrets'))) out.push(readFileSync(path.join(a.stateDir, 'secrets', f)).toString('base64'), readFileSync(path.join(a.stateDir, 'secrets', f)).toString('hex'));
  return out.filter((s) => s.length >= 16);
}

t.test('GET /report builds an archive with the listed contents and no secret', async (t) => {
  // Things that could leak if the report were careless: a custom setting holding a password, a login.
  await c.request('/api/v2/settings', { method: 'POST', json: { key: 'wms.password', value_json: 'integrator-secret-value-123' } });
  const login = await c.request('/api/v2/auth/login', { method: 'POST', json: { email: boot.email, password: boot.password } });
  t.equal(login.status, 200);
  const tokens: string[] = [login.json.access_token, login.json.refresh_token];

  const r = await c.request('/api/v2/report');
  t.equal(r.status, 200);
  t.match(r.json, { status: 'generated', report: 'generated', tar_filename: /^report-\d{8}T\d{9}Z\.tar\.gz$/ });
  t.equal(r.json.report_path, path.join(a.stateDir, 'reports', r.json.tar_filename));

  const names: string[] = [];
  await list({ file: r.json.report_path, onReadEntry: (e: { path: string }) => names.push(e.path) } as never);
  const base = r.json.tar_filename.replace('.tar.gz', '');
  t.same(names.filter((n) => !n.endsWith('/')).sort(), ['README.txt', 'config.json', 'events.json', 'links.json', 'log.jsonl', 'settings.json', 'site.json', 'store.json', 'versions.json'].map((f) => `${base}/${f}`));

  const dir = mkdtempSync(path.join(tmpdir(), 'wh-report-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await extract({ file: r.json.report_path, cwd: dir });
  const text = names.filter((n) => !n.endsWith('/')).map((n) => readFileSync(path.join(dir, n), 'utf8')).join('\n');
  for (const secret of [...secrets(), ...tokens, ...URL_SECRETS, 'integrator-secret-value-123']) t.notOk(text.includes(secret), `no secret (${secret.slice(0, 4)}...)`);
  t.notOk(/BEGIN [A-Z ]*PRIVATE KEY/.test(text), 'no private key');
  t.notOk(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./.test(text), 'no token');

  const read = (f: string) => JSON.parse(readFileSync(path.join(dir, base, f), 'utf8'));
  t.equal(read('versions.json').node, process.version);
  t.equal(read('config.json').state_dir, a.stateDir);
  t.equal(read('config.json').support_url, 'https://[redacted]@127.0.0.1:9/support/intake?[redacted]#[redacted]', 'where it points, not how it authenticates');
  t.equal(read('settings.json').values['auth.accessTokenMinutes'], 15);
  t.notOk('wms.password' in read('settings.json').values);
  t.ok(read('store.json').collections.events > 0);
  t.ok(read('events.json').some((e: { hex_value: string }) => e.hex_value === '0x1001'));
  t.ok(readFileSync(path.join(dir, base, 'log.jsonl'), 'utf8').includes('HTTPS API listening'), 'recent log lines');
  t.equal(read('site.json').name, 'Demo site');

  const download = await c.request(`/api/v2/report/${r.json.tar_filename}`);
  t.equal(download.status, 200);
  t.equal(download.headers['content-type'], 'application/gzip');
  t.equal((await c.request('/api/v2/report/report-19990101T000000000Z.tar.gz')).status, 404);
  t.equal((await c.request('/api/v2/report/..%2Fsecrets%2Fjwt.key')).status, 422);
  t.match((await c.request('/api/v2/events?hex_value__eq=0x1003')).json.items[0].description, r.json.tar_filename);
});

t.test('old reports are pruned', async (t) => {
  for (let i = 0; i < REPORTS_KEPT + 2; i++) {
    t.equal((await c.request('/api/v2/report')).status, 200);
  }
  t.equal(readdirSync(path.join(a.stateDir, 'reports')).filter((f) => f.endsWith('.tar.gz')).length, REPORTS_KEPT);
});

t.test('configuration URLs lose their credentials, queries and fragments', async (t) => {
  const config = { ...loadConfig({ WAREHOUSE_STATE_DIR: '/tmp/x' }), extra: 'https://user:pw@support.example/x' } as never;
  t.equal((publicConfig(config) as Record<string, string>).extra, 'https://[redacted]@support.example/x');
  for (const [url, shown] of [
    ['https://support.example/intake?token=abc&x=1', 'https://support.example/intake?[redacted]'],
    ['http://support.example/#access_token=abc', 'http://support.example/#[redacted]'],
    ['https://u@support.example:8443/a/b?k=v#f', 'https://[redacted]@support.example:8443/a/b?[redacted]#[redacted]'],
    ['https://support.example/path@at/x', 'https://support.example/path@at/x'],
    ['/var/lib/warehouse?not-a-url', '/var/lib/warehouse?not-a-url'],
  ]) {
    t.equal(redactUrl(url!), shown, url);
  }
});
