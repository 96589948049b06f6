// The LMDB store: indexes kept with their records, atomic refusals, migrations, durability.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { Store, type Migration } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { UniqueIndexError } from '../../../src/store/collection.js';
import { BATCH_BUDGET_MS, commitsOffLoop, OFF_LOOP_MS, ON_LOOP, paceAfterLoopCommit, SLOW_DISK_MS, type CommitPace } from '../../../src/store/commit-pace.js';
import { things, type Thing } from '../../fixtures/things.js';
import { holdLock } from '../../helpers/lmdb-lock.js';
import { jobDetails, jobs, requests, type JobRecord } from '../../../src/domain/requests/records.js';
import { boxes, carriers, emptyBoxesOf, type BoxRecord, type CarrierRecord } from '../../../src/domain/inventory/records.js';
import { collectionSource, executeList, parseListQuery, type FieldTable } from '../../../src/domain/list/index.js';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('records and their indexes change together', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => {
    c.put({ id: 'a', group: 1, tags: ['x', 'y', 'x'] });
    c.put({ id: 'b', group: 1, tags: ['y'] });
    c.put({ id: 'c', group: 2, tags: [] });
  });
  t.equal(c.count(), 3);
  t.same([...c.findBy('group', 1)].map((r) => r.id).sort(), ['a', 'b']);
  t.same([...c.findBy('tags', 'y')].map((r) => r.id).sort(), ['a', 'b']);
  t.same([...c.keysBy('tags', 'x')], ['a'], 'a repeated index value is one entry');

  await store.write(() => c.put({ id: 'a', group: 2, tags: ['z'] }));
  t.same([...c.findBy('group', 1)].map((r) => r.id), ['b'], 'old index entry gone');
  t.same([...c.findBy('group', 2)].map((r) => r.id).sort(), ['a', 'c']);
  t.same([...c.findBy('tags', 'x')], []);

  const removed = await store.write(() => c.remove('b'));
  t.equal(removed?.id, 'b');
  t.same([...c.findBy('tags', 'y')], []);
  t.equal(await store.write(() => c.remove('nope')), undefined);
  t.same([...c.scan()].map((r) => r.id), ['a', 'c']);
  t.equal(c.count(), 2, 'the count after a removal');
  // The count comes from LMDB's statistics of the transaction it is read in: a write sees its own.
  t.same(await store.write(() => {
    c.put({ id: 'd', group: 3, tags: [] });
    return c.count();
  }), 3, 'inside a write, its own puts counted');
  await t.rejects(store.write(() => {
    c.remove('a');
    throw new Error('refused');
  }));
  t.equal(c.count(), 3, 'a refused removal is not counted');
  t.equal(c.findOne('group', 9), undefined);
  t.ok(c.has('a'));
  t.ok(c.hasIndex('group'));
  t.throws(() => c.keysBy('nope', 1), /no index nope/);
});

t.test('a refused write changes nothing, even its earlier steps', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => c.put({ id: 'a', group: 1, tags: [], code: 'K1' }));
  await t.rejects(
    store.write(() => {
      c.put({ id: 'b', group: 1, tags: ['new'] });
      store.nextId('things');
      c.put({ id: 'c', group: 1, tags: [], code: 'K1' });
    }),
    UniqueIndexError,
  );
  t.notOk(c.has('b'), 'first put rolled back');
  t.same([...c.findBy('tags', 'new')], [], 'its index entry rolled back');
  t.equal(await store.write(() => store.nextId('things')), 1, 'sequence rolled back');
  await store.write(() => c.put({ id: 'a', group: 3, tags: [], code: 'K1' }));
  t.equal(c.get('a')?.group, 3, 'a record keeps its own unique value');
});

