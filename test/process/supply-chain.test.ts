// The bytes installed are the bytes reviewed: the uWS.js binaries in node_modules match
// scripts/reviewed-binaries.sha256 (npm ci has already held the tarball to the lockfile's
// integrity), the one this runtime loads is among them, and the dependency is pinned exactly.
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const reviewed = readFileSync(path.join(ROOT, 'scripts/reviewed-binaries.sha256'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sha256sum line: ${line}`);
    return { sha256: m[1]!, file: m[2]! };
  });

t.test('every reviewed binary that is installed has the reviewed bytes', async (t) => {
  t.ok(reviewed.length > 0);
  for (const { sha256, file } of reviewed) {
    const at = path.join(ROOT, file);
    if (!existsSync(at)) continue;
    t.equal(createHash('sha256').update(readFileSync(at)).digest('hex'), sha256, file);
  }
});

t.test('the uWS.js binary this runtime loads was reviewed', async (t) => {
  const binary = `node_modules/uWebSockets.js/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  t.ok(reviewed.some((r) => r.file === binary), `${binary} is in scripts/reviewed-binaries.sha256`);
  t.ok(existsSync(path.join(ROOT, binary)), 'and installed');
});

t.test('the uWS.js build is pinned to one version, with its integrity in the lockfile', async (t) => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  t.match(pkg.dependencies['uWebSockets.js'], /^npm:[\w@/.-]+@\d+\.\d+\.\d+$/, 'an exact version, no range');
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; integrity?: string; name?: string }> };
  const entry = lock.packages['node_modules/uWebSockets.js'];
  t.equal(`npm:${entry?.name}@${entry?.version}`, pkg.dependencies['uWebSockets.js'], 'the lockfile holds the version package.json names');
  t.match(entry?.integrity, /^sha512-[A-Za-z0-9+/]{86}==$/, 'and its sha512 integrity, which npm ci checks');
});
