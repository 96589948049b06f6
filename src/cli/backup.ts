/**
 * `backup --out FILE` and `restore FILE`. A backup is hot: LMDB copies a consistent snapshot
 * (compacted) while the daemon runs. A restore refuses while the daemon runs, verifies every
 * checksum before touching anything, and keeps the state it replaces in
 * `<state_dir>/before-restore-<time>/`.
 */
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import type { Config } from '../config/config.js';
import { MIGRATIONS } from '../store/migrations.js';
import { VERSION } from '../version.js';
import { ARCHIVE_FORMAT, filesUnder, MANIFEST, sha256, verifyUnpacked, type Manifest } from './archive.js';
import { CliError, daemonEnvironment, existingStateDir, EXIT, openStoreReadOnly, withoutDaemon, type CliOptions } from './context.js';

/** Not copied from the state directory: the live store (copied by LMDB), the lock, runtime files, earlier restores. */
const SKIP = (rel: string) => rel === 'db' || rel === 'daemon.lock' || rel === 'status.json' || rel.endsWith('.tmp') || rel.startsWith('before-restore-') || rel.startsWith('.restore-');

const stamp = () => new Date().toISOString().replace(/[:.]/g, '-');

/** Makes the archive; returns its manifest. */
export async function backup(config: Config, options: CliOptions, out: string): Promise<Manifest> {
  const stateDir = existingStateDir(config);
  const target = path.resolve(out);
  if (!existsSync(path.dirname(target))) throw new CliError(`no directory ${path.dirname(target)} for the backup`, EXIT.cannotCreate);
  if (existsSync(target)) throw new CliError(`${target} exists; give another --out (a backup never overwrites)`, EXIT.cannotCreate);
  // Staged beside the output: the same filesystem, which has room for the result anyway.
  const staging = mkdtempSync(path.join(path.dirname(target), '.wh-backup-'));
  try {
    const store = await openStoreReadOnly(stateDir, config);
    let schemaVersion: number;
    try {
      schemaVersion = store.schemaVersion();
      mkdirSync(path.join(staging, 'state', 'db'), { recursive: true });
      await store.backup(path.join(staging, 'state', 'db', 'warehouse.mdb'));
    } finally {
      await store.close();
    }
    for (const rel of filesUnder(stateDir, SKIP).files) {
      mkdirSync(path.dirname(path.join(staging, 'state', rel)), { recursive: true });
      copyFileSync(path.join(stateDir, rel), path.join(staging, 'state', rel));
    }
    const { env, envFile } = daemonEnvironment(options);
    const outside: [string | undefined, string][] = [
      [envFile, 'config/environment'],
      [config.tls_cert && !isInside(config.tls_cert, stateDir) ? config.tls_cert : undefined, 'config/tls/cert.pem'],
      [config.tls_key && !isInside(config.tls_key, stateDir) ? config.tls_key : undefined, 'config/tls/key.pem'],
      [env.WAREHOUSE_CONFIG, 'config/config.json'],
    ];
    for (const [from, to] of outside) {
      if (!from) continue;
      mkdirSync(path.dirname(path.join(staging, to)), { recursive: true });
      copyFileSync(from, path.join(staging, to));
    }
    const files = filesUnder(staging).files;
    const manifest: Manifest = {
      format: ARCHIVE_FORMAT, version: VERSION, schema_version: schemaVersion, created_at: new Date().toISOString(), hostname: hostname(), state_dir: stateDir,
      files: Object.fromEntries(files.map((f) => [f, sha256(path.join(staging, f))])),
    };
    writeFileSync(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    // Keys and credentials are inside: readable by the owner only, from its first byte.
    const partial = `${target}.partial`;
    writeFileSync(partial, '', { mode: 0o600 });
    await tar.create({ gzip: true, file: partial, cwd: staging, portable: true }, [MANIFEST, ...files]);
    renameSync(partial, target);
    return manifest;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, path.resolve(file));
  return !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Restores an archive into the state directory; returns where the previous state went. */
export async function restore(config: Config, archive: string): Promise<{ previous: string; manifest: Manifest; config: string | undefined }> {
  const file = path.resolve(archive);
  if (!existsSync(file)) throw new CliError(`no archive at ${file}`, EXIT.noInput);
  const stateDir = path.resolve(config.state_dir);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const lock = withoutDaemon(stateDir, 'restore');
  const staging = path.join(stateDir, `.restore-${stamp()}`);
  try {
    mkdirSync(staging, { mode: 0o700 });
    const refused: string[] = [];
    try {
      await tar.extract({
        file, cwd: staging, strict: true, preservePaths: false,
        // Regular files and directories only: a link could point the restore outside.
        filter: (p, entry) => {
          const type = 'type' in entry ? entry.type : 'File';
          if (type === 'File' || type === 'OldFile' || type === 'Directory') return true;
          refused.push(`${p}: a ${type}, not a regular file`);
          return false;
        },
      });
    } catch (err) {
      throw new CliError(`${file} is not a readable backup archive: ${(err as Error).message}`, EXIT.dataError);
    }
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(path.join(staging, MANIFEST), 'utf8')) as Manifest;
    } catch {
      throw new CliError(`${file} has no readable ${MANIFEST}: not a controller backup`, EXIT.dataError);
    }
    const problems = [...refused, ...verifyUnpacked(staging, manifest)];
    if (problems.length > 0) throw new CliError(`${file} is damaged; nothing was restored:\n  - ${problems.join('\n  - ')}`, EXIT.dataError);
    const known = Math.max(0, ...MIGRATIONS.map((m) => m.version));
    if (manifest.schema_version > known) {
      throw new CliError(`${file} was made by a newer version (${manifest.version}, schema ${manifest.schema_version}; this build reads up to ${known}); nothing was restored`, EXIT.config);
    }
    // The state it replaces, kept whole beside it; the lock and the staging stay where they are.
    const previous = path.join(stateDir, `before-restore-${stamp()}`);
    mkdirSync(previous, { mode: 0o700 });
    for (const name of readdirSync(stateDir)) {
      if (name === 'daemon.lock' || name.startsWith('before-restore-') || name.startsWith('.restore-')) continue;
      renameSync(path.join(stateDir, name), path.join(previous, name));
    }
    for (const name of readdirSync(path.join(staging, 'state'))) renameSync(path.join(staging, 'state', name), path.join(stateDir, name));
    let restoredConfig: string | undefined;
    if (existsSync(path.join(staging, 'config'))) {
      restoredConfig = path.join(stateDir, 'restored-config');
      renameSync(path.join(staging, 'config'), restoredConfig);
    }
    const files = filesUnder(stateDir, (r) => r.startsWith('before-restore-') || r === 'daemon.lock').files;
    const folders = new Set<string>();
    for (const rel of files) for (let p = path.dirname(rel); p !== '.'; p = path.dirname(p)) folders.add(p);
    // The archive keeps no folders, so unpacking made them with the umask's mode (0755): they get
    // back the owner-only mode the daemon makes them with (the files kept their 0600).
    for (const rel of folders) chmodSync(path.join(stateDir, rel), 0o700);
    // Run as root for the service: the files go to the state directory's owner.
    if (process.getuid?.() === 0) {
      const { uid, gid } = statSync(stateDir);
      for (const rel of [...files, ...folders]) chownSync(path.join(stateDir, rel), uid, gid);
    }
    return { previous, manifest, config: restoredConfig };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}