t.test('writes asked for in one turn commit together; one that throws is refused alone', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things]);
  const c = store.collection(things);
  const notices: string[][] = [];
  store.onCommit((notice) => notices.push([...(notice['things'] ?? [])].map(String)));
  const after: string[] = [];

  const together = await Promise.all(['a', 'b', 'c'].map((id) => store.write(() => {
    c.put({ id, group: 1, tags: [] });
    store.afterCommit(() => after.push(id));
    return store.nextId('things');
  })));
  t.same(together, [1, 2, 3], 'each write has its own result, in the order asked');
  t.same(notices, [['a', 'b', 'c']], 'one commit: one notice with every key');
  t.same(after, ['a', 'b', 'c'], 'each write\'s callbacks, in order, once durable');

  notices.length = 0;
  const outcomes = await Promise.allSettled([
    store.write(() => c.put({ id: 'd', group: 2, tags: [] })),
    store.write(() => {
      c.put({ id: 'e', group: 2, tags: ['half-done'] });
      throw new Error('refused');
    }),
    store.write(() => c.put({ id: 'f', group: 2, tags: [] })),
  ]);
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.match((outcomes[1] as PromiseRejectedResult).reason, /refused/);
  t.ok(c.has('d') && c.has('f'), 'the others are kept');
  t.notOk(c.has('e'), 'nothing of the one that threw');
  t.same([...c.findBy('tags', 'half-done')], []);
  t.same(notices, [['d', 'f']], 'the others in one commit, as asked');

  // A write inside a write is part of it; a write asked for just before close() is kept.
  const nested = await store.write(() => {
    c.put({ id: 'g', group: 3, tags: [] });
    return store.write(() => {
      c.put({ id: 'h', group: 3, tags: [] });
      return 'inner result';
    });
  });
  t.equal(nested, 'inner result');
  t.ok(c.has('g') && c.has('h'));
  const last = store.write(() => c.put({ id: 'last', group: 4, tags: [] }));
  await store.close();
  await last;
  const again = await Store.open({ dir }, [things]);
  t.teardown(() => again.close());
  t.ok(again.collection(things).has('last'), 'close() waits for queued writes');
});

t.test('a batch whose writes run past the budget commits them and leaves the rest to the next turn, in order', async (t) => {
  // Each write holds the thread two sevenths of the budget, so a batch stops after at most four
  // (8/7 of it). Unbounded, the twelve would run in one batch, one turn of three budgets and
  // more: at a cold start of 200 connections such batches of planned requests (35-70 ms) held
  // back the TLS handshakes.
  const writeMs = (BATCH_BUDGET_MS * 2) / 7;
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things]);
  const c = store.collection(things);
  const slow = (id: string) => () => {
    const until = performance.now() + writeMs;
    while (performance.now() < until);
    if (id === 'w5') {
      c.put({ id, group: 9, tags: [] });
      throw new Error('refused');
    }
    c.put({ id, group: 1, tags: [] });
  };
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const commits: { keys: string[]; turn: number }[] = [];
  store.onCommit((notice) => commits.push({ keys: (notice['things'] ?? []).map(String), turn: turns }));
  const sizes: number[] = [];
  store.onCommitHeld((timing) => sizes.push(timing.writes));

  const ids = Array.from({ length: 12 }, (_, i) => `w${i}`);
  const heardWhenAcked: Record<string, boolean> = {};
  const outcomes = Promise.allSettled(ids.map((id) => store.write(slow(id)).then(() => {
    heardWhenAcked[id] = commits.some((x) => x.keys.includes(id));
  })));
  // Asked in the turn the first batch runs, after it: it must commit after the writes that batch left.
  setImmediate(() => void store.write(() => c.put({ id: 'late', group: 1, tags: [] })));
  const settled = await outcomes;
  await store.write(() => undefined);
  counting = false;

  t.same(settled.map((o) => o.status), ids.map((id) => (id === 'w5' ? 'rejected' : 'fulfilled')), 'only the write that threw is refused');
  t.ok(sizes.length >= 3, `the twelve writes went in ${sizes.length} batches`);
  t.ok(sizes.slice(0, -1).every((n) => n >= 1 && n <= 4), `no batch ran more than four of the writes: ${sizes.join(', ')}`);
  t.same(commits.flatMap((x) => x.keys), [...ids.filter((id) => id !== 'w5'), 'late'], 'committed in the order asked, the late write after every write left before it');
  t.ok(commits.every((x, i) => i === 0 || x.turn > commits[i - 1]!.turn), 'the event loop turned between the batches');
  t.same(Object.values(heardWhenAcked), ids.filter((id) => id !== 'w5').map(() => true), 'each write was acknowledged once its own commit was durable');
  t.notOk(c.has('w5'), 'nothing kept of the write that threw');

  // close() waits for every batch, the ones left past a budget too.
  const last = ids.map((id) => store.write(slow(`${id}-again`)));
  await store.close();
  await Promise.all(last);
  const again = await Store.open({ dir }, [things]);
  t.teardown(() => again.close());
  t.same(ids.filter((id) => !again.collection(things).has(`${id}-again`)), [], 'every write asked before close() is kept');
});

