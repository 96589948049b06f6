// A brain thread started ahead of need (a pair's standby keeps one so that a takeover does not
// wait for the brain's modules to load): the app's brain starts on that very thread, and a
// spare that ended before it was taken is passed over for a new thread.
import t from 'tap';
import { spareBrainThread } from '../../src/brain/host/host.js';
import { startTestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

t.test('the brain starts on the spare thread it is handed', async (t) => {
  const spare = spareBrainThread();
  const spareId = spare.threadId;
  const a = await startTestApp({}, { brainThread: spare });
  t.teardown(() => a.close());
  t.equal(a.app.brain.threadId, spareId, 'the brain runs on the spare thread');
  t.equal(a.app.brain.storageStatus(), 'RUNNING');
  await until('the brain\'s own log line', async () => a.lines.some((l) => l.thread === 'brain' && l.msg === 'brain started'), 10_000);
  // The thread is the app's now: a restart replaces it as any other.
  await a.app.brain.restart();
  t.not(a.app.brain.threadId, spareId, 'a restart starts a thread of its own');
  t.equal(a.app.brain.storageStatus(), 'RUNNING');
});

t.test('a spare that ended before the start is passed over', async (t) => {
  const spare = spareBrainThread();
  const spareId = spare.threadId;
  await spare.terminate();
  const a = await startTestApp({}, { brainThread: spare });
  t.teardown(() => a.close());
  t.not(a.app.brain.threadId, spareId, 'a new thread');
  t.not(a.app.brain.threadId, -1);
  t.equal(a.app.brain.storageStatus(), 'RUNNING');
});
