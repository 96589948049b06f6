// A commit that holds the event loop for long (a slow disk's fsync) is said in the log, at
// most once a minute, with the count of those not said (single fsyncs of 330 to 730 ms were
// the longest waits of the API under load).
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { EVENT_COLLECTIONS, Events } from '../../../src/domain/events/events.js';
import { decideSlowCommit, SLOW_COMMIT_MS, watchStorage, type SlowCommits } from '../../../src/storage-watch.js';
import { memoryLogger } from '../../helpers/server.js';

const quiet: SlowCommits = { lastSaid: undefined, unsaid: 0, worstUnsaid: 0 };

t.test('decideSlowCommit: the first slow commit is said, the next within a minute counted, and said with the next after it', async (t) => {
  const cases: { name: string; state: SlowCommits; ms: number; now: number; say?: object; next: SlowCommits }[] = [
    { name: 'a fast commit changes nothing', state: quiet, ms: SLOW_COMMIT_MS - 1, now: 0, next: quiet },
    { name: 'the first slow one is said', state: quiet, ms: 300, now: 5_000, say: { ms: 300, before: 0, worstBefore: 0 }, next: { lastSaid: 5_000, unsaid: 0, worstUnsaid: 0 } },
    { name: 'within the minute: counted', state: { lastSaid: 5_000, unsaid: 0, worstUnsaid: 0 }, ms: 700, now: 20_000, next: { lastSaid: 5_000, unsaid: 1, worstUnsaid: 700 } },
    { name: 'the worst is kept', state: { lastSaid: 5_000, unsaid: 1, worstUnsaid: 700 }, ms: 400, now: 30_000, next: { lastSaid: 5_000, unsaid: 2, worstUnsaid: 700 } },
    { name: 'a fast one within the minute changes nothing', state: { lastSaid: 5_000, unsaid: 2, worstUnsaid: 700 }, ms: 3, now: 40_000, next: { lastSaid: 5_000, unsaid: 2, worstUnsaid: 700 } },
    { name: 'a minute on: said, with the two before', state: { lastSaid: 5_000, unsaid: 2, worstUnsaid: 700 }, ms: SLOW_COMMIT_MS, now: 65_000, say: { ms: SLOW_COMMIT_MS, before: 2, worstBefore: 700 }, next: { lastSaid: 65_000, unsaid: 0, worstUnsaid: 0 } },
  ];
  for (const c of cases) t.same(decideSlowCommit(c.state, c.ms, c.now), c.say ? { say: c.say, next: c.next } : { next: c.next }, c.name);
});

t.test('a real commit that holds the loop 300 ms is logged once a minute, with the ones it did not say', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-slow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [...EVENT_COLLECTIONS]);
  t.teardown(() => store.close());
  const { logger, lines } = memoryLogger('debug');
  let clock = 1_000_000;
  const stop = watchStorage({ store, dir, lowBytes: 0, events: new Events(store, () => clock), logger, everyMs: 3_600_000, now: () => clock });
  t.teardown(stop);
  // The write's own work runs inside the commit: the loop is held as a slow fsync would hold it.
  const slowWrite = () => store.write(() => {
    const until = performance.now() + 300;
    while (performance.now() < until);
  });
  const said = () => lines.filter((l) => l.code === 'slow_commit');

  await slowWrite();
  t.equal(said().length, 1, 'the first is said');
  t.ok(said()[0].writes_ms >= 300, `its writes took ${said()[0].writes_ms} ms`);
  t.equal(said()[0].on_loop, true, 'the disk kept up: the commit stayed on the event loop');
  t.equal(said()[0].level, 'warn', 'a warning');
  t.match(said()[0].msg, /its writes \d+ ms on the event loop, then LMDB's commit and the disk's fsync under .* \d+ ms on the event loop/);
  clock += 10_000;
  await slowWrite();
  t.equal(said().length, 1, 'ten seconds later: counted, not said');
  clock += 60_000;
  await slowWrite();
  t.equal(said().length, 2, 'a minute later: said');
  t.same([said()[1].slow_before, said()[1].worst_before_ms >= 300], [1, true], 'with the one before it');
  t.match(said()[1].msg, /1 more over 250 ms since the last such line/);
});