t.test('a write that throws is undone in the transaction: records, index entries, sequences, nested writes', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => {
    c.put({ id: 'kept', group: 1, tags: ['a'], code: 'K' });
    c.put({ id: 'gone', group: 1, tags: ['b'] });
    return store.nextId('things');
  });
  const notices: string[][] = [];
  store.onCommit((notice) => notices.push([...(notice['things'] ?? [])].map(String)));
  const outcomes = await Promise.allSettled([
    store.write(() => {
      // Every kind of change, some twice, then a throw: all of it must go.
      c.put({ id: 'kept', group: 2, tags: ['c'], code: 'K2' });
      c.put({ id: 'kept', group: 3, tags: ['c', 'd'], code: 'K3' });
      c.remove('gone');
      c.put({ id: 'new', group: 9, tags: ['a'], code: 'K' });
      store.nextId('things');
      store.afterCommit(() => notices.push(['after of the refused write']));
      throw new Error('refused');
    }),
    store.write(() => {
      c.put({ id: 'beside', group: 1, tags: [] });
      return store.nextId('things');
    }),
  ]);
  t.match(outcomes[0], { status: 'rejected', reason: { message: 'refused' } });
  t.match(outcomes[1], { status: 'fulfilled', value: 2 }, 'the sequence the refused write took is given again');
  t.same(c.get('kept'), { id: 'kept', group: 1, tags: ['a'], code: 'K' });
  t.same(c.get('gone'), { id: 'gone', group: 1, tags: ['b'] });
  t.notOk(c.has('new'));
  t.same([...c.keysBy('group', 1)].sort(), ['beside', 'gone', 'kept']);
  t.same(c.keysBy('group', 2).concat(c.keysBy('group', 3), c.keysBy('group', 9), c.keysBy('tags', 'c'), c.keysBy('tags', 'd')), []);
  t.same(c.keysBy('tags', 'a'), ['kept']);
  t.same(c.keysBy('code', 'K'), ['kept'], 'the unique value is its first owner\'s again');
  t.same(c.keysBy('code', 'K3'), []);
  t.same(notices, [['beside']], 'only the write that stood is heard, and no callback of the refused one ran');

  // A refused unique value writes nothing, not even the index entries before it.
  await t.rejects(store.write(() => c.put({ id: 'other', group: 5, tags: ['z'], code: 'K' })), UniqueIndexError);
  t.same([c.has('other'), c.keysBy('group', 5), c.keysBy('tags', 'z')], [false, [], []]);

  // A nested write that throws is undone alone; one that stood settles with its outer write.
  let innerFailure: Promise<unknown> | undefined;
  let innerSuccess: Promise<unknown> | undefined;
  const outer = await store.write(() => {
    c.put({ id: 'outer', group: 6, tags: [] });
    innerFailure = store.write(() => {
      c.put({ id: 'inner-refused', group: 6, tags: [] });
      c.remove('kept');
      throw new Error('inner refused');
    });
    innerFailure.catch(() => undefined);
    innerSuccess = store.write(() => {
      c.put({ id: 'inner-kept', group: 6, tags: [] });
      return 'inner';
    });
    return 'outer';
  });
  t.equal(outer, 'outer');
  await t.rejects(innerFailure!, /inner refused/);
  t.equal(await innerSuccess, 'inner');
  t.same(c.keysBy('group', 6).sort(), ['inner-kept', 'outer']);
  t.ok(c.has('kept'), 'the refused inner write\'s removal is undone');

  // An outer write that throws takes its nested writes with it, and their promises say so.
  let nested: Promise<unknown> | undefined;
  await t.rejects(store.write(() => {
    nested = store.write(() => c.put({ id: 'nested-of-refused', group: 7, tags: [] }));
    nested.catch(() => undefined);
    throw new Error('outer refused');
  }), /outer refused/);
  await t.rejects(nested!, /outer refused/);
  t.notOk(c.has('nested-of-refused'));
});

