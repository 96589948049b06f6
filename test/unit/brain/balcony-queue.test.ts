// How many retrievals a balcony may have queued (src/brain/worker/policy/balcony-queue.ts,
// queueLimit): one waiting at each buffer beside it and two on their way, never fewer than
// before; the demo and the end-to-end site keep their four.
import t from 'tap';
import { buildSite } from '../../../src/domain/site/load.js';
import { generateSite, type GenerateOptions } from '../../../src/domain/site/generate.js';
import { DEMO_OPTIONS } from '../../../src/domain/site/demo.js';
import { QUEUE_PER_BALCONY, QueueSeats, queueLimit } from '../../../src/brain/worker/policy/balcony-queue.js';
import { e2eSite } from '../../fixtures/e2e-site.js';
import { newJob, type JobRecord } from '../../../src/domain/requests/records.js';
import type { LevelSnapshot } from '../../../src/brain/worker/level/snapshot.js';
import type { MotionBot } from '../../../src/brain/worker/motion/motion.js';

const BASE: GenerateOptions = {
  levels: 1, spacesPerLevel: 1000, balconiesPerLevel: 3, chargersPerLevel: 2, botsPerLevel: 10,
  carrierFill: 0.7, boxesPerCarrier: 3, skus: 50, seed: 5,
};

t.test('a balcony queues one retrieval per buffer beside it and two more, at least four', async (t) => {
  const table: { name: string; levels: ReturnType<typeof buildSite>['levels']; want: number }[] = [
    { name: 'the demo (B P P B)', levels: buildSite(generateSite(DEMO_OPTIONS)).levels, want: QUEUE_PER_BALCONY },
    { name: 'the end-to-end site (one buffer between two balconies)', levels: buildSite(e2eSite()).levels, want: QUEUE_PER_BALCONY },
    { name: 'two buffers', levels: buildSite(generateSite({ ...BASE, buffersPerBalcony: 2 })).levels, want: 4 },
    { name: 'three buffers', levels: buildSite(generateSite({ ...BASE, buffersPerBalcony: 3 })).levels, want: 5 },
    { name: 'four buffers (B B P P B B)', levels: buildSite(generateSite({ ...BASE, buffersPerBalcony: 4 })).levels, want: 6 },
  ];
  for (const row of table) {
    for (const level of row.levels) {
      for (const b of level.balconies) t.equal(queueLimit(level, b), row.want, `${row.name}: balcony ${b.id}`);
    }
  }
});

// mayQueue on a level of four balconies, four buffers each (a queue of six each): a retrieval
// queued takes a seat at one of its balconies. Before, every queued retrieval counted against
// each balcony it may go to, so a retrieval kept to one balcony (an SKU's `balcony_ids`) never
// started while the retrievals free to go anywhere had six queued on the level: on the 400-bot
// bench site those requests piled up among the open ones and the balconies ran short of work.
t.test('QueueSeats.mayQueue: a seat free at one of the job\'s balconies, moving others that may go elsewhere', async (t) => {
  const level = buildSite(generateSite({ ...BASE, balconiesPerLevel: 4, buffersPerBalcony: 4, botsPerLevel: 40 })).levels[0]!;
  const [b1, b2, b3, b4] = level.balconies.map((b) => b.id) as [number, number, number, number];
  const ALL = [b1, b2, b3, b4];
  let seq = 0;
  const job = (balconies: number[], status: 'ACCEPTED' | 'EXECUTING' = 'EXECUTING'): JobRecord => {
    seq++;
    return newJob({ id: `retrieving-${seq}`, request_id: `r${seq}`, type: 'RETRIEVING', entity_id: 'e', entity_index: 0, seq, now: 0 }, {
      status, level_id: level.id, balcony_ids: balconies, carrier_id: `C${seq}`, bot_id: status === 'EXECUTING' ? seq : null,
      progress: { kind: 'carrier', phase: 'to_carrier', staged_at: null, in_front_of: null },
    });
  };
  const many = (n: number, balconies: number[]) => Array.from({ length: n }, () => job(balconies));
  const snapshot = (jobs: JobRecord[], bots = 40): LevelSnapshot => ({
    level, now: 0, paused: false, chargeBelow: 20, line: { up: true }, jobs, running: new Set(), unplaced: [],
    bots: Array.from({ length: bots }, (_, i) => ({ id: i + 1, x: 1, y: 1, online: true, faulted: false, idle: true, lifted: false, charging: false, battery: 90 }) as unknown as MotionBot),
    order: () => ({ priority: 10, counter: 0 }), job: (id) => jobs.find((j) => j.id === id),
    carrierAt: () => undefined, laneCarriers: {}, carrier: () => undefined, unreachable: () => new Set(), missing: () => false,
  });
  const rows: { name: string; queued: JobRecord[]; balconies: number[]; bots?: number; want: boolean }[] = [
    { name: 'nothing queued', queued: [], balconies: [b1], want: true },
    { name: 'six queued that may go anywhere: one balcony\'s own still starts', queued: many(6, ALL), balconies: [b2], want: true },
    { name: 'eighteen queued that may go anywhere: the fourth balcony\'s six seats hold the last', queued: many(18, ALL), balconies: [b4], want: true },
    { name: 'twenty-four queued that may go anywhere: every seat is taken', queued: many(24, ALL), balconies: [b1], want: false },
    { name: 'six queued for balcony 2 alone: balcony 2 is full', queued: many(6, [b2]), balconies: [b2], want: false },
    { name: 'six queued for balcony 2 alone: balcony 1 is not', queued: many(6, [b2]), balconies: [b1], want: true },
    {
      name: 'balcony 1 holds six that may also go to 2, balcony 2 holds five of its own: one of 1\'s moves to 2\'s last seat',
      queued: [...many(6, [b1, b2]), ...many(5, [b2])], balconies: [b1], want: true,
    },
    {
      name: 'balconies 1 and 2 full of their own: a job of both waits, though 3 and 4 are empty',
      queued: [...many(6, [b1]), ...many(6, [b2])], balconies: [b1, b2], want: false,
    },
    { name: 'a job of the level: any seat', queued: [...many(6, [b1]), ...many(6, [b2]), ...many(6, [b3])], balconies: ALL, want: true },
    { name: 'no bot to spare for the carriers going home', queued: many(5, ALL), balconies: [b1], bots: 9, want: false },
  ];
  for (const row of rows) {
    const candidate = job(row.balconies, 'ACCEPTED');
    t.equal(new QueueSeats(snapshot([...row.queued, candidate], row.bots)).mayQueue(candidate), row.want, row.name);
  }
  // One pass starts several: each takes its seat before the next is asked.
  const first = job([b2], 'ACCEPTED');
  const second = job([b2], 'ACCEPTED');
  const anywhere = job(ALL, 'ACCEPTED');
  const pass = new QueueSeats(snapshot([...many(5, [b2]), first, second, anywhere]));
  t.ok(pass.mayQueue(first), 'a pass: the first of two for balcony 2\'s last seat starts');
  pass.take(first);
  t.notOk(pass.mayQueue(second), 'a pass: the second waits');
  t.ok(pass.mayQueue(anywhere), 'a pass: one that may go anywhere still starts');
});
