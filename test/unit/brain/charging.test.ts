// Which bots the brain sends to charge, and which may leave a charger (src/brain/worker/policy/charging.ts).
import t from 'tap';
import { botsToCharge, chargedForWork, mayLeaveCharger, TOP_UP_BELOW } from '../../../src/brain/worker/policy/charging.js';
import type { MotionBot } from '../../../src/brain/worker/motion/motion.js';
import type { JobRecord, RequestRecord } from '../../../src/domain/requests/records.js';

const chargers = [{ x: 0, y: 1 }, { x: 0, y: 3 }];
const bot = (id: number, battery: number, more: Partial<MotionBot> = {}): MotionBot => ({
  id, level_id: 1, online: true, idle: true, x: id, y: 1, lifted: false, charging: false, battery, faulted: false, stuck: false, ...more,
});
const job = (bot_id: number, type = 'CHARGING') => ({ bot_id, type }) as JobRecord;
const request = (bot_id: number) => ({ bot_id }) as RequestRecord;
const chosen = (...args: Parameters<typeof botsToCharge>) => botsToCharge(...args).map((c) => [c.bot.id, c.why]);

t.test('every idle bot under the threshold goes, whatever the chargers', async (t) => {
  t.same(chosen(chargers, [bot(1, 10), bot(2, 15), bot(3, 19)], [], [], 20), [[1, 'low'], [2, 'low'], [3, 'low']]);
});

t.test('free chargers take the idle bots lowest under the top-up level', async (t) => {
  const bots = [bot(1, 70), bot(2, 50), bot(3, 60), bot(4, TOP_UP_BELOW), bot(5, 95)];
  t.same(chosen(chargers, bots, [], [], 20), [[2, 'top_up'], [3, 'top_up']], 'two chargers: the two lowest');
  t.same(chosen(chargers, [...bots, bot(6, 5)], [], [], 20), [[6, 'low'], [2, 'top_up']], 'a low bot takes a charger first');
  t.same(chosen(chargers, [...bots, bot(7, 90, { charging: true, x: 0, y: 3 })], [], [], 20), [[2, 'top_up']], 'a bot charging on one leaves one');
  t.same(chosen(chargers, bots, [job(9)], [], 20), [[2, 'top_up']], 'a charging job on its way counts');
  t.same(chosen([], bots, [], [], 20), [], 'no charger on the level');
});

t.test('only idle bots with nothing of their own go', async (t) => {
  const busy = [
    bot(1, 10, { online: false }), bot(2, 10, { idle: false }), bot(3, 10, { faulted: true }), bot(4, 10, { lifted: true }),
    bot(5, 10, { charging: true }), bot(6, 10), bot(7, 10),
  ];
  t.same(chosen(chargers, busy, [job(6, 'RETRIEVING')], [request(7)], 20), []);
});

t.test('a bot whose charging request was refused is held: not asked again, its charger goes to the next', async (t) => {
  const bots = [bot(1, 10), bot(2, 50), bot(3, 60)];
  t.same(chosen(chargers, bots, [], [], 20, new Set([1])), [[2, 'top_up'], [3, 'top_up']], 'a held low bot is left out');
  t.same(chosen(chargers, bots, [], [], 20, new Set([2])), [[1, 'low'], [3, 'top_up']], 'a held top-up bot is left out');
  t.same(chosen(chargers, bots, [], [], 20, new Set()), [[1, 'low'], [2, 'top_up']], 'none held');
});

t.test('a charging bot gives its charger up to a low bot 20 points above the threshold', async (t) => {
  t.notOk(mayLeaveCharger(bot(1, 39, { charging: true }), 20));
  t.ok(mayLeaveCharger(bot(1, 40, { charging: true }), 20));
  t.notOk(mayLeaveCharger(bot(1, 49, { charging: true }), 30), 'follows the setting');
});

t.test('a charging bot is taken for work only once charged up to the top-up level', async (t) => {
  // [battery, threshold, charged enough for work]
  const rows: [number, number, boolean][] = [
    [40, 20, false], // enough to give the charger up, not enough for the trip to have been worth it
    [79, 20, false],
    [80, 20, true],
    [95, 20, true],
    [89, 70, false], // a threshold above the top-up level keeps its margin
    [90, 70, true],
  ];
  for (const [battery, threshold, enough] of rows) {
    t.equal(chargedForWork(bot(1, battery, { charging: true }), threshold), enough, `${battery} % with the threshold at ${threshold}: ${enough ? 'taken' : 'kept charging'}`);
  }
});