t.test('after a commit that waited for the disk, the next ones wait on lmdb-js\'s thread and the event loop runs on', async (t) => {
  // Another process holds LMDB's write lock for half a second, twice. The first commit waits
  // for it on the event loop (no timer runs meanwhile); that slow commit sends the next ones to
  // the write thread, so the second wait leaves the loop free (on the loop, each would freeze it).
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things]);
  t.teardown(() => store.close());
  const flag = path.join(dir, 'holding');
  const ticksWhileHeld = async (id: string): Promise<number> => {
    const holder = await holdLock(dir, flag, 500);
    let ticks = 0;
    const tick = setInterval(() => existsSync(flag) && ticks++, 5);
    await store.write(() => store.collection(things).put({ id, group: 1, tags: [] }));
    clearInterval(tick);
    await new Promise((resolve) => holder.once('exit', resolve));
    t.notOk(existsSync(flag), `${id}: committed after the other process let go`);
    t.ok(store.collection(things).has(id));
    return ticks;
  };
  t.equal(await ticksWhileHeld('first'), 0, 'the first commit waited on the event loop');
  const second = await ticksWhileHeld('second');
  t.ok(second >= 2, `timers ran ${second} times while the second commit waited`);
});

t.test('commit pace: on the loop until a commit there waits for the disk, then on the write thread for a while', async (t) => {
  const cases: { name: string; pace: CommitPace; now: number; inFlight: number; offLoop: boolean; diskMs?: number; next?: CommitPace }[] = [
    { name: 'a fresh store commits on the loop', pace: ON_LOOP, now: 0, inFlight: 0, offLoop: false, diskMs: 2, next: ON_LOOP },
    { name: 'a slow commit on the loop sends the next ones off it', pace: ON_LOOP, now: 1_000, inFlight: 0, offLoop: false, diskMs: SLOW_DISK_MS, next: { offLoopUntil: 1_000 + OFF_LOOP_MS } },
    { name: 'just under the mark stays on the loop', pace: ON_LOOP, now: 1_000, inFlight: 0, offLoop: false, diskMs: SLOW_DISK_MS - 0.1, next: ON_LOOP },
    { name: 'off the loop until the time is up', pace: { offLoopUntil: 5_000 }, now: 4_999, inFlight: 0, offLoop: true },
    { name: 'then on the loop again', pace: { offLoopUntil: 5_000 }, now: 5_000, inFlight: 0, offLoop: false, diskMs: 1, next: { offLoopUntil: 5_000 } },
    { name: 'not while a batch still commits off it: it would be overtaken', pace: { offLoopUntil: 5_000 }, now: 6_000, inFlight: 1, offLoop: true },
  ];
  for (const c of cases) {
    t.equal(commitsOffLoop(c.pace, c.now, c.inFlight), c.offLoop, c.name);
    if (c.diskMs !== undefined) t.same(paceAfterLoopCommit(c.pace, c.diskMs, c.now), c.next, `${c.name}: the pace after`);
  }
});

t.test('writes outside Store.write are refused', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  t.throws(() => store.collection(things).put({ id: 'x', group: 1, tags: [] }), /inside Store.write/);
  t.throws(() => store.collection(things).remove('x'), /inside Store.write/);
  t.throws(() => store.nextId('x'), /inside Store.write/);
});

t.test('migrations run once, in order, and a newer store is refused', async (t) => {
  const dir = tempDir(t);
  const ran: number[] = [];
  const migrations: Migration[] = [
    { version: 2, description: 'two', up: (s) => { ran.push(2); s.collection(things).put({ id: 'm2', group: 0, tags: [] }); } },
    { version: 1, description: 'one', up: () => { ran.push(1); } },
  ];
  let store = await Store.open({ dir }, [things], migrations);
  t.same(ran, [1, 2]);
  t.equal(store.schemaVersion(), 2);
  t.ok(store.collection(things).has('m2'));
  await store.close();

  store = await Store.open({ dir }, [things], migrations);
  t.same(ran, [1, 2], 'not run again');
  await store.close();

  await t.rejects(Store.open({ dir }, [things], migrations.slice(1)), /newer than this build knows/);
});

