// `npm start` as package.json has it: it builds only when dist/ is missing or older than the
// sources (a build takes seconds), and with --silent its standard output is the daemon's JSON
// log alone, so `npm start --silent | jq` works whether or not it built first. Run in a folder
// of its own with the real prestart and start scripts, a build that only leaves a mark, and a
// daemon that prints one JSON line.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

t.setTimeout(120_000);

const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts as Record<string, string>;

/** A checkout with sources, the real start scripts and a stand-in build; returns its folder. */
function checkout(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The stand-in build says so on stdout (as the console build does) and writes dist/.
  const build = 'echo building the sources && mkdir -p dist/console && echo > dist/main.js && echo > dist/console/index.html && echo > built';
  const start = 'node -e "console.log(JSON.stringify({level:\'info\',msg:\'listening\'}))"';
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'start-check', version: '1.0.0', private: true, scripts: { prestart: scripts.prestart, start, build } }));
  for (const f of ['package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) writeFileSync(path.join(dir, f), '{}');
  mkdirSync(path.join(dir, 'src'));
  mkdirSync(path.join(dir, 'browser'));
  writeFileSync(path.join(dir, 'src/main.ts'), '');
  writeFileSync(path.join(dir, 'browser/main.tsx'), '');
  return dir;
}

/** Sets a file's times to `secondsAgo` seconds before now. */
const age = (file: string, secondsAgo: number) => {
  const at = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(file, at, at);
};

/** Every source and config file `secondsAgo` old. */
function ageSources(dir: string, secondsAgo: number): void {
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src/main.ts', 'browser/main.tsx']) age(path.join(dir, f), secondsAgo);
}

function npmStart(dir: string): { code: number | null; out: string; built: boolean } {
  rmSync(path.join(dir, 'built'), { force: true });
  const r = spawnSync('npm', ['start', '--silent'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root' } });
  return { code: r.status, out: r.stdout, built: existsSync(path.join(dir, 'built')) };
}

/** Each line of stdout is JSON: what `| jq` needs. */
const jsonLines = (out: string) => out.trim().split('\n').every((l) => {
  try {
    JSON.parse(l);
    return true;
  } catch {
    return false;
  }
});

/** `npm start --silent` starts, built or not as `build` says, and its stdout is JSON lines only. */
function startsClean(t: Test, dir: string, build: boolean, why: string): void {
  const r = npmStart(dir);
  t.equal(r.code, 0, `${why}: started`);
  t.equal(r.built, build, `${why}: ${build ? 'built' : 'no build'}`);
  t.ok(jsonLines(r.out), `stdout is JSON lines only: ${JSON.stringify(r.out)}`);
}

t.test('a fresh clone builds, then starts; its stdout is the JSON log alone', async (t) => {
  startsClean(t, checkout(t), true, 'no dist/');
});

t.test('dist/ newer than every source: starts without building', async (t) => {
  const dir = checkout(t);
  t.ok(npmStart(dir).built);
  ageSources(dir, 60);
  startsClean(t, dir, false, 'dist is current');
});

t.test('a source, a config file or the lock file newer than dist/, or the console missing: builds again', async (t) => {
  const dir = checkout(t);
  t.ok(npmStart(dir).built);
  for (const changed of ['src/main.ts', 'browser/main.tsx', 'tsconfig.build.json', 'package-lock.json']) {
    ageSources(dir, 120);
    age(path.join(dir, 'dist/main.js'), 60);
    age(path.join(dir, changed), 10);
    startsClean(t, dir, true, `${changed} changed`);
  }
  ageSources(dir, 60);
  rmSync(path.join(dir, 'dist/console'), { recursive: true });
  t.ok(npmStart(dir).built, 'no console: built');
});

t.test('a failed build stops the start', async (t) => {
  const dir = checkout(t);
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  pkg.scripts.build = 'echo a type error && exit 2';
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  const r = npmStart(dir);
  t.not(r.code, 0);
  t.notMatch(r.out, /listening/, 'the daemon did not start');
});
