/**
 * How many highways a generated level gets for its bots: the rule behind `--highways scaled`
 * of the site generator and the bench's large sites. Every carrier a balcony's person works on
 * comes up the vertical aisles and along the highway rows under the balconies; with one such
 * row, bots waiting for a balcony position and bots passing them share one lane, and the
 * balconies wait (docs/benchmarks-site.md). The planner has no one-way cells (it reads walls
 * and carriers only, docs/site-layout.md), so capacity comes from more lanes, not directions.
 */
import type { GenerateOptions } from './generate.js';

/** Bots per balcony one highway row under the balconies carries. */
export const BOTS_PER_TOP_ROW = 4;
/** Most highway rows under the balconies: beyond this they are space lost to storage. */
export const MAX_TOP_ROWS = 4;
/** Bots per highway cross aisle across the storage. */
export const BOTS_PER_CROSS_AISLE = 8;
/** Rows between cross aisles at most (the original layout's) and at least. */
export const CROSS_EVERY_MAX = 12;
export const CROSS_EVERY_MIN = 4;
/** Balconies per level whose storage a near-square level can serve; more get a wider level. */
export const BALCONIES_PER_SQUARE = 2;
export const MAX_ASPECT = 4;

/** Bots per balcony from which it gets four buffers to wait at instead of two. */
export const BOTS_PER_BALCONY_FOR_4_BUFFERS = 6;

export type HighwayOptions = Required<Pick<GenerateOptions, 'highwayRows' | 'crossEvery' | 'aspect' | 'buffersPerBalcony' | 'chargerEdge'>>;

/** Highway rows, cross-aisle spacing, level shape, buffers and chargers' edge in proportion to a level's bots and balconies. */
export function scaledHighways(o: Pick<GenerateOptions, 'spacesPerLevel' | 'botsPerLevel' | 'balconiesPerLevel'>): HighwayOptions {
  const balconies = Math.max(1, o.balconiesPerLevel);
  const highwayRows = clamp(Math.ceil(o.botsPerLevel / balconies / BOTS_PER_TOP_ROW), 1, MAX_TOP_ROWS);
  // A wide level puts each balcony in front of its own share of the storage: a carrier's
  // trip to the nearest free balcony is shorter than across a square level's height.
  const aspect = clamp(balconies / BALCONIES_PER_SQUARE, 1, MAX_ASPECT);
  // The same estimate of the level's height as the generator's (0.76 of it is storage).
  const storageRows = Math.round(Math.sqrt(o.spacesPerLevel / 0.76 / aspect));
  const crossAisles = Math.ceil(o.botsPerLevel / BOTS_PER_CROSS_AISLE);
  const crossEvery = clamp(Math.floor(storageRows / Math.max(1, crossAisles)), CROSS_EVERY_MIN, CROSS_EVERY_MAX);
  // Bots bring the next carriers to the buffers beside a balcony and wait there: two such
  // places run dry while the next carriers are a whole trip away (the brain queues one
  // retrieval per such buffer plus two: queueLimit(), src/brain/worker/policy/balcony-queue.ts).
  const buffersPerBalcony = o.botsPerLevel / balconies >= BOTS_PER_BALCONY_FOR_4_BUFFERS ? 4 : 2;
  // On a level wider than tall, chargers down the left edge are a long way off for most bots
  // (top-ups then cross the level); along the bottom edge they are spread under every part.
  const chargerEdge = aspect > 1 ? 'bottom' : 'left';
  return { highwayRows, crossEvery, aspect, buffersPerBalcony, chargerEdge };
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));
