/**
 * The everyday calls, as `bench:load` sends them and `bench:allocation`
 * weighs them: each kind makes its next call with choices (which SKU, which word) drawn from
 * a seeded generator, so a seed replays the same calls.
 */
import { randomUUID } from 'node:crypto';

export interface Call {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Statuses the kind may answer in normal operation (a 409 for a request the stock cannot serve). */
  ok: readonly number[];
}

/** A deterministic generator of numbers in [0, 1) (mulberry32), so a seed replays the same choices. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The words of the SKU names the load creates and searches for. */
export const WORDS = ['bolt', 'nut', 'gloves', 'wire', 'tape', 'drill', 'cable', 'washer', 'screw', 'glasses'];

/** SKU-00001 to SKU-00400: the demo site's SKUs. */
const DEMO_SKUS = 400;

/** The everyday mix's kinds, by name, drawing their choices from `random`. */
export function mixKinds(random: () => number): Record<string, () => Call> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const demoSku = () => `SKU-${String(1 + Math.floor(random() * DEMO_SKUS)).padStart(5, '0')}`;
  const keysUsed: string[] = [];
  let created = 0;
  const run = randomUUID().slice(0, 8);
  return {
    view_by_sku: () => ({ method: 'GET', path: `/api/v2/inventory_view?sku_id__eq=${demoSku()}&sort_by=eta`, ok: [200] }),
    view_page: () => ({ method: 'GET', path: `/api/v2/inventory_view?page=${1 + Math.floor(random() * 20)}&size=100`, ok: [200] }),
    sku_search: () => ({ method: 'GET', path: `/api/v2/skus?search=name:${pick(WORDS)}&sort_by=-total_quantity&size=20`, ok: [200] }),
    jobs_by_status: () => ({ method: 'GET', path: `/api/v2/jobs?status__eq=${pick(['EXECUTING', 'ACCEPTED'])}`, ok: [200] }),
    post_sku: () => ({ method: 'POST', path: '/api/v2/sku', body: { id: `LOAD-${run}-${++created}`, name: `Load ${pick(WORDS)} ${created}` }, ok: [201] }),
    patch_sku: () => ({ method: 'PATCH', path: `/api/v2/sku/${demoSku()}`, body: { name: `Renamed ${pick(WORDS)} ${Math.floor(random() * 1000)}` }, ok: [200] }),
    post_request: () => {
      // One post in ten replays an earlier key: the idempotent path.
      const replay = keysUsed.length > 0 && random() < 0.1;
      const key = replay ? pick(keysUsed) : randomUUID();
      if (!replay) keysUsed.push(key);
      return {
        method: 'POST', path: '/api/v2/requests', headers: { 'idempotency-key': key },
        body: { type: 'FULFILLMENT', entities: [{ sku_id: demoSku(), quantity: 1 }] }, ok: [200, 201, 409],
      };
    },
    patch_setting: () => ({ method: 'PATCH', path: '/api/v2/settings/events.retentionDays', body: { value_json: 30 + Math.floor(random() * 5) }, ok: [200] }),
  };
}
