// Running the migrations at open: all pending steps in one transaction that a throw aborts
// whole, and a read-only open (the technician's commands) that refuses a store of another
// schema version rather than misread it.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store, StoreTooNewError, StoreVersionError, type Migration } from '../../../src/store/store.js';
import { open } from 'lmdb';
import { indexDbName } from '../../../src/store/collection.js';
import { things, type Thing } from '../../fixtures/things.js';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const putting = (version: number): Migration => ({ version, description: `puts m${version}`, up: (s) => s.collection(things).put({ id: `m${version}`, group: version, tags: [] }) });

t.test('a migration that throws keeps nothing of any pending step: the store stays at its version', async (t) => {
  const dir = tempDir(t);
  const first = await Store.open({ dir }, [things], [putting(1)]);
  await first.close();

  const failing: Migration = { version: 3, description: 'throws', up: (s) => { s.nextId('during'); throw new Error('step 3 failed'); } };
  await t.rejects(Store.open({ dir }, [things], [putting(1), putting(2), failing]), /step 3 failed/);

  const again = await Store.open({ dir }, [things], [putting(1)]);
  t.teardown(() => again.close());
  t.equal(again.schemaVersion(), 1, 'still at version 1');
  t.ok(again.collection(things).has('m1'));
  t.notOk(again.collection(things).has('m2'), 'the step before the throw is not kept either');
  t.equal(again.sequence('during'), 0, 'nor the sequence the failing step took');
});

t.test('what the steps put is in its indexes once the store is open', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things], [putting(1), putting(2)]);
  t.teardown(() => store.close());
  t.same(store.collection(things).keysBy('group', 2), ['m2']);
  t.equal(store.schemaVersion(), 2);
});

t.test('a newer store is refused, and says which versions', async (t) => {
  const dir = tempDir(t);
  await (await Store.open({ dir }, [things], [putting(1), putting(2)])).close();
  const refused = await Store.open({ dir }, [things], [putting(1)]).then(() => undefined, (err: unknown) => err);
  t.ok(refused instanceof StoreTooNewError);
  t.match(refused, { found: 2, known: 1, message: /schema version 2, newer than this build knows \(1\)/ });
});

t.test('a read-only open reads a store of its own version and refuses any other, migrating nothing', async (t) => {
  const dir = tempDir(t);
  await (await Store.open({ dir }, [things], [putting(1), putting(2)])).close();

  const same = await Store.open({ dir, readOnly: true }, [things], [putting(1), putting(2)]);
  t.ok(same.collection(things).has('m2'));
  await same.close();

  const older = await Store.open({ dir, readOnly: true }, [things], [putting(1)]).then(() => undefined, (err: unknown) => err);
  t.ok(older instanceof StoreVersionError, 'a build older than the store');
  t.match(older, { found: 2, known: 1, message: /use the version that wrote it/ });

  const newer = await Store.open({ dir, readOnly: true }, [things], [putting(1), putting(2), putting(3)]).then(() => undefined, (err: unknown) => err);
  t.ok(newer instanceof StoreVersionError, 'a build newer than the store');
  t.match(newer, { found: 2, known: 3, message: /start the daemon of this version once to migrate it/ });

  const store = await Store.open({ dir }, [things], [putting(1), putting(2)]);
  t.teardown(() => store.close());
  t.notOk(store.collection(things).has('m3'), 'the refused read-only open ran no migration');
});

t.test('index rebuilds of the steps are written in the migration transaction, before the store is used', async (t) => {
  const dir = tempDir(t);
  // Records as an earlier layout left them: no index entries at all.
  const root = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false });
  await root.openDB<Thing, string>({ name: 'things' }).put('a', { id: 'a', group: 7, tags: ['x'] });
  await root.close();

  const rebuild = (version: number): Migration => ({ version, description: 'rebuilds', up: (s) => s.collection(things).rebuildIndexes() });
  await (await Store.open({ dir }, [things], [rebuild(1), rebuild(2)])).close();

  // Read without the Store, whose first index read could still write what waited.
  const raw = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false, readOnly: true });
  t.teardown(() => raw.close());
  t.same([...raw.openDB({ name: indexDbName('things', 'group'), encoding: 'ordered-binary' }).getKeys()], [[7, 'a']]);
  t.same([...raw.openDB({ name: indexDbName('things', 'tags'), encoding: 'ordered-binary' }).getKeys()], [['x', 'a']]);
});