t.test('migration 2 moves a store of dupSort indexes to [value, key] ranges', async (t) => {
  const dir = tempDir(t);
  // A store as version 1 wrote it: records, and each index as a dupSort database.
  const v1 = open({ path: path.join(dir, 'warehouse.mdb'), maxDbs: 128, compression: false });
  const records = v1.openDB<Thing, string>({ name: 'things' });
  const group = v1.openDB<string, number>({ name: 'things~group', dupSort: true, encoding: 'ordered-binary' });
  const tags = v1.openDB<string, string>({ name: 'things~tags', dupSort: true, encoding: 'ordered-binary' });
  v1.transactionSync(() => {
    v1.openDB({ name: 'meta' }).putSync('schema_version', 1);
    for (const r of [{ id: 'a', group: 1, tags: ['x'] }, { id: 'b', group: 1, tags: ['x', 'y'] }, { id: 'c', group: 22, tags: [] }]) {
      records.putSync(r.id, r);
      group.putSync(r.group, r.id);
      for (const tag of r.tags) tags.putSync(tag, r.id);
    }
  });
  await v1.close();

  const store = await Store.open({ dir }, [things], MIGRATIONS.slice(0, 2));
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), 2);
  const c = store.collection(things);
  t.same(c.keysBy('group', 1), ['a', 'b'], 'index entries rebuilt from the records, in key order');
  t.same(c.keysBy('tags', 'x'), ['a', 'b']);
  t.same(c.keysBy('group', 22), ['c']);
  t.equal(c.countBy('tags', 'y'), 1);
  t.same(c.keysBy('group', 2), [], 'a value that is a prefix of another finds nothing of it');
  const left = new Set<string>();
  for (const key of open({ path: path.join(dir, 'warehouse.mdb'), readOnly: true }).getKeys()) left.add(String(key));
  t.ok(left.has('things#group') && left.has('things#tags'), 'the root lists the databases');
  t.notOk(left.has('things~group') || left.has('things~tags'), 'the dupSort databases are dropped');
});

t.test('migration 3 indexes the jobs and requests of a version 2 store by status', async (t) => {
  const dir = tempDir(t);
  const withoutStatus = { ...jobs, indexes: jobs.indexes!.filter((i) => i.name !== 'status') };
  const v2 = await Store.open({ dir }, [withoutStatus], MIGRATIONS.slice(0, 2));
  await v2.write(() => {
    v2.collection(withoutStatus).put({ id: 'j1', status: 'EXECUTING', request_id: 'r1' } as JobRecord);
    v2.collection(withoutStatus).put({ id: 'j2', status: 'SUCCEEDED', request_id: 'r1' } as JobRecord);
  });
  await v2.close();
  const store = await Store.open({ dir }, [jobs, requests], MIGRATIONS.slice(0, 3));
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), 3);
  t.same(store.collection(jobs).keysBy('status', 'EXECUTING'), ['j1']);
  t.same(store.collection(jobs).keysBy('status', 'SUCCEEDED'), ['j2']);
});

t.test('migration 4 gives the jobs of a version 3 store typed progress, and the API shows the same details', async (t) => {
  const dir = tempDir(t);
  const v3 = await Store.open({ dir }, [jobs], MIGRATIONS.slice(0, 3));
  const old = (id: string, type: string, status: string, details: Record<string, unknown>) => ({ id, type, status, request_id: 'r1', details }) as unknown as JobRecord;
  const before = [
    old('a', 'RETRIEVING', 'EXECUTING', { waiting_for: 'balcony', reason: 'holds it', phase: 'carrying', staged_at: { x: 4, y: 0 } }),
    old('b', 'PICKING', 'SUCCEEDED', { trigger_status: 'SHORT_PICK_TRIGGER', booked_quantity: 2 }),
    old('c', 'STORING', 'ABORTED', { reason: 'bot 2: fault', phase: 'carrying', replaced_by: 'd' }),
    old('d', 'STORING', 'ACCEPTED', { recovers: 'c' }),
    old('e', 'CHANGE_RFID_WRITING_MODE', 'CREATED', { writing_mode: true }),
    old('f', 'BUFFERING', 'CREATED', { in_front_of: 'C9' }),
  ];
  await v3.write(() => {
    for (const j of before) v3.collection(jobs).put(j);
  });
  await v3.close();
  const store = await Store.open({ dir }, [jobs], MIGRATIONS);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), MIGRATIONS.at(-1)!.version, 'at the latest version');
  const get = (id: string) => store.collection(jobs).get(id)!;
  t.match(get('a'), { wait: { waiting_for: 'balcony', reason: 'holds it' }, progress: { kind: 'carrier', phase: 'carrying', staged_at: { x: 4, y: 0 } }, attempt: 1 });
  t.match(get('b'), { wait: null, progress: { kind: 'person', trigger_status: 'SHORT_PICK_TRIGGER', booked_quantity: 2 } });
  t.match(get('c'), { wait: null, ended_because: 'bot 2: fault', replaced_by: 'd' });
  t.match(get('d'), { recovers: 'c', attempt: 2 });
  t.match(get('e'), { progress: { kind: 'writing_mode', writing_mode: true } });
  t.match(get('f'), { progress: { kind: 'carrier', in_front_of: 'C9' } });
  for (const j of before) t.notOk('details' in get(j.id), `${j.id}: no details bag left`);
  for (const j of before) {
    const kept = (j as unknown as { details: Record<string, unknown> }).details;
    t.same(jobDetails(get(j.id)), { ...kept, ...(j.id === 'd' ? { attempt: 2 } : {}) }, `${j.id}: the API's details are what they were`);
  }
});

