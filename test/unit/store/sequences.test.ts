// Named integer sequences in the meta database: each value given once, raised past imported
// ids, never lowered, and undone with a write that throws.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';

t.test('sequences count from 1, rise past a raised value, never fall, and go back with a refused write', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-sequences-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let store = await Store.open({ dir });
  t.equal(store.sequence('box'), 0, 'before its first use');
  t.same(await store.write(() => [store.nextId('box'), store.nextId('box'), store.nextId('other')]), [1, 2, 1]);

  await store.write(() => store.raiseSequence('box', 10));
  t.equal(store.sequence('box'), 10);
  await store.write(() => store.raiseSequence('box', 4));
  t.equal(store.sequence('box'), 10, 'a lower value leaves it');
  t.equal(await store.write(() => store.nextId('box')), 11);

  await t.rejects(store.write(() => {
    store.raiseSequence('box', 50);
    store.nextId('box');
    throw new Error('refused');
  }), /refused/);
  t.equal(store.sequence('box'), 11, 'the refused write\'s raise and value are undone');
  t.throws(() => store.raiseSequence('box', 60), /inside Store.write/);

  await store.close();
  store = await Store.open({ dir });
  t.teardown(() => store.close());
  t.equal(store.sequence('box'), 11, 'durable');
  t.equal(store.sequence('other'), 1);
});
