// How many retrievals a balcony may have queued (src/brain/worker/policy/places.ts,
// queueLimit): one waiting at each buffer beside it and two on their way, never fewer than
// before; the demo and the end-to-end site keep their four.
import t from 'tap';
import { buildSite } from '../../../src/domain/site/load.js';
import { generateSite, type GenerateOptions } from '../../../src/domain/site/generate.js';
import { DEMO_OPTIONS } from '../../../src/domain/site/demo.js';
import { QUEUE_PER_BALCONY, queueLimit } from '../../../src/brain/worker/policy/places.js';
import { e2eSite } from '../../fixtures/e2e-site.js';

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
