// Messages between the daemon's threads and processes leave in batches (src/outbox.ts): what
// one task queues arrives as one message, in order, over a real MessagePort. A message per
// bot event made each end wake once per event, thousands of times a second on a large site.
import t from 'tap';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Outbox } from '../../src/outbox.js';

/** The batches a port receives until `count` messages have come. */
function received(port: MessagePort, count: number): Promise<number[][]> {
  const batches: number[][] = [];
  let seen = 0;
  return new Promise((resolve) => {
    port.on('message', (batch: number[]) => {
      batches.push(batch);
      seen += batch.length;
      if (seen >= count) resolve(batches);
    });
  });
}

t.test('what one task posts arrives as one message, in order', async (t) => {
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => port1.close());
  const outbox = new Outbox<number>((batch) => port1.postMessage(batch));
  const arrived = received(port2, 500);
  for (let i = 0; i < 500; i++) outbox.post(i);
  const batches = await arrived;
  t.equal(batches.length, 1, 'one message for the task');
  t.same(batches[0], Array.from({ length: 500 }, (_, i) => i));
});

t.test('each task sends its own batch', async (t) => {
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => port1.close());
  const outbox = new Outbox<number>((batch) => port1.postMessage(batch));
  const arrived = received(port2, 4);
  outbox.post(1);
  outbox.post(2);
  await new Promise((resolve) => setTimeout(resolve, 5));
  outbox.post(3);
  outbox.post(4);
  t.same(await arrived, [[1, 2], [3, 4]]);
});

t.test('postNow sends at once, after what was queued before it', (t) => {
  const sent: string[][] = [];
  const outbox = new Outbox<string>((batch) => sent.push(batch));
  outbox.post('a');
  outbox.postNow('last words');
  t.same(sent, [['a', 'last words']], 'sent within the task');
  outbox.flush();
  t.same(sent.length, 1, 'nothing is sent twice');
  t.end();
});

t.test("a 'turn' outbox gathers what several tasks of one turn post", async (t) => {
  const sent: number[][] = [];
  const outbox = new Outbox<number>((batch) => sent.push(batch), 'turn');
  outbox.post(1);
  await Promise.resolve();
  outbox.post(2);
  t.same(sent, [], 'nothing yet within the turn');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(sent, [[1, 2]]);
});
