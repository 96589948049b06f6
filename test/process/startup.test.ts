// A start that cannot go on ends at once, with one structured line (stable code, hint, every
// problem) and the sysexits status the unit acts on: 78 for anything a restart cannot fix.
// Lines carry their syslog priority when stdout is the journal.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exited, startDaemon } from '../helpers/daemon.js';
import { Store } from '../../src/store/store.js';
import { ALL_COLLECTIONS } from '../../src/domain/collections.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { ensureCertificate } from '../../src/http/tls.js';
import { VERSION } from '../../src/version.js';
import { entryArgs } from '../helpers/entry.js';

const MAIN = entryArgs('main');

function stateDir(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function failedStart(t: Test, env: Record<string, string>) {
  const d = startDaemon({ WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off', ...env });
  t.teardown(() => d.child.kill('SIGKILL'));
  const timer = setTimeout(() => d.child.kill('SIGKILL'), 20_000);
  const code = await exited(d.child);
  clearTimeout(timer);
  const fatal = d.lines.filter((l) => l.level === 'fatal');
  t.equal(fatal.length, 1, 'one fatal line');
  t.equal(d.stderr(), '', 'nothing in plain text');
  return { code, fatal: fatal[0], lines: d.lines };
}

t.test('garbage TLS files: exit 78 at once, every problem named, nothing opened', async (t) => {
  const dir = stateDir(t);
  writeFileSync(path.join(dir, 'cert.pem'), 'not a certificate');
  const { code, fatal, lines } = await failedStart(t, {
    WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_TLS_CERT: path.join(dir, 'cert.pem'), WAREHOUSE_TLS_KEY: path.join(dir, 'missing-key.pem'),
  });
  t.equal(code, 78, 'EX_CONFIG: the unit does not restart it');
  t.equal(fatal.code, 'tls_invalid');
  t.match(fatal.problems.join('\n'), /cert\.pem is not a PEM certificate/);
  t.match(fatal.problems.join('\n'), /missing-key\.pem: ENOENT/);
  t.match(fatal.hint, /WAREHOUSE_TLS_CERT/);
  t.notOk(lines.some((l) => l.msg === 'store opened'), 'the store was not opened');
});

t.test('a key that is not the certificate\'s: exit 78', async (t) => {
  const dir = stateDir(t);
  const a = await ensureCertificate(path.join(dir, 'a'));
  const b = await ensureCertificate(path.join(dir, 'b'));
  const { code, fatal } = await failedStart(t, { WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_TLS_CERT: a.certFile, WAREHOUSE_TLS_KEY: b.keyFile });
  t.equal(code, 78);
  t.match(fatal.problems.join('\n'), /is not the key of the certificate/);
});

t.test('a state directory written by a newer version: exit 78, the store untouched', async (t) => {
  const dir = stateDir(t);
  const future = await Store.open({ dir: path.join(dir, 'db') }, ALL_COLLECTIONS, [...MIGRATIONS, { version: 999, description: 'from the future', up: () => undefined }]);
  await future.close();
  const before = readFileSync(path.join(dir, 'db', 'warehouse.mdb'));
  const { code, fatal } = await failedStart(t, { WAREHOUSE_STATE_DIR: dir });
  t.equal(code, 78, 'not 70: systemd would restart it in a loop');
  t.equal(fatal.code, 'state_newer');
  t.match(fatal.msg, /schema version 999/);
  t.ok(readFileSync(path.join(dir, 'db', 'warehouse.mdb')).equals(before), 'not a byte changed');
});

t.test('--help and --version start nothing', async (t) => {
  const dir = stateDir(t);
  for (const [arg, expected] of [['--help', /warehouse-controller --help/], ['--version', new RegExp(`^warehouse-controller ${VERSION.replace(/\./g, '\\.')}\nNode\\.js ${process.version.replace(/\./g, '\\.')} .*\nuWebSockets\\.js: uwebsockets@`)]] as const) {
    const child = spawn(process.execPath, [...MAIN, arg], { env: { PATH: process.env.PATH, WAREHOUSE_STATE_DIR: path.join(dir, 'state') } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    t.equal(await exited(child), 0, arg);
    t.match(out, expected);
  }
  const wrong = spawn(process.execPath, [...MAIN, 'status'], { env: { PATH: process.env.PATH, WAREHOUSE_STATE_DIR: path.join(dir, 'state') } });
  let err = '';
  wrong.stderr.on('data', (d: Buffer) => (err += d.toString()));
  t.equal(await exited(wrong), 64, 'an argument the daemon does not take: EX_USAGE');
  t.match(err, /warehouse-controller status/);
  t.notOk(existsSync(path.join(dir, 'state')), 'no state directory was made');
});

t.test('stdout is the journal: each line starts with its syslog priority', async (t) => {
  const dir = stateDir(t);
  const logFile = path.join(dir, 'journal');
  const fd = openSync(logFile, 'w');
  const st = fstatSync(fd);
  // A bad TLS pair: an info line (starting), then a fatal one, then the exit.
  const child = spawn(process.execPath, [...MAIN], {
    env: {
      PATH: process.env.PATH, JOURNAL_STREAM: `${st.dev}:${st.ino}`, WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off',
      WAREHOUSE_TLS_CERT: path.join(dir, 'nope.pem'), WAREHOUSE_TLS_KEY: path.join(dir, 'nope.pem'),
    },
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  t.equal(await exited(child), 78);
  const lines = readFileSync(logFile, 'utf8').trim().split('\n');
  t.match(lines[0], /^<6>\{"level":"info"/, 'info is priority 6');
  const fatal = lines.find((l) => l.includes('"level":"fatal"'));
  t.match(fatal, /^<2>\{/, 'fatal is priority 2 (crit): journalctl -p err shows it');
  t.ok(lines.every((l) => /^<\d>\{/.test(l)), 'every line');
  t.same(JSON.parse(fatal!.slice(3)).code, 'tls_invalid', 'the rest of the line is the JSON');
});

t.test('stdout is not the journal (a pipe): plain JSON lines', async (t) => {
  const dir = stateDir(t);
  const { lines } = await failedStart(t, { WAREHOUSE_STATE_DIR: path.join(dir, 'state'), WAREHOUSE_TLS_CERT: path.join(dir, 'x'), WAREHOUSE_TLS_KEY: path.join(dir, 'x'), JOURNAL_STREAM: '1:2' });
  t.ok(lines.length >= 2, 'parsed as JSON by the helper');
});
