// A collection's `changed` hook: it sees each put and remove with the record before and after,
// its writes to other collections commit with the change, and a write that throws takes the
// hook's writes back with its own.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CollectionDef } from '../../../src/store/collection.js';
import { Store } from '../../../src/store/store.js';
import { things, type Thing } from '../../fixtures/things.js';

interface Tally { id: string; n: number }
const tallies: CollectionDef<Tally> = { name: 'tallies', key: (r) => r.id };
const seen: [string | undefined, string | undefined][] = [];
/** Counts the things of each group, kept by the hook. */
const counted: CollectionDef<Thing> = {
  ...things,
  changed(before, after, store) {
    seen.push([before?.code, after?.code]);
    const c = store.collection(tallies);
    const bump = (group: number, by: number) => {
      const id = `g${group}`;
      c.put({ id, n: (c.get(id)?.n ?? 0) + by });
    };
    if (before) bump(before.group, -1);
    if (after) bump(after.group, +1);
  },
};

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-changed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the hook sees before and after and writes in the same commit; a throw undoes its writes too', async (t) => {
  const dir = tempDir(t);
  seen.length = 0;
  let store = await Store.open({ dir }, [counted, tallies]);
  const c = store.collection(counted);
  await store.write(() => {
    c.put({ id: 'a', group: 1, tags: [], code: 'A1' });
    c.put({ id: 'b', group: 1, tags: [], code: 'B1' });
  });
  await store.write(() => c.put({ id: 'a', group: 2, tags: [], code: 'A2' }));
  t.same(seen, [[undefined, 'A1'], [undefined, 'B1'], ['A1', 'A2']]);
  t.equal(store.collection(tallies).get('g1')?.n, 1);
  t.equal(store.collection(tallies).get('g2')?.n, 1);

  await t.rejects(store.write(() => {
    c.remove('b');
    throw new Error('refused');
  }), /refused/);
  t.equal(store.collection(tallies).get('g1')?.n, 1, 'the hook\'s write went with the refused one');
  t.ok(c.has('b'));

  await store.write(() => c.remove('b'));
  t.equal(store.collection(tallies).get('g1')?.n, 0, 'a remove is heard with no after');
  await store.close();

  store = await Store.open({ dir }, [counted, tallies]);
  t.teardown(() => store.close());
  t.equal(store.collection(tallies).get('g2')?.n, 1, 'the derived record is durable with the change');
});

t.test('a collection opened without the hook, or a store opened with a plain definition, writes as before', async (t) => {
  const dir = tempDir(t);
  seen.length = 0;
  const store = await Store.open({ dir }, [things, tallies]);
  t.teardown(() => store.close());
  await store.write(() => store.collection(things).put({ id: 'a', group: 1, tags: [] }));
  t.same(seen, []);
  t.equal(store.collection(tallies).count(), 0);
});
