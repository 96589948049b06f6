// The commit bridge (src/store/commit-bridge.ts): two threads on one LMDB environment each hear
// every durable commit, their own as `local` and the other's as `remote`, with the keys it
// changed, readable at once; a rolled-back write is heard by nobody.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { Store, type CommitNotice } from '../../../src/store/store.js';
import { bridgeCommits } from '../../../src/store/commit-bridge.js';
import { things } from '../../fixtures/things.js';

type Heard = { type: 'heard'; origin: string; notice: CommitNotice; seen: unknown[] };

t.test('each thread hears the commits of the other once they are durable', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-commits-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [things]);
  const heardHere: { origin: string; notice: CommitNotice; seen: unknown[] }[] = [];
  store.onCommit((notice, origin) => heardHere.push({ origin, notice, seen: (notice['things'] ?? []).map((k) => store.collection(things).get(k) ?? null) }));
  const channel = new MessageChannel();
  const stop = bridgeCommits(store, channel.port1);
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('../../fixtures/commit-peer.ts', import.meta.url).href)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { dir, commits: channel.port2 }, transferList: [channel.port2] });
  const messages: any[] = [];
  let wake: (() => void) | undefined;
  worker.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  const next = async (type: string): Promise<any> => {
    for (;;) {
      const i = messages.findIndex((m) => m.type === type);
      if (i >= 0) return messages.splice(i, 1)[0];
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  await next('ready');

  await store.write(() => store.collection(things).put({ id: 'from-main', group: 2, tags: [] }));
  t.same(heardHere.at(-1), { origin: 'local', notice: { things: ['from-main'] }, seen: [{ id: 'from-main', group: 2, tags: [] }] }, 'main hears its own commit');
  const remote = (await next('heard')) as Heard;
  t.same(remote, { type: 'heard', origin: 'remote', notice: { things: ['from-main'] }, seen: [{ id: 'from-main', group: 2, tags: [] }] }, 'the worker hears it and reads it');

  worker.postMessage({ type: 'put', id: 'from-worker' });
  t.same(((await next('heard')) as Heard).origin, 'local', 'the worker hears its own');
  await next('done');
  const fromWorker = await (async () => {
    for (;;) {
      const h = heardHere.find((x) => x.origin === 'remote');
      if (h) return h;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  t.same(fromWorker, { origin: 'remote', notice: { things: ['from-worker'] }, seen: [{ id: 'from-worker', group: 1, tags: [] }] }, 'main hears the worker commit and reads it');

  const before = heardHere.length;
  worker.postMessage({ type: 'fail' });
  await next('done');
  await store.write(() => store.collection(things).remove('from-main'));
  const removal = (await next('heard')) as Heard;
  t.same(removal.notice, { things: ['from-main'] }, 'a removal is a change too; the rolled-back write was not heard');
  t.same(removal.seen, [null]);
  t.equal(heardHere.length, before + 1, 'nothing heard here of the rolled-back write either');
  t.notOk(messages.some((m) => m.type === 'heard'), 'no other notice reached the worker');

  // The worker's read snapshot is fresh from a read when the notice comes: the notice must still show the commit.
  worker.postMessage({ type: 'read_and_block', id: 'from-worker', ms: 400 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  await store.write(() => store.collection(things).put({ id: 'from-worker', group: 7, tags: [] }));
  const fresh = (await next('heard')) as Heard;
  t.same(fresh.seen, [{ id: 'from-worker', group: 7, tags: [] }], 'a notice is read from the newest snapshot, not the one the thread held');

  worker.postMessage({ type: 'close' });
  await new Promise((resolve) => worker.once('exit', resolve));
  stop();
  await store.close();
});
