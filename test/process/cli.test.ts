// The technician's commands against a real daemon and its state directory: status and its exit
// codes, check-config, a hot backup taken under writes and restored elsewhere, a damaged or
// tampered archive refused with nothing changed, reset-admin, and the reads.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { Client } from '../helpers/client.js';
import { exited, startDaemon, startWithClient } from '../helpers/daemon.js';
import { until } from '../helpers/until.js';
import { entryArgs } from '../helpers/entry.js';

t.setTimeout(600_000);

const CLI = entryArgs('cli/main');
const ENV = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root' };

/** Runs the CLI to its end (from sources or the build, as the tests run the daemon). */
function cli(args: string[], env: Record<string, string> = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [...CLI, '--env-file', '/dev/null', ...args], { env: { ...ENV, ...env }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function tempDir(t: { teardown(fn: () => unknown): void }, prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const skuIds = async (c: Client) => new Set<string>((await c.get('/api/v2/skus?size=1000')).json.items.map((s: { id: string }) => s.id));

t.test('--help, --version and bad usage start nothing', async (t) => {
  const help = cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.out, /backup --out FILE/);
  // The default state directory as the CLI resolves it: an installed box's, else a checkout's.
  t.match(help.out, /WAREHOUSE_STATE_DIR[\s\S]*\/var\/lib\/warehouse-controller where it exists[\s\S]*\.\/state of the current directory/, 'the help names ./state for a checkout');
  t.match(help.out, /requests \[--all\] \[--limit N\]\s+the newest N \(default 20\)/, 'the help says which requests it lists');
  t.notMatch(help.out, /open requests \(or all\), oldest first/);
  t.match(cli(['--version']).out, new RegExp(`^warehouse-controller \\d+\\.\\d+\\.\\d+\\nNode\\.js ${process.version.replace(/\./g, '\\.')} \\(ABI ${process.versions.modules}, ${process.platform}-${process.arch}\\)\\nuWebSockets\\.js: uwebsockets@\\d+\\.\\d+\\.\\d+ \\(uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node\\)\\n$`), 'its own version, the runtime and the uWS.js build');
  t.equal(cli([]).code, 0, 'no arguments: the help');
  t.equal(cli(['frobnicate']).code, 64);
  t.equal(cli(['status', '--bogus']).code, 64);
  t.equal(cli(['backup']).code, 64, 'backup without --out');
});

t.test('check-config: every problem on its own line and 78, or OK and 0', async (t) => {
  const dir = tempDir(t, 'wh-cli-');
  writeFileSync(path.join(dir, 'cert.pem'), 'not a certificate');
  const bad = cli(['--state-dir', path.join(dir, 'state'), 'check-config'], {
    WAREHOUSE_PORT: 'eighty', WAREHOUSE_SITE: path.join(dir, 'nope.json'),
  });
  t.equal(bad.code, 78);
  t.match(bad.err, /WAREHOUSE_PORT/);
  const tls = cli(['--state-dir', path.join(dir, 'state'), 'check-config'], {
    WAREHOUSE_TLS_CERT: path.join(dir, 'cert.pem'), WAREHOUSE_TLS_KEY: path.join(dir, 'key.pem'), WAREHOUSE_SITE: path.join(dir, 'nope.json'),
  });
  t.equal(tls.code, 78);
  const lines = tls.err.trim().split('\n');
  t.ok(lines.some((l) => /cert\.pem is not a PEM certificate/.test(l)), 'the certificate');
  t.ok(lines.some((l) => /key\.pem: ENOENT/.test(l)), 'the key');
  t.ok(lines.some((l) => /^site: .*nope\.json: cannot read/.test(l)), 'the site');
  const ok = cli(['--state-dir', path.join(dir, 'state'), 'check-config']);
  t.equal(ok.code, 0);
  t.match(ok.out, /configuration OK[\s\S]*site: demo/);
  t.same(readdirSync(dir).sort(), ['cert.pem'], 'nothing was created');
});

t.test('status, reads, hot backup under writes, restore elsewhere, refusals, reset-admin', async (t) => {
  const stateDir = tempDir(t, 'wh-cli-state-');
  const work = tempDir(t, 'wh-cli-work-');
  const { d, c } = await startWithClient(t, stateDir, { WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off' });

  const notYet = cli(['--state-dir', path.join(work, 'none'), 'status']);
  t.equal(notYet.code, 4, 'no state directory: cannot tell');
  await until('status.json', async () => cli(['--state-dir', stateDir, 'status']).code === 0, 60_000);
  const status = cli(['--state-dir', stateDir, 'status', '--json']);
  t.equal(status.code, 0, 'running and healthy: 0');
  const report = JSON.parse(status.out);
  t.equal(report.running, true);
  t.equal(report.pid, d.child.pid);
  t.equal(report.daemon.storage_status, 'RUNNING');
  t.match(cli(['--state-dir', stateDir, 'status']).out, /running, pid \d+/);

  // More open requests than a page: the table says how many older ones it left out.
  for (let i = 1; i <= 22; i++) {
    const r = await c.post('/api/v2/requests', { type: 'FULFILLMENT', entities: [{ sku_id: `SKU-${String(i).padStart(5, '0')}`, quantity: 1 }] });
    t.equal(r.status, 201, r.text);
  }
  const whole = cli(['--state-dir', stateDir, 'requests', '--limit', '1000']).out.trim().split('\n');
  const open = whole.length - 1;
  t.ok(open >= 22, `${open} open requests, each on a row, and no last line`);
  const page = cli(['--state-dir', stateDir, 'requests']).out.trim().split('\n');
  t.equal(page.length, 1 + 20 + 1, 'the header, the newest 20, and a last line');
  t.equal(page.at(-1), `(${open - 20} older open requests not shown: requests --limit ${open} shows them all)`);
  const requestIds = (rows: string[]) => rows.map((row) => row.split(/\s+/)[0]);
  t.same(requestIds(page.slice(1, 21)), requestIds(whole.slice(-20)), 'the page held the newest 20, oldest first');

  // Writes go on while the backup is taken: it holds a consistent prefix of them.
  let writing = true;
  let written = 0;
  const writer = (async () => {
    while (writing) {
      const r = await c.post('/api/v2/sku', { id: `sku-${written}`, name: 'during the backup' });
      if (r.status === 201) written++;
    }
  })();
  await until('some writes', async () => written >= 5);
  const archive = path.join(work, 'backup.tar.gz');
  const backup = cli(['--state-dir', stateDir, 'backup', '--out', archive]);
  writing = false;
  await writer;
  t.equal(backup.code, 0, backup.err);
  t.equal(statSync(archive).mode & 0o777, 0o600, 'the archive holds keys: owner only');
  t.equal(cli(['--state-dir', stateDir, 'backup', '--out', archive]).code, 73, 'never overwrites');

  const entries: string[] = [];
  await tar.list({ file: archive, onReadEntry: (e) => entries.push(e.path) });
  t.ok(entries.includes('manifest.json') && entries.includes('state/db/warehouse.mdb') && entries.includes('state/tls/self-signed-key.pem'));
  t.notOk(entries.some((e) => /daemon\.lock|status\.json/.test(e)), 'no lock or runtime file');

  t.equal(cli(['--state-dir', stateDir, 'restore', archive]).code, 75, 'restore refuses while the daemon runs: EX_TEMPFAIL, try again once it is stopped');
  t.match(cli(['--state-dir', stateDir, 'bots']).out, /^BOT/);
  const events = cli(['--state-dir', stateDir, 'events', '--limit', '3']).out;
  t.match(events, /^ID\s+TIME\s+CODE\s+SEVERITY/);
  const severities = events.trim().split('\n').slice(1).map((row) => row.split(/\s+/)[3]);
  t.equal(severities.length, 3);
  for (const s of severities) t.match(s, /^(debug|info|notice|warning|error|critical)$/, `a severity by its name: ${s}`);
  t.match(cli(['--state-dir', stateDir, 'requests', '--all']).out, /^REQUEST/);

  // --follow prints what is committed after it started, until Ctrl-C.
  const follow = spawn(process.execPath, [...CLI, '--env-file', '/dev/null', '--state-dir', stateDir, 'events', '--limit', '1', '--follow'], { env: ENV });
  let followed = '';
  follow.stdout.on('data', (b: Buffer) => (followed += b.toString()));
  await until('the first page', async () => followed.includes('ID'), 60_000);
  await c.post('/api/v2/sku', { id: 'followed-sku', name: 'x' });
  await c.request('/api/v2/sku/followed-sku', { method: 'DELETE' });
  await until('the new event', async () => /0x4001/.test(followed), 30_000);
  follow.kill('SIGINT');
  t.equal(await exited(follow), 0, 'Ctrl-C ends --follow cleanly');

  // A hung daemon (stopped here) holds its lock but writes no status.json: the report says so
  // on its first line, before "running" and the figures that are from before it hung.
  d.child.kill('SIGSTOP');
  await until('a stale status.json', async () => JSON.parse(cli(['--state-dir', stateDir, 'status', '--json']).out).stale === true, 60_000);
  const stale = cli(['--state-dir', stateDir, 'status']);
  d.child.kill('SIGCONT');
  t.equal(stale.code, 1, 'stale: degraded');
  const lines = stale.out.split('\n');
  t.match(lines[0], /^STALE: status\.json is stale \(written [^)]+\): the daemon may be hung; its storage, lines and bots below are from then$/);
  t.match(lines[2], /running, pid \d+/, 'then the daemon');
  t.equal(stale.out.match(/is stale/g)?.length, 1, 'said once');

  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0);
  t.equal(cli(['--state-dir', stateDir, 'status']).code, 3, 'not running: 3');

  // Restore into another directory, start a daemon there: what the backup held is there.
  const restored = tempDir(t, 'wh-cli-restored-');
  const r = cli(['--state-dir', restored, 'restore', archive]);
  t.equal(r.code, 0, r.err);
  for (const dir of ['db', 'secrets', 'tls']) {
    t.equal(statSync(path.join(restored, dir)).mode & 0o777, statSync(path.join(stateDir, dir)).mode & 0o777, `${dir}/ restored with the mode the daemon made it with`);
    t.equal(statSync(path.join(restored, dir)).mode & 0o777, 0o700, `${dir}/ is 0700`);
  }
  for (const file of ['secrets/token-signing.key', 'tls/self-signed-key.pem']) t.equal(statSync(path.join(restored, file)).mode & 0o777, 0o600, `${file} stays 0600`);
  const again = await startWithClient(t, restored, { WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off' });
  const ids = await skuIds(again.c);
  const inBackup = [...ids].filter((id) => id.startsWith('sku-')).length;
  t.ok(inBackup >= 5 && inBackup <= written, `a consistent prefix of the writes (${inBackup} of ${written})`);
  for (let i = 0; i < inBackup; i++) t.ok(ids.has(`sku-${i}`), `sku-${i}`);
  again.d.child.kill('SIGTERM');
  t.equal(await exited(again.d.child), 0);

  // A damaged archive, and one whose file was altered: refused, the state directory unchanged.
  const before = readdirSync(restored).sort();
  const damaged = path.join(work, 'damaged.tar.gz');
  const bytes = readFileSync(archive);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  writeFileSync(damaged, bytes);
  t.equal(cli(['--state-dir', restored, 'restore', damaged]).code, 65, 'damaged: data error');
  const unpacked = path.join(work, 'unpacked');
  rmSync(unpacked, { recursive: true, force: true });
  await import('node:fs').then((fs) => fs.mkdirSync(unpacked));
  await tar.extract({ file: archive, cwd: unpacked });
  writeFileSync(path.join(unpacked, 'state/secrets/token-signing.key'), 'an attacker\'s key');
  const tampered = path.join(work, 'tampered.tar.gz');
  await tar.create({ gzip: true, file: tampered, cwd: unpacked }, readdirSync(unpacked));
  const refused = cli(['--state-dir', restored, 'restore', tampered]);
  t.equal(refused.code, 65);
  t.match(refused.err, /token-signing\.key: checksum mismatch/);
  t.same(readdirSync(restored).sort(), before, 'nothing changed');

  // reset-admin: the daemon stopped, a new password that logs in.
  rmSync(path.join(restored, 'bootstrap-admin.json'));
  const reset = cli(['--state-dir', restored, 'reset-admin']);
  t.equal(reset.code, 0, reset.err);
  const credential = JSON.parse(readFileSync(path.join(restored, 'bootstrap-admin.json'), 'utf8'));
  t.equal(statSync(path.join(restored, 'bootstrap-admin.json')).mode & 0o777, 0o600);
  const d3 = startDaemon({ WAREHOUSE_STATE_DIR: restored, WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off' });
  t.teardown(() => d3.child.kill('SIGKILL'));
  const anon = new Client(await d3.listening, readFileSync(path.join(restored, 'tls/self-signed-cert.pem')));
  t.teardown(() => anon.close());
  t.equal((await anon.post('/api/v2/auth/login', { email: credential.email, password: credential.password })).status, 200, 'the new password logs in');
  // The same shape as the first start's file, so the same recipe reads a key from it.
  t.same(Object.keys(credential).sort(), ['api_key', 'email', 'password']);
  t.match(credential.api_key, /^whk_/);
  const me = await anon.get('/api/v2/auth/authenticate', { authorization: `Bearer ${credential.api_key}` });
  t.equal(me.status, 200, 'its new API key authenticates');
  t.ok(me.json.permissions.includes('system:delete_bots'), 'with every permission');
  t.match(reset.out, /new password and API key \(every permission, expiring \d{4}-/);
  t.equal(cli(['--state-dir', restored, 'reset-admin', '--out', path.join(work, 'x.json')]).code, 75, 'refused while the daemon runs: EX_TEMPFAIL');
});
