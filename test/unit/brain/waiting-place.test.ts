// Where a bot holding a carrier waits for a balcony position (src/brain/worker/policy/places.ts,
// stagePlace), table by table on a generated level of B B P P B B balconies 18 cells apart:
//
//   x   8 9 [10 11] 12 13 ... 26 27 [28 29] 30 31 ... 44 45 [46 47] 48 49 ... 62 63 [64 65] 66 67
//       balcony 1              balcony 2              balcony 3              balcony 4
//
// The nearest free buffer, unless another of the job's balconies within reach has fewer carriers
// waiting or coming, and fewer than two. Before, every bot waited at the
// nearest buffer: a position that freed at a balcony with empty buffers went to a bot waiting
// at another balcony, and its person waited the whole trip (16% of the positions given on the
// 400-bot bench site, 17-35 s each against a pick of 11 s).
import t from 'tap';
import { buildSite, type Cell } from '../../../src/domain/site/load.js';
import { generateSite } from '../../../src/domain/site/generate.js';
import { newJob, type JobRecord } from '../../../src/domain/requests/records.js';
import type { LevelSnapshot } from '../../../src/brain/worker/level/snapshot.js';
import { key, stagePlace } from '../../../src/brain/worker/policy/places.js';

const level = buildSite(generateSite({
  levels: 1, spacesPerLevel: 25000, balconiesPerLevel: 10, chargersPerLevel: 2, botsPerLevel: 10, carrierFill: 0, boxesPerCarrier: 1, skus: 5, seed: 1, buffersPerBalcony: 4,
})).level(1)!;

let seq = 0;
/** A retrieval under way for `balconies`, its bot holding the carrier: waiting at a buffer, or going to a position. */
function retrieval(balconies: number[], at?: { staged?: Cell; port?: Cell; balcony?: number }): JobRecord {
  seq++;
  return newJob({ id: `retrieving-${seq}`, request_id: `r${seq}`, type: 'RETRIEVING', entity_id: 'e', entity_index: 0, seq, now: 0 }, {
    status: 'EXECUTING', level_id: 1, balcony_ids: balconies, carrier_id: `C${seq}`, bot_id: seq,
    target: at?.port ?? null, balcony_id: at?.balcony ?? null,
    progress: { kind: 'carrier', phase: 'carrying', staged_at: at?.staged ?? null, in_front_of: null },
  });
}

function snapshot(jobs: JobRecord[]): LevelSnapshot {
  return {
    level, now: 0, paused: false, chargeBelow: 20, bots: [], unplaced: [], line: { up: true }, jobs, running: new Set(),
    order: () => ({ priority: 10, counter: 0 }),
    job: (id) => jobs.find((j) => j.id === id),
    carrierAt: () => undefined, laneCarriers: {},
    carrier: () => undefined,
    unreachable: () => new Set(),
    missing: () => false,
  };
}

const ALL = [1, 2, 3, 4];
const cell = (x: number): Cell => ({ x, y: 0 });

t.test('the generated level is laid out as the table assumes', async (t) => {
  t.same(level.balconies.slice(0, 4).map((b) => [b.id, b.ports.map((p) => p.x)]), [[1, [10, 11]], [2, [28, 29]], [3, [46, 47]], [4, [64, 65]]]);
  t.same(level.buffers.slice(0, 8).map((c) => c.x), [8, 9, 12, 13, 26, 27, 30, 31]);
});

t.test('stagePlace: the nearest buffer, unless a balcony within reach is shorter of carriers', async (t) => {
  const rows: { name: string; others: JobRecord[]; balconies?: number[]; from: Cell; staged?: Cell; claimed?: Cell[]; want: number }[] = [
    { name: 'nothing waits anywhere: the nearest', others: [], from: { x: 14, y: 1 }, want: 13 },
    { name: 'one waits beside balcony 1: the nearest buffer of balcony 2, which has none', others: [retrieval(ALL, { staged: cell(8) })], from: { x: 14, y: 1 }, want: 26 },
    { name: 'one is on its way to a position of balcony 1: the same', others: [retrieval(ALL, { port: cell(10), balcony: 1 })], from: { x: 14, y: 1 }, want: 26 },
    {
      name: 'balconies 1 and 2 have one each: balcony 3, 32 cells farther, is within reach',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(30) })], from: { x: 14, y: 1 }, want: 44,
    },
    {
      name: 'balconies 1 to 3 have one each: balcony 4 is beyond reach, so the nearest',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(30) }), retrieval(ALL, { staged: cell(48) })], from: { x: 14, y: 1 }, want: 13,
    },
    {
      name: 'balcony 1 has two, balconies 2 and 3 one each: the nearer of those, balcony 2',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(9) }), retrieval(ALL, { staged: cell(30) }), retrieval(ALL, { staged: cell(48) })], from: { x: 14, y: 1 }, want: 26,
    },
    {
      name: 'balcony 1 has two, balcony 2 one, balcony 3 none: balcony 3, the shortest of carriers',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(9) }), retrieval(ALL, { staged: cell(30) })], from: { x: 14, y: 1 }, want: 44,
    },
    { name: 'balconies 2 and 3 are not the job\'s, 4 is beyond reach: the nearest', others: [retrieval(ALL, { staged: cell(8) })], balconies: [1, 4], from: { x: 14, y: 1 }, want: 13 },
    {
      name: 'a wait at balcony 2 not yet written counts as one there: the nearest',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(48) })], claimed: [cell(27)], from: { x: 14, y: 1 }, want: 13,
    },
    { name: 'waiting at balcony 1 beside another: it moves to balcony 2', others: [retrieval(ALL, { staged: cell(8) })], from: cell(13), staged: cell(13), want: 26 },
    { name: 'waiting alone at balcony 1: it stays', others: [retrieval(ALL, { staged: cell(30) })], from: cell(13), staged: cell(13), want: 13 },
    {
      name: 'waiting at balcony 1 beside another, every balcony within reach has one: it stays',
      others: [retrieval(ALL, { staged: cell(8) }), retrieval(ALL, { staged: cell(30) }), retrieval(ALL, { staged: cell(48) })], from: cell(13), staged: cell(13), want: 13,
    },
  ];
  for (const row of rows) {
    const self = retrieval(row.balconies ?? ALL, row.staged && { staged: row.staged });
    const s = snapshot([...row.others, self]);
    const claimed = row.claimed && new Set(row.claimed.map(key));
    t.same(stagePlace(s, self, row.from, claimed), cell(row.want), row.name);
  }
});

t.test('stagePlace: no buffer while a carrier waits to be set aside in one', async (t) => {
  const self = retrieval(ALL);
  const setAside = newJob({ id: 'buffering-1', request_id: 'r0', type: 'BUFFERING', entity_id: 'e', entity_index: 0, seq: 0, now: 0 }, { status: 'ACCEPTED', level_id: 1, balcony_ids: [] });
  t.equal(stagePlace(snapshot([setAside, self]), self, { x: 14, y: 1 }), undefined);
});
