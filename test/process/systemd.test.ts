// The systemd unit and its sysusers file, checked by systemd's own tools where the machine has
// them, and against the daemon's configuration loader.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, loadConfig } from '../../src/config/config.js';
import { daemonNodeFlags } from '../../bench/daemon-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const UNIT_NAME = 'warehouse-controller.service';
const UNIT = path.join(ROOT, 'systemd', UNIT_NAME);
const SYSUSERS = path.join(ROOT, 'systemd', 'warehouse-controller.sysusers.conf');
/** The release's own Node.js, which install.sh puts there. */
const NODE = '/opt/warehouse-controller/runtime/bin/node';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'wh-systemd-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function missingTool(name: string): string | false {
  const probe = spawnSync(name, ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0 ? false : `${name} is not installed here`;
}

/** `Key=value` lines of the unit, in order (comments and sections dropped). */
function settings(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}

/**
 * Runs `systemd-analyze verify`. It exits 0 on many mistakes (unknown key, bad value: logged
 * and ignored, as systemd itself would), so any line naming this unit is a problem too. Lines
 * about other units are the host's business and not counted.
 */
function verify(unitFile: string): { status: number | null; problems: string[]; other: string[] } {
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', unitFile], { encoding: 'utf8' });
  const lines = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
  const name = path.basename(unitFile);
  return {
    status: run.status,
    problems: lines.filter((line) => line.includes(name)),
    other: lines.filter((line) => !line.includes(name)),
  };
}

// verify insists that ExecStart's binary exists. Where the release is not installed, a copy
// that starts this machine's node is checked instead; every other line stays as written.
function unitForThisMachine(t: { teardown(fn: () => void): void; comment(...args: unknown[]): void }): string {
  if (fs.existsSync(NODE)) return UNIT;
  t.comment(`${NODE} is not installed here; verifying a copy with ExecStart=${process.execPath}`);
  const copy = path.join(tempDir(t), UNIT_NAME);
  fs.writeFileSync(copy, fs.readFileSync(UNIT, 'utf8').replace(/^ExecStart=\/opt\/warehouse-controller\/runtime\/bin\/node /m, `ExecStart=${process.execPath} `));
  return copy;
}

t.test('the unit starts node with the flags of npm start, which the benchmarks measure', async (t) => {
  const execStart = /^ExecStart=(\S+) (.*)$/m.exec(fs.readFileSync(UNIT, 'utf8'));
  t.ok(execStart, 'the unit has an ExecStart');
  const words = execStart![2]!.split(/\s+/);
  t.equal(words.at(-1), '/opt/warehouse-controller/dist/main.js');
  t.same(words.slice(0, -1), daemonNodeFlags());
  t.ok(daemonNodeFlags().includes('--max-semi-space-size=64'), 'the young generation sized for a heap that grows with the site');
});

const noAnalyze = missingTool('systemd-analyze');

t.test('systemd-analyze verify accepts the unit without a single remark', { skip: noAnalyze }, async (t) => {
  const result = verify(unitForThisMachine(t));
  if (result.other.length > 0) t.comment(`about other units:\n${result.other.join('\n')}`);
  t.same(result.problems, []);
  t.equal(result.status, 0);
});

t.test('the same check fails on broken copies', { skip: noAnalyze }, async (t) => {
  const text = fs.readFileSync(unitForThisMachine(t), 'utf8');
  const breakages: Array<[string, string, string]> = [
    ['a misspelt key (verify logs it, yet exits 0)', 'WatchdogSec=', 'WatchdogSecs='],
    ['a bad value (also exit 0)', 'Type=notify', 'Type=notfy'],
    ['no ExecStart', 'ExecStart=', '#ExecStart='],
  ];
  for (const [what, from, to] of breakages) {
    const copy = path.join(tempDir(t), UNIT_NAME);
    t.ok(text.includes(from), `the unit has ${from}`);
    fs.writeFileSync(copy, text.replace(from, to));
    const result = verify(copy);
    t.ok(result.problems.length > 0 || result.status !== 0, `caught: ${what}`);
  }
});

t.test('hardening stays at an exposure of 2.0 or better', { skip: noAnalyze }, async (t) => {
  const run = spawnSync('systemd-analyze', ['security', '--offline=yes', UNIT], { encoding: 'utf8' });
  const score = /Overall exposure level for .+: (\d+\.\d+)/.exec(run.stdout)?.[1];
  t.ok(score !== undefined, `score printed (${run.stderr.trim()})`);
  t.ok(Number(score) <= 2.0, `exposure ${score}`);
});

t.test('systemd-sysusers creates the user in group dialout', { skip: missingTool('systemd-sysusers') }, async (t) => {
  // An empty root of our own: the check needs no privileges and leaves this machine alone.
  const root = tempDir(t);
  fs.mkdirSync(path.join(root, 'etc'));
  fs.writeFileSync(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  fs.writeFileSync(path.join(root, 'etc', 'group'), 'root:x:0:\ndialout:x:20:\n');
  const run = spawnSync('systemd-sysusers', [`--root=${root}`, '-'], { input: fs.readFileSync(SYSUSERS), encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  const passwd = fs.readFileSync(path.join(root, 'etc', 'passwd'), 'utf8');
  t.match(passwd, /^warehouse:x:\d+:\d+:[^:]*:\/var\/lib\/warehouse-controller:\/usr\/sbin\/nologin$/m);
  t.match(fs.readFileSync(path.join(root, 'etc', 'group'), 'utf8'), /^dialout:x:20:warehouse$/m);
});

t.test('the unit and the daemon agree', async (t) => {
  const unit = settings(fs.readFileSync(UNIT, 'utf8'));
  const values = (key: string): string[] => unit.filter(([k]) => k === key).map(([, v]) => v);

  // An unknown WAREHOUSE_* variable stops the daemon, so the unit's must all load.
  const env = Object.fromEntries(values('Environment').map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
  const config = loadConfig(env);
  t.equal(config.state_dir, '/var/lib/warehouse-controller');
  t.equal(config.host, '0.0.0.0');
  t.same(values('StateDirectory'), ['warehouse-controller'], 'systemd makes the state directory the daemon is told about');

  // SIGKILL must not come before the daemon's own deadline (shutdown timeout + 5 s, src/main.ts).
  const stop = /^(\d+)s$/.exec(values('TimeoutStopSec')[0] ?? '')?.[1];
  t.ok(Number(stop) * 1000 > DEFAULTS.shutdown_timeout_ms + 5000, `TimeoutStopSec=${stop}s`);
  t.same(values('RestartPreventExitStatus'), ['78'], 'no restart on EX_CONFIG');
  t.same(values('MemoryDenyWriteExecute'), [], 'V8 needs writable executable memory');
  t.same(values('PrivateDevices'), [], 'serial devices stay visible');
});
