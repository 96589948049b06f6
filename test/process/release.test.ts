// The release as a technician gets it: `npm run release` really builds the tarball (once for
// the tap run: test/process/upgrade.test.ts installs the same one, helpers/release-build.ts), it
// is unpacked, install.sh puts it under a temporary prefix, and the daemon starts from there: no
// checkout, no npm, no compiler on the way.
import t from 'tap';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { Client } from '../helpers/client.js';
import { releaseBuild } from '../helpers/release-build.js';
import { run } from '../helpers/run.js';
import { exited, startDaemon } from '../helpers/daemon.js';

// A hang guard, not a bound: one real build (tsc, pruning, compression) on a busy CI box.
t.setTimeout(600_000);

const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin?: string | Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const bins: Array<[string, string]> = typeof pkg.bin === 'string' ? [['warehouse-controller', pkg.bin]] : Object.entries(pkg.bin ?? {});
const APP = 'opt/warehouse-controller';
const STATE = 'var/lib/warehouse-controller';
const ENVIRONMENT = 'etc/warehouse-controller/environment';


const work = mkdtempSync(path.join(tmpdir(), 'wh-release-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
const name = `warehouse-controller-${pkg.version}-${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}`;
const prefix = path.join(work, 'root');
const app = path.join(prefix, APP);

/** Unpacks the tarball into a fresh directory; returns the release's top directory. */
async function unpack(tarball: string, into: string): Promise<string> {
  const dir = path.join(work, into);
  const r = await run('sh', ['-c', 'mkdir "$1" && tar -xzf "$2" -C "$1"', 'sh', dir, tarball], work);
  if (r.status !== 0) throw new Error(`tar: ${r.stderr}`);
  return path.join(dir, name);
}

/** Every file under `dir`, relative, sorted as the manifest is (bytewise). */
function files(dir: string, sub = ''): string[] {
  return readdirSync(path.join(dir, sub), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, path.join(sub, e.name)) : [path.join(sub, e.name)]))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

// Niced (in the helper): the build is CPU-bound for a while, and the test files running beside
// it (daemons under a watchdog, timeouts) should not starve for it. The tests below only read
// its output directory, which the upgrade test may be reading too.
const built = releaseBuild();
const tarballOf = (r: { out: string }) => path.join(r.out, `${name}.tar.gz`);

t.test('npm run release builds one tarball named for this platform and Node', async (t) => {
  const r = await built;
  t.comment(`the release build took ${(r.ms / 1000).toFixed(1)} s${r.builtHere ? '' : ' (built for another test file of this run)'}`);
  t.equal(r.status, 0, r.stderr);
  t.equal(r.tarball, tarballOf(r), 'its path is the last line');
  t.same(readdirSync(r.out).sort(), [`${name}.tar.gz`, `${name}.tar.gz.sha256`], 'nothing else left there');
  const check = await run('sha256sum', ['--check', '--strict', `${name}.tar.gz.sha256`], r.out);
  t.equal(check.status, 0, `the checksum beside it matches: ${check.stdout}${check.stderr}`);
});

t.test('the tarball holds a complete manifest, the run-time files and production packages only', async (t) => {
  if ((await built).status !== 0) return t.fail('no release was built');
  const tree = await unpack(tarballOf(await built), 'unpacked');

  const check = await run('sha256sum', ['--check', '--strict', '--quiet', 'MANIFEST.sha256'], tree);
  t.equal(check.status, 0, `every file matches MANIFEST.sha256 ${check.stdout}${check.stderr}`);
  const listed = readFileSync(path.join(tree, 'MANIFEST.sha256'), 'utf8').trimEnd().split('\n').map((l) => l.replace(/^[0-9a-f]{64} {2}/, ''));
  t.same(listed, files(tree).filter((f) => f !== 'MANIFEST.sha256'), 'it lists every other file, nothing more');

  for (const file of [
    'dist/main.js',
    'dist/sim/main.js',
    'dist/brain/worker/main.js',
    'dist/lines/process/main.js',
    'dist/console/index.html',
    'native/build/Release/warehouse_native.node',
    'firmware-protocol/messages.json',
    'package.json',
    'systemd/warehouse-controller.service',
    'systemd/warehouse-controller.sysusers.conf',
    'systemd/README.md',
    'docs/monitoring.md',
    'docs/monitoring/grafana-warehouse-controller.json',
    'docs/high-availability.md',
    'install.sh',
    'VERSION',
    'runtime/bin/node',
    'runtime/LICENSE',
    'sbom.cdx.json',
  ]) {
    t.ok(existsSync(path.join(tree, file)), file);
  }
  t.ok(statSync(path.join(tree, 'install.sh')).mode & 0o100, 'install.sh is executable');
  t.notOk(existsSync(path.join(tree, 'src')), 'no TypeScript sources');
  t.notOk(existsSync(path.join(tree, 'test')), 'no tests');

  const modules = path.join(tree, 'node_modules');
  for (const dep of Object.keys(pkg.dependencies)) t.ok(existsSync(path.join(modules, dep, 'package.json')), `dependency ${dep}`);
  for (const dev of Object.keys(pkg.devDependencies)) t.notOk(existsSync(path.join(modules, dev)), `no dev dependency ${dev}`);

  const shipped = JSON.parse(readFileSync(path.join(tree, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.equal(shipped.scripts.install, undefined, 'no install script that would need a compiler');

  const version = readFileSync(path.join(tree, 'VERSION'), 'utf8');
  t.match(version, `version=${pkg.version}\n`);
  t.match(version, `node_abi=${process.versions.modules}\n`);
  t.match(version, `node=${process.version}\n`);
  t.match(version, /\nuws=uwebsockets@\d+\.\d+\.\d+ uws_linux_\w+_\d+\.node\n/);
  t.ok(statSync(path.join(tree, 'runtime/bin/node')).mode & 0o111, 'the runtime is executable');
  const runtime = await run(path.join(tree, 'runtime/bin/node'), ['-p', 'process.version'], work);
  t.equal(runtime.stdout.trim(), process.version, 'the runtime the release was built and tested with');
  t.same(readdirSync(path.join(modules, 'uWebSockets.js')).filter((f) => f.endsWith('.node')), [`uws_${process.platform}_${process.arch}_${process.versions.modules}.node`], 'one uWS binary: this runtime\'s');

  // The SBOM names every production package with its version and purl, and no dev package.
  const sbom = JSON.parse(readFileSync(path.join(tree, 'sbom.cdx.json'), 'utf8')) as { bomFormat: string; specVersion: string; components: { name: string; version: string; purl?: string; group?: string }[] };
  t.equal(sbom.bomFormat, 'CycloneDX');
  // A package may be there in several versions (a nested copy of another's dependency).
  const fullName = (c: { name: string; group?: string }) => (c.group ? `${c.group}/${c.name}` : c.name);
  for (const dep of Object.keys(pkg.dependencies)) {
    const installed = JSON.parse(readFileSync(path.join(modules, dep, 'package.json'), 'utf8')) as { name: string; version: string };
    const entry = sbom.components.find((c) => (fullName(c) === dep || fullName(c) === installed.name) && c.version === installed.version);
    t.ok(entry, `the SBOM lists ${dep} at the version shipped (${installed.version})`);
    t.match(entry?.purl, /^pkg:npm\//, `${dep} has a purl a scanner can match`);
  }
  const names = new Set(sbom.components.map(fullName));
  for (const dev of Object.keys(pkg.devDependencies)) t.notOk(names.has(dev), `no dev dependency ${dev} in the SBOM`);
  t.ok(sbom.components.some((c) => c.name === 'node' && c.version === process.version.slice(1)), 'the runtime is a component');

  for (const [bin, file] of bins) {
    t.ok(statSync(path.join(tree, file)).mode & 0o111, `bin ${bin} (${file}) is executable`);
  }
});

t.test('install.sh refuses a tampered release, naming the file, and installs nothing', async (t) => {
  if ((await built).status !== 0) return t.fail('no release was built');
  const tree = await unpack(tarballOf(await built), 'tampered');
  const target = path.join(work, 'tampered-root');

  appendFileSync(path.join(tree, 'dist/main.js'), '\n// one more line\n');
  const changed = await run(path.join(tree, 'install.sh'), ['--prefix', target, '--no-systemd'], work);
  t.not(changed.status, 0, 'a changed file: refused');
  t.match(changed.stderr, /dist\/main\.js/, 'naming it');
  t.notOk(existsSync(path.join(target, APP)), 'nothing installed');

  // The same tree otherwise intact, with one file the manifest does not list.
  cpSync(path.join(work, 'unpacked', name, 'dist/main.js'), path.join(tree, 'dist/main.js'));
  writeFileSync(path.join(tree, 'dist/extra.js'), 'process.exit(1);\n');
  const added = await run(path.join(tree, 'install.sh'), ['--prefix', target, '--no-systemd'], work);
  t.not(added.status, 0, 'an added file: refused');
  t.match(added.stderr, /dist\/extra\.js/, 'naming it');
  t.notOk(existsSync(path.join(target, APP)), 'nothing installed');
});

t.test('install.sh --prefix --no-systemd: the tree, the user, the state directory, the settings template', async (t) => {
  if ((await built).status !== 0) return t.fail('no release was built');
  const tree = path.join(work, 'unpacked', name);
  const r = await run(path.join(tree, 'install.sh'), ['--prefix', prefix, '--no-systemd'], work);
  t.equal(r.status, 0, r.stderr);

  const check = await run('sha256sum', ['--check', '--strict', '--quiet', 'MANIFEST.sha256'], app);
  t.equal(check.status, 0, `the installed tree matches its manifest ${check.stdout}${check.stderr}`);
  t.same(files(app), files(tree), 'the same files as the release');
  t.notOk(existsSync(path.join(prefix, 'etc/systemd')), 'no unit with --no-systemd');

  const state = statSync(path.join(prefix, STATE));
  t.equal(state.mode & 0o777, 0o750, 'state directory 0750');
  if (process.getuid?.() === 0) {
    const passwd = readFileSync(path.join(prefix, 'etc/passwd'), 'utf8');
    const user = /^warehouse:x:(\d+):(\d+):[^:]*:\/var\/lib\/warehouse-controller:\/usr\/sbin\/nologin$/m.exec(passwd);
    t.ok(user, 'the system user, in the prefix');
    t.equal(String(state.uid), user?.[1], 'owns the state directory');
    t.match(readFileSync(path.join(prefix, 'etc/group'), 'utf8'), /^dialout:x:\d+:warehouse$/m, 'in group dialout');
  }

  // Only comments: the settings are the site's. Each example, once uncommented, must be a
  // setting the daemon knows, or following the template would stop it.
  const environment = readFileSync(path.join(prefix, ENVIRONMENT), 'utf8');
  t.same(environment.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')), [], 'the settings template sets nothing');
  const examples = Object.fromEntries([...environment.matchAll(/^#(WAREHOUSE_[A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
  t.ok(Object.keys(examples).length >= 5, `examples: ${Object.keys(examples).join(', ')}`);
  t.doesNotThrow(() => loadConfig(examples), 'every example is a valid setting');
  t.equal(statSync(path.join(prefix, ENVIRONMENT)).mode & 0o777, 0o640);

  for (const [bin, file] of bins) {
    const link = path.join(prefix, 'usr/bin', bin);
    if (!existsSync(path.join(app, file))) continue;
    const script = readFileSync(link, 'utf8');
    t.match(script, /^#!\/bin\/sh\n/, `/usr/bin/${bin} is a script`);
    t.match(script, `/opt/warehouse-controller/runtime/bin/node" "$here/../../opt/warehouse-controller/${file}"`, `that runs ${file} with the release's Node.js`);
  }
});

t.test('the installed daemon serves HTTPS and stops on SIGTERM with exit 0', async (t) => {
  if (!existsSync(path.join(app, 'dist/main.js'))) return t.fail('not installed');
  const stateDir = path.join(prefix, STATE);
  // From the temporary directory: nothing of the checkout is on its module path.
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0' }, { main: path.join(app, 'dist/main.js'), cwd: work, node: path.join(app, 'runtime/bin/node') });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await Promise.race([d.listening, exited(d.child).then((code) => Promise.reject(new Error(`exited ${code}: ${d.stderr()}`)))]);

  const key = JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')).api_key as string;
  const client = new Client(port, readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem')), key);
  t.teardown(() => client.close());
  const health = await client.get('/api/v2/health');
  t.equal(health.status, 200);
  t.equal(health.text, 'OK');
  const levels = await client.get('/api/v2/levels');
  t.equal(levels.status, 200, 'the store answers (lmdb from the release)');
  t.same(levels.json.map((l: { id: number }) => l.id), [1, 2], 'the demo site, seeded');

  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0, 'exits 0');
  t.ok(d.lines.some((l) => l.msg === 'stopped'));
  t.notOk(d.lines.some((l) => l.level === 'error' || l.level === 'fatal'), 'no error logged');
});

t.test('the installed commands run', { skip: bins.length === 0 ? 'package.json has no bin' : false }, async (t) => {
  for (const [bin] of bins) {
    const r = await run(path.join(prefix, 'usr/bin', bin), ['--version'], work);
    t.equal(r.status, 0, `${bin} --version: ${r.stderr}`);
    t.match(r.stdout, `warehouse-controller ${pkg.version}\n`);
    t.match(r.stdout, `Node.js ${process.version}`, 'the runtime it runs on');
    t.match(r.stdout, /uWebSockets\.js: uwebsockets@\d+\.\d+\.\d+/, 'the HTTP server\'s build');
  }
});

t.test('installing again (an upgrade) keeps the state and the settings', async (t) => {
  if (!existsSync(path.join(app, 'dist/main.js'))) return t.fail('not installed');
  const environment = path.join(prefix, ENVIRONMENT);
  appendFileSync(environment, 'WAREHOUSE_LOG_LEVEL=debug\n');
  const settings = readFileSync(environment, 'utf8');
  const state = files(path.join(prefix, STATE));
  t.ok(state.includes('bootstrap-admin.json'), 'the daemon left its state');

  const r = await run(path.join(work, 'unpacked', name, 'install.sh'), ['--prefix', prefix, '--no-systemd'], work);
  t.equal(r.status, 0, r.stderr);
  t.equal(readFileSync(environment, 'utf8'), settings, 'settings as the technician left them');
  t.same(files(path.join(prefix, STATE)), state, 'the state directory as it was');
  t.equal(statSync(path.join(prefix, STATE)).mode & 0o777, 0o750);
  t.ok(existsSync(path.join(prefix, `${APP}.previous`, 'VERSION')), 'the replaced release kept for a rollback');
  const check = await run('sha256sum', ['--check', '--strict', '--quiet', 'MANIFEST.sha256'], app);
  t.equal(check.status, 0, 'the new tree is whole');
});
