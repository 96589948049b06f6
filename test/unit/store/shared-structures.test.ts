// Records name their fields by msgpackr structures shared through the meta database (under
// load, decoding the field names of every record was a third of both threads' time). Records written
// before stay readable; a rolled-back write leaves no structure behind that a later record
// could point to; two writers on one environment (the API's thread and the brain's) each
// read the other's records.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { Store } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import type { CollectionDef } from '../../../src/store/collection.js';
import { holdLock } from '../../helpers/lmdb-lock.js';
import { fillUp, smallDisk } from '../../helpers/small-disk.js';

interface Thing {
  id: string;
  [field: string]: unknown;
}
const things: CollectionDef<Thing> = { name: 'things', key: (r) => r.id };

function tempDir(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-structures-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The stored bytes of record `key` of `things`, read beside the store as another process would. */
function storedBytes(dir: string, key: string): Buffer {
  const root = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, readOnly: true, compression: false });
  try {
    return Buffer.from(root.openDB({ name: 'things', encoding: 'binary' }).getBinary(key)!);
  } finally {
    void root.close();
  }
}

/** Every record of `things` in a store opened afresh (no structure held in memory). */
async function readAfresh(dir: string): Promise<Thing[]> {
  const store = await Store.open({ dir }, [things as never], MIGRATIONS);
  try {
    return [...store.collection(things).scan()];
  } finally {
    await store.close();
  }
}

const job = (id: string, n: number): Thing => ({ id, request_id: `R-${n}`, status: 'SUCCEEDED', quantity: 64 + n, progress: { kind: 'carrier', phase: 'done' }, target: { x: n, y: 70 } });
const other = (id: string): Thing => ({ id, name: 'bolt', unit: 'PIECE', depth: 100 });

t.test('records name their fields by a structure kept in meta, not by their names', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things as never], MIGRATIONS);
  await store.write(() => {
    for (let i = 0; i < 10; i++) store.collection(things).put(job(`J-${i}`, i));
  });
  t.same(store.collection(things).get('J-3'), job('J-3', 3));
  await store.close();
  const bytes = storedBytes(dir, 'J-3');
  t.notOk(bytes.includes('request_id'), 'no field name in the record');
  t.ok(bytes.length < 40, `${bytes.length} bytes`);
  t.same(await readAfresh(dir), Array.from({ length: 10 }, (_, i) => job(`J-${i}`, i)), 'read back by a store that loads the structures');
});

t.test('records written before shared structures stay readable, beside new ones, after the upgrade', async (t) => {
  const dir = tempDir(t);
  // The store as the build before wrote it: lmdb-js's own encoder, each record with its names.
  const root = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false });
  const oldThings = root.openDB<Thing, string>({ name: 'things' });
  await root.openDB<number, string>({ name: 'meta' }).put('schema_version', 6);
  for (let i = 0; i < 5; i++) await oldThings.put(`J-old-${i}`, job(`J-old-${i}`, i));
  await oldThings.put('S-old', other('S-old'));
  await root.close();
  t.ok(storedBytes(dir, 'J-old-1').includes('request_id'), 'an old record carries its names');

  const store = await Store.open({ dir }, [things as never], MIGRATIONS);
  t.equal(store.schemaVersion(), MIGRATIONS.at(-1)!.version);
  const c = store.collection(things);
  // New records take shared structure numbers that the old records' own definitions also use.
  await store.write(() => {
    c.put(other('S-new'));
    for (let i = 0; i < 5; i++) c.put(job(`J-new-${i}`, i));
  });
  const expected = [
    ...Array.from({ length: 5 }, (_, i) => job(`J-new-${i}`, i)), ...Array.from({ length: 5 }, (_, i) => job(`J-old-${i}`, i)), other('S-new'), other('S-old'),
  ];
  // Interleaved: an old record's own definition must not replace a shared one for the next record.
  for (const id of ['J-old-0', 'J-new-0', 'S-old', 'S-new', 'J-old-4', 'J-new-4']) t.same(c.get(id), expected.find((r) => r.id === id), id);
  t.same([...c.scan()], expected, 'a scan of old and new');
  // An old record written again takes the shared structure.
  await store.write(() => c.put({ ...c.get('J-old-2')!, status: 'CANCELLED' }));
  await store.close();
  t.notOk(storedBytes(dir, 'J-old-2').includes('request_id'), 'an old record written again is in the new form');
  expected.find((r) => r.id === 'J-old-2')!['status'] = 'CANCELLED';
  t.same(await readAfresh(dir), expected, 'all of them after a restart');
});

