// A replicated pair's store side: stamped batches in the outbox, writes held until the log has
// them, refusals that keep nothing, and a standby that applies the log to the same state.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ReplicaWriteRefused, Store, type ReplicationGate } from '../../../src/store/store.js';
import { things, type Thing } from '../../fixtures/things.js';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-replica-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A log in memory standing for the replicated engine: the store side is what is tested here. */
class MemoryLog implements ReplicationGate {
  readonly entries = new Map<number, Buffer>();
  refuse = false;
  failNext = false;
  private waiting: (() => void)[] = [];
  hold = false;

  constructor(private readonly store: () => Store, readonly termOf = 7) {}

  term(): number {
    if (this.refuse) throw new ReplicaWriteRefused('not the active box');
    return this.termOf;
  }

  async durable(seq: number): Promise<void> {
    if (this.hold) await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.failNext) {
      this.failNext = false;
      throw new ReplicaWriteRefused('the log did not take it');
    }
    this.store().refresh();
    for (const { seq: s, bytes } of this.store().outbox(1, 1000)) if (s <= seq) this.entries.set(s, bytes);
    if (!this.entries.has(seq)) throw new Error(`batch ${seq} is not in the outbox`);
  }

  release(): void {
    this.hold = false;
    for (const go of this.waiting.splice(0)) go();
  }

  ordered(): Buffer[] {
    return [...this.entries.keys()].sort((a, b) => a - b).map((k) => this.entries.get(k)!);
  }
}

t.test('a standby that applies the log holds what the active wrote, indexes and sequences with it', async (t) => {
  const active = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => active.close());
  const standby = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => standby.close());
  const log = new MemoryLog(() => active);
  active.replicateTo(log);
  const c = active.collection(things);
  await active.write(() => {
    c.put({ id: 'a', group: 1, tags: ['x'] });
    c.put({ id: 'b', group: 2, tags: ['y'] });
    active.nextId('boxes');
  });
  await Promise.all([
    active.write(() => c.put({ id: 'a', group: 3, tags: ['z'] })),
    active.write(() => c.remove('b')),
    active.write(() => {
      c.put({ id: 'c', group: 3, tags: [] });
      throw new Error('refused alone');
    }).catch(() => undefined),
  ]);
  t.same(active.logPoint(), { seq: 2, term: 7 }, 'one stamp per batch that changed anything');
  t.equal(await standby.applyLog(log.ordered()), 2);
  t.equal(await standby.applyLog(log.ordered()), 0, 'applying again changes nothing');
  const s = standby.collection(things);
  t.same([...s.scan()], [...c.scan()]);
  t.same([...s.findBy('group', 3)].map((r: Thing) => r.id), ['a'], 'indexes kept on the standby');
  t.same([...s.findBy('tags', 'y')], [], 'a removed record leaves its index');
  t.equal(standby.sequence('boxes'), 1, 'sequences follow');
  t.same(standby.logPoint(), active.logPoint());

  await active.sent(2);
  active.refresh();
  t.same(active.outbox(1, 10).map((e) => e.seq), [2], 'what the log has leaves the outbox, but for the last entry: the anchor a store past the log checks');
});

t.test('a box that may not write keeps nothing and is not a disk fault', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const log = new MemoryLog(() => store);
  store.replicateTo(log);
  log.refuse = true;
  await t.rejects(store.write(() => store.collection(things).put({ id: 'a', group: 1, tags: [] })), ReplicaWriteRefused);
  t.equal(store.collection(things).get('a'), undefined, 'nothing kept');
  t.equal(store.storageFault(), undefined, 'not the disk');
  t.same(store.logPoint(), { seq: 0, term: 0 });
});

t.test('a write is answered only once the log has its batch', async (t) => {
  const store = await Store.open({ dir: tempDir(t) }, [things]);
  t.teardown(() => store.close());
  const log = new MemoryLog(() => store);
  store.replicateTo(log);
  log.hold = true;
  let answered = false;
  const write = store.write(() => store.collection(things).put({ id: 'a', group: 1, tags: [] })).then(() => (answered = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(answered, false, 'held while the log has not taken it');
  log.release();
  await write;
  t.ok(answered);
  log.failNext = true;
  await t.rejects(store.write(() => store.collection(things).put({ id: 'b', group: 1, tags: [] })), ReplicaWriteRefused, 'a batch the log refused is not acknowledged');
});

t.test('random batches replay to the same state (property)', async (t) => {
  const op = fc.oneof(
    fc.record({ put: fc.constantFrom('a', 'b', 'c', 'd'), group: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ remove: fc.constantFrom('a', 'b', 'c', 'd') }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(op, { maxLength: 4 }), { maxLength: 12 }), async (batches) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'wh-replica-prop-'));
      const active = await Store.open({ dir: path.join(dir, 'a') }, [things]);
      const standby = await Store.open({ dir: path.join(dir, 'b') }, [things]);
      try {
        const log = new MemoryLog(() => active);
        active.replicateTo(log);
        const c = active.collection(things);
        await Promise.all(batches.map((ops) => active.write(() => {
          for (const o of ops) {
            if ('put' in o) c.put({ id: o.put, group: o.group, tags: [String(o.group)] });
            else c.remove(o.remove);
          }
        })));
        await standby.applyLog(log.ordered());
        const s = standby.collection(things);
        if (JSON.stringify([...s.scan()]) !== JSON.stringify([...c.scan()])) throw new Error('records differ');
        for (const g of [0, 1, 2, 3]) {
          if (JSON.stringify([...s.keysBy('group', g)]) !== JSON.stringify([...c.keysBy('group', g)])) throw new Error(`index group ${g} differs`);
        }
      } finally {
        await active.close();
        await standby.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: 25, seed: Number(process.env.FC_SEED ?? Date.now() % 100000), verbose: 1 },
  );
  t.pass();
});
