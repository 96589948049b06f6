// Where every carrier stands, in memory (src/domain/inventory/carrier-places.ts): after any run
// of commits that put, move and delete carriers on a real store, each cell's carrier and each
// lane's carrier depths agree with what the store holds. The moves are seeded: a failure
// prints the seed that replays it.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { ALL_COLLECTIONS } from '../../../src/domain/collections.js';
import { CarrierPlaces } from '../../../src/domain/inventory/carrier-places.js';
import { carriers } from '../../../src/domain/inventory/records.js';
import { buildSite } from '../../../src/domain/site/load.js';
import { smallSite } from '../../fixtures/small-site.js';
import { laneCarriersOf } from '../../helpers/lane-carriers.js';
import { seeded } from '../../helpers/seeded.js';

t.test('cells and lanes follow every commit', async (t) => {
  const level = buildSite({ ...smallSite(), carriers: [] }).level(1)!;
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-places-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, ALL_COLLECTIONS as never, MIGRATIONS);
  t.teardown(() => store.close());
  const seed = Number(process.env.SEED ?? Date.now() % 1e9);
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  // Storage spaces mostly, and the highway: a carrier held up by a bot is booked there.
  const cells = [...level.storage, ...level.highway];
  const places = new CarrierPlaces(store, [level]);
  t.teardown(() => places.close());

  for (let step = 0; step < 300; step++) {
    await store.write(() => {
      const c = store.collection(carriers);
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        const id = `C${Math.floor(random() * 12)}`;
        const taken = new Set([...c.scan()].map((r) => `${r.x}:${r.y}`));
        const to = pick(cells.filter((cell) => !taken.has(`${cell.x}:${cell.y}`)));
        if (random() < 0.2) c.remove(id);
        else c.put({ id, level_id: 1, x: to.x, y: to.y, updated_at: step });
      }
    });
    const stored = [...store.collection(carriers).scan()];
    const agree = stored.every((r) => places.at(1, r.x, r.y) === r.id)
      && cells.filter((cell) => places.at(1, cell.x, cell.y) !== undefined).length === stored.length;
    const lanes = laneCarriersOf(level, stored);
    const lanesAgree = level.lanes.every((_, i) => (places.laneCarriers(1)[i] ?? 0) === lanes[i]);
    if (!agree || !lanesAgree) {
      t.fail(`step ${step}: ${agree ? 'a lane' : 'a cell'} disagrees with the store (replay with SEED=${seed})`);
      return;
    }
  }
  t.pass(`300 commits, cells and lanes agree (seed ${seed})`);
});

t.test('a level it was not given has no lanes kept', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-places-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, ALL_COLLECTIONS as never, MIGRATIONS);
  t.teardown(() => store.close());
  await store.write(() => store.collection(carriers).put({ id: 'C1', level_id: 1, x: 1, y: 2, updated_at: 0 }));
  const places = new CarrierPlaces(store);
  t.teardown(() => places.close());
  t.equal(places.at(1, 1, 2), 'C1');
  t.equal(places.laneCarriers(1)[0], undefined);
});