t.test('migration 5 indexes the open jobs of a version 4 store by carrier and by the cell they set their carrier down on', async (t) => {
  const dir = tempDir(t);
  const v4 = await Store.open({ dir }, [jobs], MIGRATIONS.slice(0, 4));
  const job = (id: string, status: string, carrier: string, target: { x: number; y: number } | null) =>
    ({ id, type: 'STORING', status, request_id: 'r1', carrier_id: carrier, level_id: 1, target }) as unknown as JobRecord;
  await v4.write(() => {
    v4.collection(jobs).put(job('a', 'EXECUTING', 'C1', { x: 4, y: 3 }));
    v4.collection(jobs).put(job('b', 'ACCEPTED', 'C2', { x: 4, y: 3 }));
    v4.collection(jobs).put(job('c', 'SUCCEEDED', 'C3', null));
  });
  await v4.close();
  const store = await Store.open({ dir }, [jobs], MIGRATIONS);
  t.teardown(() => store.close());
  const c = store.collection(jobs);
  t.same(['C1', 'C2', 'C3'].map((id) => c.keysBy('open_carrier', id)), [['a'], ['b'], []], 'open work by carrier, ended jobs left out');
  t.same(c.keysBy('coming_to', '1:4:3'), ['a'], 'only the running job sets its carrier down on (4, 3)');
});

t.test('migrations 9 and 11 index the empty boxes of a version 8 store by size and level, oldest first', async (t) => {
  const dir = tempDir(t);
  const withoutEmpty = { ...boxes, indexes: boxes.indexes!.filter((i) => i.name !== 'empty') };
  const v8 = await Store.open({ dir }, [withoutEmpty, carriers], MIGRATIONS.slice(0, 8));
  const load = { sku_id: 'S1', item_count: 1, item_count_max: 4, updated_at: 0 };
  await v8.write(() => {
    for (const [id, level, x] of [['C1', 1, 1], ['C2', 1, 2], ['C3', 2, 1]] as const) v8.collection(carriers).put({ id, level_id: level, x, y: 0, updated_at: 0 } as CarrierRecord);
    // Halves (16 of 32 sections), a quarter, and a half that holds items; boxes of that time had no level.
    v8.collection(withoutEmpty).put({ id: 1, carrier_id: 'C1', code32: 0x0000ffff, load: null, updated_at: 30 } as unknown as BoxRecord);
    v8.collection(withoutEmpty).put({ id: 2, carrier_id: 'C1', code32: 0x00ff0000, load: null, updated_at: 5 } as unknown as BoxRecord);
    v8.collection(withoutEmpty).put({ id: 3, carrier_id: 'C2', code32: 0xffff0000, load: null, updated_at: 10 } as unknown as BoxRecord);
    v8.collection(withoutEmpty).put({ id: 4, carrier_id: 'C3', code32: 0x0000ffff, load, updated_at: 1 } as unknown as BoxRecord);
  });
  await v8.close();
  const store = await Store.open({ dir }, [boxes, carriers], MIGRATIONS);
  t.teardown(() => store.close());
  const c = store.collection(boxes);
  t.same([...c.keysWithin('empty', emptyBoxesOf('1/2', 1))], [3, 1], 'the empty halves, oldest first; not the loaded one');
  t.same([...c.keysWithin('empty', emptyBoxesOf('1/4', 1))], [2]);
  t.same([...c.keysWithin('empty', emptyBoxesOf('1/2', 2))], [], 'the loaded half of level 2 is not empty');
  t.same([...c.keysWithin('empty', emptyBoxesOf('1', 1))], [], 'a size that is a prefix of another finds nothing of it');
});

