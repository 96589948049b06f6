/**
 * This tree's release, built once per tap run for the tests that need it
 * (test/process/release.test.ts, test/process/upgrade.test.ts): `npm run release` is a tsc, an
 * esbuild bundle, a copy and prune of node_modules and a compression, one to three minutes of
 * CPU on a CI box, and both tests used to run it each.
 *
 * The first test to ask builds it into
 *   <tmpdir>/warehouse-controller-release/run-<tap runner's pid>-<its start time>/<tree hash>/out
 * under a lock file (the tests run in two tap workers at once); the other waits for it and reads
 * the same tarball and the build's own exit status and output, a failed build included. The
 * tree hash covers every file git sees in the work tree outside test/ (tracked or not, as it is
 * on disk), HEAD, the installed packages (node_modules/.package-lock.json), the built addon and
 * the Node.js that builds: a tree edited between the two tests' starts gets a build of its own.
 * Nothing outlives the run: the next run's first build removes the directories of tap runs
 * that have ended, and a test file run by itself (not under tap) builds its own release.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run, type Run } from './run.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CACHE = path.join(tmpdir(), 'warehouse-controller-release');

export interface ReleaseBuild extends Run {
  /** The directory given to `--out`: the tarball and its .sha256 only. */
  out: string;
  /** The tarball's path as the build printed it last (undefined when it printed nothing). */
  tarball: string | undefined;
  /** Whether this process ran the build or took another test's (reported, not asserted). */
  builtHere: boolean;
  /** How long the build took, in ms. */
  ms: number;
}

/** A process's start time in clock ticks since boot (/proc/<pid>/stat, field 22), or undefined when it is gone. */
function startTime(pid: number): string | undefined {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The tap run this test file belongs to: its runner process, which spawned this one. Undefined outside tap. */
function tapRun(): string | undefined {
  if (process.env.TAP !== '1' || process.env.TAP_CHILD_ID === undefined) return undefined;
  const started = startTime(process.ppid);
  return started === undefined ? undefined : `run-${process.ppid}-${started}`;
}

/** Whether the directory `name` (run-<pid>-<start> of a tap runner, own-<pid>-<start> of a test file run alone) belongs to a process still running. */
function owned(name: string): boolean {
  const m = /^(?:run|own)-(\d+)-(\d+)$/.exec(name);
  return m !== null && startTime(Number(m[1])) === m[2];
}

/** What the release is built from, as a hash (see the top of this file). */
async function treeHash(): Promise<string> {
  const h = createHash('sha256');
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], ROOT);
  const head = await run('git', ['rev-parse', 'HEAD'], ROOT);
  if (listed.status !== 0) throw new Error(`git ls-files: ${listed.stderr}`);
  h.update(`HEAD ${head.stdout.trim()}\nnode ${process.execPath} ${process.version}\n`);
  const files = [...new Set(listed.stdout.split('\0').filter((f) => f !== '' && !f.startsWith('test/')))].sort();
  for (const file of [...files, 'node_modules/.package-lock.json', 'native/build/Release/warehouse_native.node']) {
    h.update(`${file}\0`);
    // A file git lists but the tree no longer has (deleted, not yet committed) counts as absent.
    try {
      h.update(readFileSync(path.join(ROOT, file)));
    } catch {
      h.update('\0absent\0');
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** Whether process `pid` is alive (a signal 0 reaches it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `npm run release -- --out <dir>/out`, niced: the test files running beside it (daemons under a watchdog, timeouts) come first. */
async function build(dir: string): Promise<ReleaseBuild> {
  const out = path.join(dir, 'out');
  rmSync(out, { recursive: true, force: true });
  const began = performance.now();
  const r = await run('nice', ['-n', '10', 'npm', 'run', '--silent', 'release', '--', '--out', out], ROOT);
  return { ...r, out, tarball: r.stdout.trim().split('\n').at(-1) || undefined, builtHere: true, ms: Math.round(performance.now() - began) };
}

let mine: Promise<ReleaseBuild> | undefined;

/** This tree's release, built once per tap run (see the top of this file). */
export function releaseBuild(): Promise<ReleaseBuild> {
  mine ??= shared();
  return mine;
}

async function shared(): Promise<ReleaseBuild> {
  mkdirSync(CACHE, { recursive: true });
  const runId = tapRun();
  if (runId === undefined) return build(ownDir());
  for (const name of readdirSync(CACHE)) {
    if (name !== runId && !owned(name)) rmSync(path.join(CACHE, name), { recursive: true, force: true });
  }
  const dir = path.join(CACHE, runId, await treeHash());
  mkdirSync(dir, { recursive: true });
  const result = path.join(dir, 'result.json');
  const lock = path.join(dir, 'lock');
  for (;;) {
    if (existsSync(result)) return { ...(JSON.parse(readFileSync(result, 'utf8')) as ReleaseBuild), builtHere: false };
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // Another test file builds it; a builder that died (killed by its timeout) leaves its lock
      // behind, and then this one builds.
      const owner = Number(readFileSync(lock, 'utf8').trim());
      if (owner > 0 && !alive(owner) && !existsSync(result)) rmSync(lock, { force: true });
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    writeSync(fd, String(process.pid));
    closeSync(fd);
    try {
      const built = await build(dir);
      writeFileSync(`${result}.part`, JSON.stringify(built));
      renameSync(`${result}.part`, result);
      return built;
    } finally {
      unlinkSync(lock);
    }
  }
}

/** A directory of its own for a release built outside tap, removed when this process exits. */
function ownDir(): string {
  const dir = path.join(CACHE, `own-${process.pid}-${startTime(process.pid) ?? Date.now()}`);
  mkdirSync(dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
