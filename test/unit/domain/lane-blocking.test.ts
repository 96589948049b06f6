// The lane-blocking rule (src/domain/inventory/lane.ts): which carriers of a storage lane shut in
// another, table by table; then the same lanes read through its two adapters, the store's
// (request planning) and a dispatch snapshot's (the brain), which must answer alike.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { carriersInFront, inFront, type LaneView } from '../../../src/domain/inventory/lane.js';
import { carriers, type CarrierRecord } from '../../../src/domain/inventory/records.js';
import { carriersComingInFront } from '../../../src/domain/requests/lanes.js';
import { jobs, newJob, type JobRecord, type JobStatus } from '../../../src/domain/requests/records.js';
import { buildSite, type Cell } from '../../../src/domain/site/load.js';
import type { LevelSnapshot } from '../../../src/brain/worker/level/snapshot.js';
import * as places from '../../../src/brain/worker/policy/places.js';
import { smallSite } from '../../fixtures/small-site.js';

/** A view of entries [depth, carrier]; `asked` collects the entries whose carrier the rule asked for. */
function lane(entries: [number, string | undefined][], asked: number[] = []): LaneView {
  return {
    length: entries.length,
    depth: (i) => entries[i]![0],
    carrier: (i) => {
      asked.push(i);
      return entries[i]![1];
    },
  };
}

t.test('the carriers that shut in a carrier: nearer the highway, in the view\'s order, never itself', async (t) => {
  // [what it shows, the lane's entries, the depth and id of the carrier asked about, the carriers in front]
  const cases: [string, [number, string | undefined][], number, string, string[]][] = [
    ['a full lane, asked from the back', [[1, 'A'], [2, 'B'], [3, 'C']], 3, 'C', ['A', 'B']],
    ['a full lane, asked from the middle', [[1, 'A'], [2, 'B'], [3, 'C']], 2, 'B', ['A']],
    ['the front space is shut in by nothing', [[1, 'A'], [2, 'B'], [3, 'C']], 1, 'A', []],
    ['empty spaces in front shut in nothing', [[1, undefined], [2, undefined], [3, 'C']], 3, 'C', []],
    ['a gap in front: the one before it still counts', [[1, 'A'], [2, undefined], [3, 'C']], 3, 'C', ['A']],
    ['a carrier deeper than it does not', [[1, undefined], [2, 'B'], [3, 'C']], 2, 'B', []],
    ['one on its way to a space in front counts', [[2, 'X']], 3, 'C', ['X']],
    ['one on its way to the same depth does not', [[3, 'X']], 3, 'C', []],
    ['one on its way deeper does not', [[3, 'X']], 2, 'B', []],
    ['itself, on its way to a space in front, does not', [[1, 'C']], 3, 'C', []],
    ['several on their way: the view\'s order (the jobs\'), not the depth\'s', [[2, 'Y'], [3, 'Z'], [1, 'X']], 3, 'C', ['Y', 'X']],
    ['an empty lane', [], 3, 'C', []],
  ];
  for (const [name, entries, depth, self, expected] of cases) t.same(inFront(lane(entries), depth, self), expected, name);
});

t.test('a carrier is asked for only of the entries in front', async (t) => {
  const asked: number[] = [];
  inFront(lane([[3, 'C'], [1, 'A'], [2, 'B']], asked), 2, 'B');
  t.same(asked, [1], 'the depth decides first: a reader that looks carriers up reads no more than the rule needs');
});

t.test('the store and a dispatch snapshot read the same lanes alike', async (t) => {
  const level = buildSite(smallSite()).level(1)!;
  // Lanes x = 1..6 open north onto the highway (y = 1): depth 1 at y = 2, depth 3 at y = 4.
  const standing: Record<string, Cell> = {
    C1: { x: 1, y: 2 }, C2: { x: 1, y: 3 }, C3: { x: 1, y: 4 },
    C4: { x: 4, y: 4 }, C5: { x: 5, y: 4 }, C6: { x: 6, y: 3 },
    // Held up by bots on the highway until their jobs set them down.
    C7: { x: 6, y: 1 }, C8: { x: 5, y: 1 }, C9: { x: 4, y: 1 }, C10: { x: 3, y: 1 }, C11: { x: 2, y: 1 },
  };
  let seq = 0;
  const moving = (carrier: string, to: Cell, status: JobStatus = 'EXECUTING'): JobRecord =>
    newJob({ id: `J-${String(++seq).padStart(3, '0')}`, request_id: 'R', type: 'STORING', entity_id: carrier, entity_index: -1, seq, now: 0 }, { status, carrier_id: carrier, level_id: 1, target: to });
  const open = [
    moving('C9', { x: 4, y: 3 }), moving('C10', { x: 4, y: 2 }, 'CANCELLING'), // both in front of C4, in the jobs' order
    moving('C5', { x: 5, y: 2 }), moving('C11', { x: 5, y: 3 }, 'ACCEPTED'), // C5's own job, and one not started
    moving('C7', { x: 6, y: 4 }), moving('C8', { x: 6, y: 2 }), // behind C6, and in front of it
  ];
  // [carrier, standing in front, being set down in front]
  const expected: [string, string[], string[]][] = [
    ['C3', ['C1', 'C2'], []], ['C2', ['C1'], []], ['C1', [], []],
    ['C4', [], ['C9', 'C10']], ['C5', [], []], ['C6', [], ['C8']],
  ];

  const dir = mkdtempSync(path.join(tmpdir(), 'wh-lane-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, ALL_COLLECTIONS as never, MIGRATIONS);
  t.teardown(() => store.close());
  const records = new Map<string, CarrierRecord>(Object.entries(standing).map(([id, c]) => [id, { id, level_id: 1, ...c, updated_at: 0 }]));
  await store.write(() => {
    for (const c of records.values()) store.collection(carriers).put(c);
    for (const j of open) store.collection(jobs).put(j);
  });

  const at = new Map(Object.entries(standing).map(([id, c]) => [`${c.x}:${c.y}`, id]));
  const snapshot = { level, jobs: open, carrierAt: (c: Cell) => at.get(`${c.x}:${c.y}`) } as unknown as LevelSnapshot;
  const place = (id: string) => ({ id, level_id: 1, ...standing[id]! });

  for (const [id, inFrontOf, coming] of expected) {
    t.same(carriersInFront(store, level, records.get(id)!).map((c) => c.id), inFrontOf, `${id}: standing in front, from the store`);
    t.same(places.carriersInFront(snapshot, place(id)), inFrontOf, `${id}: standing in front, from a snapshot`);
    t.same(carriersComingInFront(store, level, records.get(id)!).map((c) => c.id), coming, `${id}: being set down in front, from the store`);
    t.same(places.carriersComingInFront(snapshot, place(id)), coming, `${id}: being set down in front, from a snapshot`);
  }
});