t.test('migration 11 gives the boxes of a version 10 store their carrier\'s level and indexes the empty ones by it, no entry of the old index left', async (t) => {
  const dir = tempDir(t);
  // The `empty` index as version 10 kept it: size, then age.
  const asV10 = { ...boxes, indexes: boxes.indexes!.map((i) => (i.name === 'empty' ? { name: 'empty', of: (b: BoxRecord) => (b.load === null ? `${b.code32 === 0xffff0000 || b.code32 === 0x0000ffff ? '1/2' : '1/4'} ${String(b.updated_at).padStart(16, '0')}` : undefined) } : i)) };
  const v10 = await Store.open({ dir }, [asV10, carriers], MIGRATIONS.slice(0, 10));
  await v10.write(() => {
    for (const [id, level] of [['C1', 1], ['C2', 2], ['C3', 3]] as const) v10.collection(carriers).put({ id, level_id: level, x: 0, y: 0, updated_at: 0 } as CarrierRecord);
    v10.collection(asV10).put({ id: 1, carrier_id: 'C1', code32: 0x0000ffff, load: null, updated_at: 30 } as unknown as BoxRecord);
    v10.collection(asV10).put({ id: 2, carrier_id: 'C2', code32: 0xffff0000, load: null, updated_at: 10 } as unknown as BoxRecord);
    v10.collection(asV10).put({ id: 3, carrier_id: 'C3', code32: 0x0000ffff, load: null, updated_at: 20 } as unknown as BoxRecord);
    v10.collection(asV10).put({ id: 4, carrier_id: 'GONE', code32: 0x0000ffff, load: null, updated_at: 40 } as unknown as BoxRecord);
  });
  t.same([...v10.collection(asV10).keysWithin('empty', { low: '', high: '\uffff' })], [2, 3, 1, 4], 'version 10 held the four by size and age');
  await v10.close();
  const store = await Store.open({ dir }, [boxes, carriers], MIGRATIONS);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), MIGRATIONS.at(-1)!.version);
  const c = store.collection(boxes);
  t.same([1, 2, 3, 4].map((id) => c.get(id)?.level_id), [1, 2, 3, null], 'each box has its carrier\'s level; one whose carrier is gone has none');
  t.same([1, 2, 3].map((level) => [...c.keysWithin('empty', emptyBoxesOf('1/2', level))]), [[1], [2], [3]]);
  t.same([...c.keysWithin('empty', { low: '', high: '\uffff' })], [1, 2, 3], 'no entry of the old index is left, and the box without a level has none');
  t.equal(c.get(1)?.updated_at, 30, 'a box keeps its age');
});

t.test('migration 10 indexes the open jobs of a version 9 store by bot', async (t) => {
  const dir = tempDir(t);
  const withoutBot = { ...jobs, indexes: jobs.indexes!.filter((i) => i.name !== 'open_bot') };
  const v9 = await Store.open({ dir }, [withoutBot], MIGRATIONS.slice(0, 9));
  await v9.write(() => {
    v9.collection(withoutBot).put({ id: 'a', type: 'CHARGING', status: 'EXECUTING', request_id: 'r1', bot_id: 3, level_id: 1 } as JobRecord);
    v9.collection(withoutBot).put({ id: 'b', type: 'CHARGING', status: 'SUCCEEDED', request_id: 'r1', bot_id: 3, level_id: 1 } as JobRecord);
    v9.collection(withoutBot).put({ id: 'c', type: 'RETRIEVING', status: 'ACCEPTED', request_id: 'r1', bot_id: null, level_id: 1 } as JobRecord);
  });
  await v9.close();
  const store = await Store.open({ dir }, [jobs], MIGRATIONS);
  t.teardown(() => store.close());
  t.equal(store.schemaVersion(), MIGRATIONS.at(-1)!.version);
  t.same(store.collection(jobs).keysBy('open_bot', 3), ['a'], 'the open one, not the ended one nor a job of no bot');
});