t.test('a rolled-back write leaves no structure that a later record points to', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things as never], MIGRATIONS);
  const c = store.collection(things);
  await t.rejects(store.write(() => {
    c.put(job('J-1', 1));
    throw new Error('refused');
  }), /refused/);
  // The same shape again, committed: its structure must be stored with it.
  await store.write(() => c.put(job('J-2', 2)));
  t.same(await readAfresh(dir), [job('J-2', 2)], 'read by a store that loads the structures');
  // A batch whose one write throws is tried again write by write.
  const refused = store.write(() => {
    c.put(other('S-1'));
    throw new Error('refused too');
  });
  const kept = store.write(() => c.put({ ...other('S-2'), extra: true }));
  await t.rejects(refused, /refused too/);
  await kept;
  await store.write(() => c.put(other('S-3')));
  t.same([...c.scan()], [job('J-2', 2), { ...other('S-2'), extra: true }, other('S-3')]);
  await store.close();
  t.same(await readAfresh(dir), [job('J-2', 2), { ...other('S-2'), extra: true }, other('S-3')], 'read back by a store that loads the structures');
});

t.test('a write rolled back after a write inside it was: no structure of either is left behind', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things as never], MIGRATIONS);
  const c = store.collection(things);
  await t.rejects(store.write(() => {
    c.put(job('J-1', 1));
    // A service that writes, called by one that writes: a child transaction, rolled back alone.
    store.write(() => {
      c.put(other('S-1'));
      throw new Error('inner refused');
    }).catch(() => undefined);
    // Encoded after the child's rollback: with the structures read again inside this transaction.
    c.put(job('J-3', 3));
    throw new Error('outer refused');
  }), /outer refused/);
  await store.write(() => c.put(job('J-2', 2)));
  t.same(await readAfresh(dir), [job('J-2', 2)], 'read by a store that loads the structures');
  await store.close();
});

t.test('two writers on one environment: each reads what the other wrote, also after a rollback', async (t) => {
  const dir = tempDir(t);
  const api = await Store.open({ dir }, [things as never], MIGRATIONS);
  const brain = await Store.open({ dir }, [things as never], MIGRATIONS);
  const a = api.collection(things);
  const b = brain.collection(things);
  await t.rejects(api.write(() => {
    a.put(job('J-1', 1));
    throw new Error('refused');
  }), /refused/);
  // The other writer stores its first structure under the number the rolled-back one had.
  await brain.write(() => b.put(other('S-1')));
  await api.write(() => a.put(job('J-2', 2)));
  brain.refresh();
  api.refresh();
  t.same(b.get('J-2'), job('J-2', 2), 'the brain reads the API\'s record');
  t.same(a.get('S-1'), other('S-1'), 'the API reads the brain\'s record');
  // Both add structures in turn: each save finds the other's and merges it.
  for (let i = 0; i < 20; i++) {
    const [store, c] = i % 2 ? [api, a] : [brain, b];
    await store.write(() => c.put({ id: `X-${i}`, [`field_${i}`]: i, shared: 'yes' }));
    api.refresh();
    brain.refresh();
  }
  const all = [...a.scan()];
  t.same([...b.scan()], all, 'both read the same records');
  await api.close();
  await brain.close();
  t.same(await readAfresh(dir), all, 'and so does a store opened afresh');
  t.equal(all.length, 22);
});

for (const offLoop of [false, true]) {
  t.test(`a commit the full disk refused after it stored a structure (${offLoop ? "on lmdb-js's write thread" : 'on the event loop'}): the next write stores it again`, async (t) => {
    const mount = smallDisk(t, '8m');
    if (!mount) return;
    const dir = path.join(mount, 'state');
    const store = await Store.open({ dir }, [things as never], MIGRATIONS);
    const c = store.collection(things);
    const onLoop: boolean[] = [];
    store.onCommitHeld((timing) => onLoop.push(timing.onLoop));
    if (offLoop) {
      // A commit that waits for the lock on the event loop sends the next ones to the write thread.
      const holder = await holdLock(dir, path.join(mount, 'holding'), 300);
      await store.write(() => c.put(other('S-1')));
      await new Promise((resolve) => holder.once('exit', resolve));
    } else {
      await store.write(() => c.put(other('S-1')));
    }
    const filler = path.join(mount, 'filler');
    fillUp(filler);
    // A new shape, too big for the pages the file has: its structure is stored in a transaction
    // the disk refuses. The next write frees the space and uses the same shape: it must store the
    // structure again, not point to the one that was never kept.
    const big = { id: 'A', blob: 'a'.repeat(1 << 20), shape: 'new' };
    await t.rejects(store.write(() => c.put(big)), { name: 'StorageFaultError' }, 'the full disk refuses the first');
    await store.write(() => {
      rmSync(filler);
      c.put({ ...big, id: 'B', blob: 'b' });
    });
    t.same(c.get('B'), { ...big, id: 'B', blob: 'b' });
    t.equal(onLoop.at(-1), !offLoop, offLoop ? 'committed on the write thread' : 'committed on the event loop');
    t.notOk(c.has('A'));
    await store.close();
    t.same(await readAfresh(dir), [{ ...big, id: 'B', blob: 'b' }, other('S-1')], 'read by a store that loads the structures');
  });
}
