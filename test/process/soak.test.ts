// The short form of bench:soak: the same bench, the whole daemon with its simulated site, for a
// minute and a half with its wall clock 3600 times faster (a day of history ages in 24 s) and
// the retention at one day. Only what does not depend on the box's speed is checked: every
// sample printed, no error, no lost work, and the ended requests past the retention pruned at
// the pruner's last pass while every other request is still there. The figures themselves
// (flat or not) are the long run's, in docs/benchmarks.md.
import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { libfaketime } from '../helpers/faketime.js';

t.setTimeout(300_000);

if (!libfaketime()) throw new Error('libfaketime is not installed (apt-get install faketime; .ci/run installs it)');

const ROOT = path.join(import.meta.dirname, '../..');

t.test('a minute and a half of the soak at 3600x: no error, no lost work, history past the retention pruned', async (t) => {
  // CI has just built dist/; elsewhere the bench builds it, so the daemon measured is the sources'.
  const build = process.env.WAREHOUSE_TEST_DIST === '1' ? ['--no-build'] : [];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/soak.ts'),
    '--minutes', '1.5', '--interval-minutes', '0.25', '--speed', '3600', '--rate', '5', '--seed', '7', '--nudge-pruner', ...build], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  // The bench's own account (the rows and the end's checks) goes with a failure only.
  const account = () => {
    if (!t.passing()) t.comment(out.split('\n').slice(-40).join('\n'));
  };
  const line = out.split('\n').find((l) => l.startsWith('soak result '));
  t.ok(line, 'the bench printed its result');
  if (!line) return account();
  const r = JSON.parse(line.slice('soak result '.length)) as {
    samples: number; errors: number; errorKinds: string[]; lost: number; posted: number; ended: number; held: number; pruned: number; keptPastRetention: number; open: number;
  };
  t.equal(r.samples, 6, 'a sample every quarter of a minute');
  t.equal(r.errors, 0, `no errors${r.errors > 0 ? `: ${r.errorKinds.join(' | ')}` : ''}`);
  t.equal(r.lost, 0, 'no lost work');
  t.ok(r.posted > 0 && r.ended > 0, `the site worked: ${r.posted} requests posted, ${r.ended} ended`);
  t.ok(r.pruned > 0, `ended requests past the retention left the store (${r.pruned})`);
  t.equal(r.keptPastRetention, 0, 'none ended before the last pass less the retention is still held');
  t.equal(r.held + r.pruned, r.posted, 'every posted request is held or was pruned past the retention');
  t.equal(code, 0, 'the bench exits 0');
  account();
});