t.test('keys within bounds are read a chunk at a time, in order, and the same whatever the chunk', async (t) => {
  const dir = tempDir(t);
  const store = await Store.open({ dir }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  // 100 things in groups 0..9, more than three chunks; read in a write too, where writes come between.
  await store.write(() => {
    for (let i = 0; i < 100; i++) c.put({ id: `t${String(i).padStart(3, '0')}`, group: i % 10, tags: [] });
  });
  const want = [...c.runsBy('group', false, { low: 2, high: 7 })].flat().map((x) => x.id);
  t.equal(want.length, 60);
  t.same([...c.keysWithin('group', { low: 2, high: 7 })], want, 'the same keys in the same order as the records by index');
  const firstFive: unknown[] = [];
  for (const key of c.keysWithin('group', { low: 2, high: 7 })) {
    if (firstFive.push(key) === 5) break;
  }
  t.same(firstFive, want.slice(0, 5), 'a reader that stops early');
  await store.write(() => {
    const seen: unknown[] = [];
    for (const key of c.keysWithin('group', { low: 9 })) {
      seen.push(key);
      c.put({ id: `new-${String(key)}`, group: 0, tags: [] });
    }
    t.same(seen, want.length > 0 ? [...c.runsBy('group', false, { low: 9 })].flat().map((x) => x.id) : [], 'writes between chunks do not disturb the walk');
  });
});

t.test('index values of every kind keep their own entries apart', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => {
    c.put({ id: 'p', group: 1, tags: ['a', 'ab', 'a b', ''] });
    c.put({ id: 'q', group: 10, tags: ['ab'] });
    c.put({ id: 'r', group: -1, tags: ['\u00e9t\u00e9'] });
  });
  t.same(c.keysBy('tags', 'a'), ['p']);
  t.same(c.keysBy('tags', 'ab'), ['p', 'q']);
  t.same(c.keysBy('tags', ''), ['p']);
  t.same(c.keysBy('tags', '\u00e9t\u00e9'), ['r']);
  t.same(c.keysBy('group', 1), ['p']);
  t.same(c.keysBy('group', -1), ['r']);
  t.equal(c.countBy('tags', 'ab'), 2);
  await store.write(() => c.remove('p'));
  t.same(c.keysBy('tags', 'ab'), ['q']);
  t.equal(c.countBy('tags', 'a'), 0);
});

t.test('every acknowledged write survives kill -9', async (t) => {
  const dir = tempDir(t);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../../fixtures/store-writer.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let acked = 0;
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      for (const m of d.toString().matchAll(/acked (\d+)/g)) acked = Number(m[1]);
      if (acked >= 200 && child.exitCode === null) {
        child.kill('SIGKILL');
        resolve();
      }
    });
  });
  await new Promise((r) => child.once('exit', r));
  t.ok(acked >= 200);

  const store = await Store.open({ dir }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  for (let i = 1; i <= acked; i++) {
    const r = c.get(`t${i}`) as Thing | undefined;
    if (!r) t.fail(`acknowledged record t${i} lost`);
    else if (![...c.keysBy('tags', `n${i}`)].includes(`t${i}`)) t.fail(`index entry of t${i} lost`);
  }
  t.ok(c.count() >= acked, `all ${acked} acknowledged records are there`);
  t.equal(await store.write(() => store.nextId('things')), c.count() + 1, 'sequence consistent with the records');
});

t.test('stats describe the environment', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const s = store.stats();
  t.ok(s.pageSize > 0 && s.mapSize > 0);
});

t.test('an index-only unsorted list page reads only the rows it shows; the index counts the rest', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => {
    for (let i = 0; i < 30; i++) c.put({ id: `t${String(i).padStart(2, '0')}`, group: i % 3, tags: [] });
  });
  t.equal(c.countBy('group', 1), 10);
  const table: FieldTable<Thing> = { id: { type: 'string', filters: ['eq'] }, group: { type: 'integer', filters: ['eq', 'in'] } };
  const source = collectionSource(c, { id: null, group: 'group' });
  const options = { maxPageSize: 100, timeZone: 'UTC' };
  const page = executeList(table, source, parseListQuery(table, { group__in: ['1', '2', '1'], size: '4', page: '2' }, options));
  t.equal(page.total, 20, 'repeated values count once');
  t.same(page.items.map((r) => r.id), ['t13', 't16', 't19', 't22']);
  t.equal(executeList(table, source, parseListQuery(table, { id__eq: 't05' }, options)).total, 1);
  t.equal(executeList(table, source, parseListQuery(table, { id__eq: 'nope' }, options)).total, 0);
  const sorted = executeList(table, source, parseListQuery(table, { group__eq: '2', sort_by: '-id', size: '2' }, options));
  t.same([sorted.total, sorted.items.map((r) => r.id)], [10, ['t29', 't26']]);
});
