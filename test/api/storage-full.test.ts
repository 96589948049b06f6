// A full disk is an operational state: the state directory on a small tmpfs that is then
// filled up; writes answer 507 storage_full (never 500), reads go on, the storage status says
// ERROR, one event says so and another when space is back; nothing written before is harmed.
import t from 'tap';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '../helpers/client.js';
import { fillUp, smallDisk } from '../helpers/small-disk.js';
import { startTestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { decideLowSpace } from '../../src/storage-watch.js';
import { storageFault } from '../../src/store/storage-fault.js';

t.setTimeout(300_000);

t.test('decideLowSpace: once below the threshold, again only after climbing back above it', async (t) => {
  const mib = 1024 ** 2;
  const cases = [
    { state: { low: false }, free: 500 * mib, warn: false, low: false },
    { state: { low: false }, free: 50 * mib, warn: true, low: true },
    { state: { low: true }, free: 40 * mib, warn: false, low: true },
    { state: { low: true }, free: 105 * mib, warn: false, low: true }, // within the hysteresis
    { state: { low: true }, free: 120 * mib, warn: false, low: false },
    { state: { low: false }, free: undefined, warn: false, low: false },
  ];
  for (const c of cases) {
    const d = decideLowSpace(c.state, c.free, 100 * mib);
    t.same([d.warn, d.next.low], [c.warn, c.low], JSON.stringify(c));
  }
  t.same(decideLowSpace({ low: false }, 1, 0), { warn: false, next: { low: false } }, '0 turns the warning off');
});

t.test('storageFault: ENOSPC and map full are a full disk; a bug is not the disk', async (t) => {
  t.equal(storageFault(Object.assign(new Error('No space left on device'), { code: 28 }), '/tmp')?.full, true);
  t.equal(storageFault(Object.assign(new Error('MDB_MAP_FULL: Environment mapsize limit reached'), { code: -30792 }), '/tmp')?.full, true);
  t.equal(storageFault(Object.assign(new Error('Input/output error'), { code: 5 }), '/tmp')?.full, false, 'EIO with space left: a disk error');
  t.equal(storageFault(new TypeError('x is undefined'), '/tmp'), undefined);
});

t.test('the state directory on a filesystem that fills up', async (t) => {
  const mount = smallDisk(t, '48m');
  if (!mount) return;
  const stateDir = path.join(mount, 'state');
  // The threshold above the whole filesystem: the low-space warning comes at start.
  const a = await startTestApp({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_DISK_LOW_BYTES: String(64 << 20) });
  t.teardown(() => a.close());
  const key = JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')).api_key as string;
  const c = new Client(a.app.port, readFileSync(a.app.tls.certFile), key);
  t.teardown(() => c.close());
  t.ok((await c.get('/api/v2/events?hex_value__eq=0x100A')).json.items.length === 1, 'event 0x100A: disk space low');

  const created: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await c.post('/api/v2/sku', { id: `before-${i}`, name: `before ${i}` });
    t.equal(r.status, 201);
    created.push(r.json.id);
  }

  // Fill the filesystem to the last block.
  const filler = path.join(mount, 'filler');
  fillUp(filler);

  let refused: Awaited<ReturnType<typeof c.post>> | undefined;
  for (let i = 0; i < 2000 && !refused; i++) {
    const r = await c.post('/api/v2/sku', { id: `during-${i}`, name: 'x'.repeat(200) });
    t.not(r.status, 500, 'never a 500');
    if (r.status === 507) refused = r;
    else t.equal(r.status, 201);
  }
  t.ok(refused, 'a write is refused once the disk is full');
  t.match(refused!.json, { code: 'storage_full', detail: /Storage full: nothing was written/ });
  t.equal((await c.get('/api/v2/storage_status')).json.storage_status, 'ERROR', 'the storage status says so');
  const read = await c.get('/api/v2/skus?size=1000');
  t.equal(read.status, 200, 'reads keep working');
  t.ok(a.lines.some((l) => l.code === 'storage_full' && l.level === 'error'), 'one error line for the technician');
  t.notOk(a.lines.some((l) => l.msg === 'request failed'), 'not logged as a bug');
  t.equal(a.lines.filter((l) => l.code === 'storage_full').length, 1, 'said once, not per request');
  // LMDB may still fit a small write in pages the refused one freed; the disk stays full.
  const again = await c.post('/api/v2/sku', { id: 'during-again', name: 'x'.repeat(200) });
  t.ok(again.status === 507 || again.status === 201, 'a later write: refused or fitted, never a 500');
  t.equal((await c.get('/api/v2/storage_status')).json.storage_status, 'ERROR', 'still ERROR while the disk is full');

  rmSync(filler);
  // Space is back: the next write goes through, or the watcher's probe clears the fault.
  const after = await c.post('/api/v2/sku', { id: 'after', name: 'after' });
  t.equal(after.status, 201, 'writes work again once space is freed');
  await until('the status to recover', async () => (await c.get('/api/v2/storage_status')).json.storage_status !== 'ERROR');
  // The event is a write of its own, made once the fault clears: it may commit a turn later.
  let events: string[] = [];
  await until('event 0x1009', async () => (events = (await c.get('/api/v2/events?size=50')).json.items.map((e: any) => e.hex_value)).includes('0x1009'));
  t.ok(events.includes('0x1009'), 'event 0x1009: writable again');
  t.ok(events.includes('0x1008') || a.lines.some((l) => /could not record a storage event/.test(l.msg)), 'event 0x1008, or a log line saying the full disk took it too');
  const ids = new Set((await c.get('/api/v2/skus?size=1000')).json.items.map((s: any) => s.id));
  t.ok(created.every((id) => ids.has(id)), 'every SKU written before the disk filled is intact');
});
