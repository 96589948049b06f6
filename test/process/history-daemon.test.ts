// Keeping history on the real daemon: ended requests exported on demand beside it, then a
// restart with its clock 120 days ahead (libfaketime, the wall clock only) drops every ended
// request past the default retention into the archive and keeps every open one; a pruned id
// answers a 404 that says so; compact gives the file's free pages back and the daemon starts
// on the compacted store, with its clock back where it was.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { exited, startWithClient } from '../helpers/daemon.js';
import { entryArgs } from '../helpers/entry.js';
import { fakeClock, libfaketime } from '../helpers/faketime.js';
import { until } from '../helpers/until.js';

t.setTimeout(300_000);


const CLI = entryArgs('cli/main');
const cli = (args: string[]) => spawnSync(process.execPath, [...CLI, '--env-file', '/dev/null', ...args], { env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root' }, encoding: 'utf8', timeout: 120_000 });

const ENV = { WAREHOUSE_PORT: '0', WAREHOUSE_LINKS: 'off', WAREHOUSE_TIMEZONE: 'UTC' };

const lines = (file: string) => gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

t.test('a daemon restarted 120 days ahead has pruned every ended request past the retention and kept every open one', { skip: libfaketime() ? false : 'no libfaketime (apt-get install faketime; .ci/run installs it)' }, async (t) => {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-history-daemon-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));

  let { d, c } = await startWithClient(t, stateDir, ENV);
  const post = async () => (await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FULFILLMENT', entities: [{ sku_id: 'SKU-00001', quantity: 1 }] } })).json.id as string;
  const ended = [await post(), await post()];
  const open = await post();
  for (const id of ended) t.equal((await c.request(`/api/v2/requests/${id}/cancel`, { method: 'POST', json: {} })).status, 200);
  await until('the cancelled requests ended', async () => {
    const page = (await c.get('/api/v2/requests?status__eq=CANCELLED&size=10')).json;
    return page.total === 2;
  });
  const before = (await c.get('/api/v2/system/storage')).json;
  t.match(before, { history: { retention_days: 90, pruned_requests: 0 }, archive: { files: 0 } });
  t.ok(before.used_bytes > 0 && before.file_bytes >= before.used_bytes);

  const status = await until('status shows the store', async () => {
    const r = cli(['--state-dir', stateDir, 'status']);
    return /^store: /m.test(r.stdout) && r;
  }, 60_000);
  t.match(status.stdout, /^store: [\d.]+ MiB used in a [\d.]+ MiB file \([\d.]+ MiB free pages\); [\d.]+ % of its share of the disk/m);
  t.match(status.stdout, /^history: kept 90 days \(events 30\); last pass .*; archive .*archive: 0 files/m);

  const out = mkdtempSync(path.join(tmpdir(), 'wh-export-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  const exported = cli(['--state-dir', stateDir, 'history-export', '--from', '2000-01-01', '--to', '2100-01-01', '--out', out]);
  t.equal(exported.status, 0, exported.stderr);
  t.match(exported.stdout, /^requests-.*\.ndjson\.gz: \d+ records, \d+ bytes, sha256 [0-9a-f]{64}\nevents-/);
  const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')).files as { file: string; kind: string }[];
  const requestLines = lines(path.join(out, manifest.find((f) => f.kind === 'requests')!.file));
  t.same(requestLines.filter((l) => l['kind'] === 'request').map((l) => l['id']).sort(), [...ended, open].sort(), 'every request of the range, beside the running daemon');
  t.equal(cli(['--state-dir', stateDir, 'history-export', '--from', 'yesterday', '--to', '2100-01-01', '--out', out]).status, 64, 'a bound that is no date');
  t.equal(cli(['--state-dir', stateDir, 'compact']).status, 75, 'compact refuses while the daemon runs: EX_TEMPFAIL');

  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0);
  // The wall clock 120 days ahead; timers and pacing (the monotonic clock) keep real time.
  ({ d, c } = await startWithClient(t, stateDir, { ...ENV, ...fakeClock('+120d') }));
  const after = await until('the pruner has run', async () => {
    const s = (await c.get('/api/v2/system/storage')).json;
    return s.history.pruned_requests >= 2 && s;
  }, 60_000);
  t.match(after.history, { pruned_requests: 2, last_error: null });
  t.ok(after.archive.files >= 1);
  for (const id of ended) {
    const gone = await c.request(`/api/v2/requests/${id}/job-graph`);
    t.equal(gone.status, 404);
    t.match(JSON.stringify(gone.json), /have been pruned \(history\.retentionDays\) into the history archive/, 'the 404 says it was pruned');
  }
  t.equal((await c.request(`/api/v2/requests/${open}/job-graph`)).status, 200, 'the open request is kept');
  const archived = readdirSync(path.join(stateDir, 'archive')).filter((f) => f.startsWith('requests-'));
  const pruned = archived.flatMap((f) => lines(path.join(stateDir, 'archive', f))).filter((l) => l['kind'] === 'request').map((l) => l['id']);
  t.same(pruned.sort(), [...ended].sort(), 'what left the store is in the archive');
  const sums = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: path.join(stateDir, 'archive'), encoding: 'utf8' });
  t.equal(sums.status, 0, `sha256sum -c checks the archive: ${sums.stdout}${sums.stderr}`);

  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0);
  const compacted = cli(['--state-dir', stateDir, 'compact']);
  t.equal(compacted.status, 0, compacted.stderr);
  t.match(compacted.stdout, /^store compacted: [\d.]+ MiB -> [\d.]+ MiB\n$/);
  // The clock back 120 days, as after an NTP step: the compacted store starts and holds the open request.
  ({ d, c } = await startWithClient(t, stateDir, ENV));
  t.equal((await c.request(`/api/v2/requests/${open}/job-graph`)).status, 200, 'the compacted store holds the open request');
  d.child.kill('SIGTERM');
  t.equal(await exited(d.child), 0);
});
