// npm run bench:site [-- --sites demo,large,large-10k --minutes 60 --speed 10 --pick-seconds 6 --seed 3
//                        --open-per-balcony 3 --bots-per-level N --highways single|scaled
//                        --site-options '{"buffersPerBalcony":2}' --warm-up 5]
//
// The whole controller on a simulated site, through the real API, link, planner and simulator:
// a stream of fulfillment requests keeps every balcony supplied; a driver acting as the people
// at the balconies confirms each waiting job after a modelled time (pick: `pick-seconds` per
// item; check and packing: 3 s). One person per balcony: they take the jobs waiting there one
// at a time, oldest first, so a carrier at the second port waits while the first is worked. The site runs `speed` times faster than real time
// (WAREHOUSE_SIM_SPEED: the bots' figures shrink, the protocol's timing does not); the figures
// below are in simulated time.
//
// Printed per site:
//   carriers presented per balcony per hour   carriers a person was asked to work on there
//   balcony idle share                         time the balcony's person has nothing to do
//   bot utilisation                            share of bot-time with a bot job in motion
//   request lead time p50/p95                  request created -> SUCCEEDED
//   balcony-bound limit                        carriers per hour if a balcony never waited:
//                                              3600 / mean person time per presented carrier
//   KPI kept by the controller                 GET /api/v2/kpi's carriers presented and busy share
//                                              beside the driver's own, as a ratio
//   planner, level N                           its steps against the simulated time's (below
//                                              100 %: bots waited for confirmations, or idled),
//                                              stalls and escapes (the planners' summaries)
// `--warm-up M` leaves the first M simulated minutes out of every figure but the windows (the
// site starts with every carrier in storage, a whole trip from the balconies); `--minutes`
// counts them in.
// Target: balconies busy >= 90% of the time while bots are enough. `--bots-per-level`
// runs the demo with that many bots on each level instead of its 10 (the same site otherwise),
// to tell a balcony short of bots from a controller that keeps it waiting.
// Sites: `demo` (2 levels of 620 spaces, 10 bots and 2 balconies a level), `large` (one level of
// 4,000 spaces, 40 bots, 6 balconies), `large-10k` (one level of 10,000 spaces, 60 bots, 6
// balconies: a target of >= 85 % busy). `--highways` lays out the generated large
// sites' highways: `scaled` (default) with as many highway rows and cross aisles as their bots
// need (src/domain/site/highways.ts), `single` with the generator's original single top row;
// `--site-options` (JSON) overrides any generator option of the large sites after that, to
// measure one part of a layout by itself.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { DEMO_OPTIONS } from '../src/domain/site/demo.js';
import { generateSite, type GenerateOptions } from '../src/domain/site/generate.js';
import { scaledHighways } from '../src/domain/site/highways.js';
import { createLogger } from '../src/log/logger.js';
import { PLAN_STEP_MS } from '../src/domain/site/motion-figures.js';
import pino from 'pino';
import { Client } from '../test/helpers/client.js';

/** The app's log lines shown (BENCH_SITE_LOG=info shows stalls and refusals of the planners). */
const LOG_LEVEL = process.env.BENCH_SITE_LOG ?? 'warn';

const { values: args } = parseArgs({
  options: {
    sites: { type: 'string', default: 'demo,large' },
    minutes: { type: 'string', default: '60' },
    speed: { type: 'string', default: '10' },
    'pick-seconds': { type: 'string', default: '6' },
    'open-per-balcony': { type: 'string', default: '3' },
    seed: { type: 'string', default: '3' },
    'bots-per-level': { type: 'string' },
    highways: { type: 'string', default: 'scaled' },
    'site-options': { type: 'string', default: '{}' },
    'warm-up': { type: 'string', default: '0' },
  },
});
const speed = Number(args.speed);
const simMinutes = Number(args.minutes);
/** Simulated seconds from the start before the figures count (the first carriers are a whole trip away). */
const warmUpS = Number(args['warm-up']) * 60;
const pickSeconds = Number(args['pick-seconds']);
const openPerBalcony = Number(args['open-per-balcony']);
let seed = Number(args.seed) >>> 0 || 1;
const random = () => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 0x100000000;
};

/** The generated sites, by name. */
const LARGE: Record<string, GenerateOptions> = {
  large: {
    name: 'bench:site large', levels: 1, spacesPerLevel: 4000, balconiesPerLevel: 6, chargersPerLevel: 6, botsPerLevel: 40,
    carrierFill: 0.7, boxesPerCarrier: 3, skus: 300, seed: 5,
  },
  'large-10k': {
    name: 'bench:site large-10k', levels: 1, spacesPerLevel: 10000, balconiesPerLevel: 6, chargersPerLevel: 8, botsPerLevel: 60,
    carrierFill: 0.7, boxesPerCarrier: 3, skus: 300, seed: 5,
  },
};

/** A generated site's options with the highways `--highways` asks for. */
function withHighways(options: GenerateOptions): GenerateOptions {
  const overrides = JSON.parse(args['site-options']!) as Partial<GenerateOptions>;
  if (args.highways === 'single') return { ...options, ...overrides };
  if (args.highways !== 'scaled') throw new RangeError(`--highways must be single or scaled, got ${String(args.highways)}`);
  return { ...options, ...scaledHighways(options), ...overrides };
}

/** Simulated seconds of one window of the figures by time. */
const WINDOW_S = 600;
/** Simulated seconds after which an open request counts as stale in the windows' figures. */
const STALE_S = 300;

interface Job { id: string; type: string; status: string; balcony_id: number | null; carrier_id: string | null; quantity: number | null; bot_id: number | null; details: Record<string, unknown>; request_id: string }

async function runSite(name: string): Promise<void> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-bench-site-'));
  let sitePath = 'demo';
  if (name === 'demo' && args['bots-per-level']) {
    sitePath = path.join(stateDir, 'site.json');
    writeFileSync(sitePath, JSON.stringify(generateSite({ ...DEMO_OPTIONS, botsPerLevel: Number(args['bots-per-level']) })));
  } else if (LARGE[name]) {
    sitePath = path.join(stateDir, 'site.json');
    writeFileSync(sitePath, JSON.stringify(generateSite(withHighways(LARGE[name]))));
  }
  // The app logs at info for the planners' summaries; lines below LOG_LEVEL are not shown.
  /** The planners' last summary per level (they log every 5 minutes and at the end). */
  const summaries = new Map<number, { level_id: number; steps: number; stalls: { detected: number }; escapes: { planned: number; unsolved: number } }>();
  const shown = pino.levels.values[LOG_LEVEL] ?? pino.levels.values.warn!;
  const sink = {
    write(line: string) {
      const entry = JSON.parse(line) as { level: string; msg: string };
      if (entry.msg === 'level planner summary') {
        const summary = entry as unknown as Parameters<typeof summaries.set>[1];
        summaries.set(summary.level_id, summary);
      }
      if ((pino.levels.values[entry.level] ?? 0) >= shown) process.stdout.write(line);
    },
  };
  const config = loadConfig({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_SITE: sitePath, WAREHOUSE_SIM_SPEED: String(speed), WAREHOUSE_LOG_LEVEL: 'info' });
  const app: App = await startApp(config, createLogger('info', sink));
  const key = JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')).api_key as string;
  const c = new Client(app.port, readFileSync(app.tls.certFile), key);
  const balconies = app.site.balconies.map((b) => b.id);
  const botCount = app.site.levels.reduce((n, l) => n + l.bots.length, 0);
  const skus = (await c.get('/api/v2/skus?size=1000&total_quantity__gte=1')).json.items.map((s: { id: string }) => s.id) as string[];

  const realMs = (simMinutes * 60_000) / speed;
  const started = Date.now();
  const simNow = () => ((Date.now() - started) * speed) / 1000; // simulated seconds
  /** Per balcony, the job its person works on and when they took it (sim s). */
  const working = new Map<number, { job: Job; since: number }>();
  /** When each job waiting for a person was first seen (sim s): the oldest is taken first. */
  const seenWaiting = new Map<string, number>();
  const busy = new Map<number, number>(); // balcony -> busy sim seconds after the warm-up
  const busyAll = new Map<number, number>(); // the same from the start, beside the controller's KPI
  // By WINDOW_S of simulated time: the balconies' busy seconds, and the bots' battery at its end
  // (a run that starts well and fades shows where).
  const windowBusy: number[] = [];
  const windowBattery: { mean: number; min: number; stale: number }[] = [];
  /** By window: why ready jobs waited, so a window that falls away shows what it waited for. */
  const windowWaits: Map<string, number>[] = [];
  /** By window: bot-seconds in motion and seconds sampled (bot use), and the carriers' trips. */
  const windowBotUse: { moving: number; sampled: number }[] = [];
  const windowTrips: number[][] = [];
  /** By window: retrievals under way without a position (queued), summed over the samples, by what they wait for, and their ages. */
  const windowQueued: { sum: number; samples: number; why: Map<string, number>; ages: number[] }[] = [];
  /** request:carrier of the retrievals seen under way, and when first seen (sim s): a trip's start. */
  const tripStart = new Map<string, number>();
  const presented = new Map<number, number>(); // after the warm-up
  const personTime: number[] = [];
  const leadTimes: number[] = [];
  const created = new Map<string, number>();
  let botBusySamples = 0;
  let samples = 0;
  let lastSample = simNow();
  /** request:carrier of the carriers presented so far. */
  const seenPresented = new Set<string>();
  /** What an idle person's balcony had on its way, in simulated seconds: why they waited. */
  const idleWhy = new Map<string, number>();
  /** Why ready jobs waited, counted over the samples: the answer to "what limits it?". */
  const waits = new Map<string, number>();

  let round = 0;
  while (Date.now() - started < realMs) {
    round++;
    // Keep the balconies supplied: open requests up to `openPerBalcony` per balcony.
    const open = (await c.get('/api/v2/requests?status__in=CREATED&status__in=ACCEPTED&status__in=EXECUTING&type__eq=FULFILLMENT&size=1')).json.total as number;
    for (let i = open; i < openPerBalcony * balconies.length; i++) {
      const lines = 1 + Math.floor(random() * 2);
      const entities = Array.from({ length: lines }, () => ({ sku_id: skus[Math.floor(random() * skus.length)]!, quantity: 1 + Math.floor(random() * 2) }));
      const unique = [...new Map(entities.map((e) => [e.sku_id, e])).values()];
      const r = await c.request('/api/v2/requests', { method: 'POST', json: { type: 'FULFILLMENT', entities: unique } });
      if (r.status === 201 && simNow() >= warmUpS) created.set(r.json.id, simNow());
    }
    // The people: confirm jobs whose modelled time has passed.
    const executing = (await c.get('/api/v2/jobs?status__eq=EXECUTING&size=1000')).json.items as Job[];
    const now = simNow();
    const dt = now - lastSample;
    lastSample = now;
    const counting = now >= warmUpS;
    let botsMoving = 0;
    const waiting = new Map<number, Job[]>();
    for (const j of executing) {
      if (j.details.waiting_for !== 'trigger') {
        if (j.bot_id !== null) botsMoving++;
        if (j.type === 'RETRIEVING' && j.carrier_id !== null && !tripStart.has(`${j.request_id}:${j.carrier_id}`)) tripStart.set(`${j.request_id}:${j.carrier_id}`, now);
        continue;
      }
      if (!seenWaiting.has(j.id)) seenWaiting.set(j.id, now);
      const b = j.balcony_id ?? -1;
      // A carrier presented: the first job of its request waiting for the person at its balcony.
      if (j.carrier_id !== null && !seenPresented.has(`${j.request_id}:${j.carrier_id}`)) {
        seenPresented.add(`${j.request_id}:${j.carrier_id}`);
        const start = tripStart.get(`${j.request_id}:${j.carrier_id}`);
        if (start !== undefined) (windowTrips[Math.floor(now / WINDOW_S)] ??= []).push(now - start);
        tripStart.delete(`${j.request_id}:${j.carrier_id}`);
        if (counting) presented.set(b, (presented.get(b) ?? 0) + 1);
      }
      let here = waiting.get(b);
      if (!here) waiting.set(b, (here = []));
      here.push(j);
    }
    for (const [b, jobs] of waiting) {
      let w = working.get(b);
      if (w && now - w.since >= needs(w.job)) {
        const t = await c.request(`/api/v2/trigger/${w.job.id}`, { method: 'POST', json: {} });
        if (t.status === 200 && counting) personTime.push(needs(w.job));
        seenWaiting.delete(w.job.id);
        working.delete(b);
        w = undefined;
      }
      if (w) {
        busyAll.set(b, (busyAll.get(b) ?? 0) + dt);
        if (counting) busy.set(b, (busy.get(b) ?? 0) + dt);
        const k = Math.floor(now / WINDOW_S);
        windowBusy[k] = (windowBusy[k] ?? 0) + dt;
      }
      else {
        // The person takes the oldest job waiting at the balcony.
        const next = jobs.filter((j) => seenWaiting.has(j.id)).sort((x, y) => seenWaiting.get(x.id)! - seenWaiting.get(y.id)!)[0];
        if (next) working.set(b, { job: next, since: now });
      }
    }
    for (const b of [...working.keys()]) if (!waiting.has(b)) working.delete(b); // its job went (cancelled)
    if (round % 5 === 0) {
      const q = (windowQueued[Math.floor(now / WINDOW_S)] ??= { sum: 0, samples: 0, why: new Map(), ages: [] });
      q.samples++;
      for (const j of executing) {
        if (j.type !== 'RETRIEVING' || j.balcony_id !== null) continue;
        q.sum++;
        const why = String(j.details.waiting_for ?? 'moving');
        q.why.set(why, (q.why.get(why) ?? 0) + 1);
        const start = tripStart.get(`${j.request_id}:${j.carrier_id}`);
        if (start !== undefined) q.ages.push(now - start);
      }
    }
    const use = (windowBotUse[Math.floor(now / WINDOW_S)] ??= { moving: 0, sampled: 0 });
    use.moving += (botsMoving / botCount) * dt;
    use.sampled += dt;
    if (counting) {
      for (const b of balconies) {
        if (working.has(b)) continue;
        const coming = executing.some((j) => j.type === 'RETRIEVING' && j.balcony_id === b);
        const why = coming ? 'a carrier on its way to a position' : 'nothing on its way';
        idleWhy.set(why, (idleWhy.get(why) ?? 0) + dt);
      }
      botBusySamples += (botsMoving / botCount) * dt;
      samples += dt;
    }
    if (windowBattery.length < Math.floor(now / WINDOW_S)) {
      const levels = ((await c.get('/api/v2/bots')).json as { battery_level: number }[]).map((b) => b.battery_level);
      // Open requests older than STALE_S: work that never starts piles up among the open ones.
      const open = (await c.get('/api/v2/requests?status__in=CREATED&status__in=ACCEPTED&status__in=EXECUTING&type__eq=FULFILLMENT&size=1000')).json.items as { created_at_utc: string }[];
      const stale = open.filter((r) => ((Date.now() - Date.parse(r.created_at_utc)) * speed) / 1000 > STALE_S).length;
      windowBattery.push({ mean: avg(levels), min: Math.min(...levels), stale });
    }
    // Less often: why ready jobs wait.
    if (round % 5 === 0) {
      for (const j of (await c.get('/api/v2/jobs?status__eq=ACCEPTED&size=1000')).json.items as Job[]) {
        const why = `${j.type}: ${String(j.details.waiting_for ?? 'not yet looked at')}`;
        if (counting) waits.set(why, (waits.get(why) ?? 0) + 1);
        const inWindow = (windowWaits[Math.floor(now / WINDOW_S)] ??= new Map());
        inWindow.set(why, (inWindow.get(why) ?? 0) + 1);
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  if (process.env.BENCH_SITE_DEBUG) {
    const ex = (await c.get('/api/v2/jobs?status__eq=EXECUTING&size=1000')).json.items as Job[];
    console.log('executing:', JSON.stringify(ex.map((j) => [j.type, j.bot_id, j.balcony_id, j.details.waiting_for, j.details.reason])));
    console.log('bots:', JSON.stringify((await c.get('/api/v2/bots')).json));
    const open = (await c.get('/api/v2/jobs?status__in=ACCEPTED&status__in=CANCELLING&size=1000')).json.items as Job[];
    console.log('accepted:', JSON.stringify(open.map((j) => [j.type, j.status, j.bot_id, j.details.waiting_for, j.details.reason])));
  }
  const done = (await c.get('/api/v2/requests?status__eq=SUCCEEDED&type__eq=FULFILLMENT&size=1000')).json.items as { id: string; updated_at_utc: string }[];
  for (const r of done) {
    const at = created.get(r.id);
    if (at !== undefined) leadTimes.push(((Date.parse(r.updated_at_utc) - started) * speed) / 1000 - at);
  }
  const ranS = simNow();
  const countedS = ranS - warmUpS;
  const hours = countedS / 3600;
  const perBalcony = balconies.map((b) => (presented.get(b) ?? 0) / hours);
  const idle = balconies.map((b) => 1 - (busy.get(b) ?? 0) / countedS);
  const presentedCounted = [...presented.values()].reduce((a, b) => a + b, 0);
  const meanPerson = personTime.length > 0 ? personTime.reduce((a, b) => a + b, 0) / Math.max(1, presentedCounted) : NaN;
  const pct = (list: number[], p: number) => {
    const s = [...list].sort((a, b) => a - b);
    return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  };
  console.log(`\n== ${name}: ${balconies.length} balconies, ${botCount} bots, ${simMinutes} simulated minutes at ${speed}x (${(realMs / 1000).toFixed(0)} s real), `
    + `figures after a warm-up of ${warmUpS / 60} minutes; `
    + `levels ${app.site.levels.map((l) => `${l.width}×${l.rows}, ${l.storage.length} spaces`).join('; ')}`);
  console.log(`carriers presented per balcony per hour  mean ${avg(perBalcony).toFixed(1)}  (${perBalcony.map((v) => v.toFixed(0)).join(', ')})`);
  const byLevel = app.site.levels.map((l) => {
    const here = balconies.map((b, i) => ({ b, i })).filter(({ b }) => app.site.balconies.find((x) => x.id === b)?.level_id === l.id);
    return `level ${l.id} ${avg(here.map(({ i }) => perBalcony[i]!)).toFixed(0)}`;
  });
  console.log(`  by level                               ${byLevel.join(', ')}`);
  console.log(`balcony idle share                       mean ${(avg(idle) * 100).toFixed(1)} %  -> busy ${((1 - avg(idle)) * 100).toFixed(1)} % (target >= 90 %)`);
  console.log(`bot utilisation                          ${((botBusySamples / samples) * 100).toFixed(1)} %`);
  console.log(`request lead time                        p50 ${pct(leadTimes, 0.5).toFixed(0)} s  p95 ${pct(leadTimes, 0.95).toFixed(0)} s  (${leadTimes.length} requests done)`);
  console.log(`balcony-bound limit                      ${(3600 / meanPerson).toFixed(1)} carriers per balcony per hour (mean person time ${meanPerson.toFixed(1)} s per carrier)`);
  // A last window shorter than half of one says little: left out.
  const windows = windowBusy.filter((_, k) => simNow() - k * WINDOW_S >= WINDOW_S / 2).map((v, k) => `${((v / balconies.length / Math.min(WINDOW_S, simNow() - k * WINDOW_S)) * 100).toFixed(0)} %`
    + (windowBattery[k] ? ` (bots ${windowBattery[k]!.mean.toFixed(0)} %, lowest ${windowBattery[k]!.min.toFixed(0)} %; ${windowBattery[k]!.stale} open requests older than ${STALE_S / 60} minutes)` : ''));
  console.log(`balconies busy by ${WINDOW_S / 60} simulated minutes  ${windows.join(', ')}`);
  const shares = (m: Map<string, number>) => {
    const total = [...m.values()].reduce((a, b) => a + b, 0);
    return [...m].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, v]) => `${k} ${((v / total) * 100).toFixed(0)} %`).join(', ');
  };
  console.log(`ready jobs waiting, by reason (share of samples): ${shares(waits)}`);
  console.log(`a person idle, by what their balcony had on its way (share of idle time): ${shares(idleWhy)}`);
  console.log(`by window: bots in motion, and a carrier's trip from its retrieval's start to its balcony (p50/p90, s): ${windowBotUse.map((u, k) => {
    const trips = windowTrips[k] ?? [];
    return `${((u.moving / Math.max(1e-9, u.sampled)) * 100).toFixed(0)} % ${pct(trips, 0.5).toFixed(0)}/${pct(trips, 0.9).toFixed(0)}`;
  }).join(', ')}`);
  windowQueued.forEach((q, k) => console.log(`  minutes ${(k * WINDOW_S) / 60}-${((k + 1) * WINDOW_S) / 60}: queued retrievals ${(q.sum / Math.max(1, q.samples)).toFixed(1)} `
    + `(age p50 ${pct(q.ages, 0.5).toFixed(0)} s, p90 ${pct(q.ages, 0.9).toFixed(0)} s, max ${pct(q.ages, 1).toFixed(0)} s), waiting for: ${shares(q.why)}`));
  windowWaits.forEach((m, k) => console.log(`  minutes ${(k * WINDOW_S) / 60}-${((k + 1) * WINDOW_S) / 60}: ${shares(m)}`));
  // What the controller kept itself (GET /api/v2/kpi, the KPI page's source) beside what this
  // driver saw: the counts must agree; the busy shares differ by the driver's sampling.
  const kpi = (await c.get(`/api/v2/kpi?from=${new Date(started - 3_600_000).toISOString()}`)).json as {
    balconies: { balcony_id: number; hours: { carriers_presented: number; busy_seconds: number; idle_seconds: number }[] }[];
  };
  const kept = new Map(kpi.balconies.map((b) => [b.balcony_id, b.hours.reduce((n, h) => ({ presented: n.presented + h.carriers_presented, busy: n.busy + h.busy_seconds, elapsed: n.elapsed + h.busy_seconds + h.idle_seconds }), { presented: 0, busy: 0, elapsed: 0 })]));
  const busyAllShare = avg(balconies.map((b) => (busyAll.get(b) ?? 0) / ranS));
  const keptPresented = balconies.reduce((n, b) => n + (kept.get(b)?.presented ?? 0), 0);
  const seen = seenPresented.size;
  const keptBusy = avg(balconies.map((b) => (kept.get(b)?.busy ?? 0) / Math.max(1, kept.get(b)?.elapsed ?? 0)));
  // The controller's hours run from its start, a few seconds before this driver's first request.
  console.log(`KPI kept by the controller               carriers presented ${keptPresented} against ${seen} seen here (${(keptPresented / Math.max(1, seen)).toFixed(3)}); `
    + `balconies busy ${(keptBusy * 100).toFixed(1)} % against ${(busyAllShare * 100).toFixed(1)} % (${(keptBusy / Math.max(1e-9, busyAllShare)).toFixed(3)}), both from the start`);
  c.close();
  await app.close();
  // A level's clock: below 100 % its bots waited for the controller (confirmations late, which
  // the speed-up makes likelier) or had nothing to start.
  const nominalSteps = (ranS * 1000) / PLAN_STEP_MS; // the planners run from the start
  for (const s of summaries.values()) {
    console.log(`planner, level ${s.level_id}: ${s.steps} steps (${((s.steps / nominalSteps) * 100).toFixed(0)} % of the simulated time's), ${s.stalls.detected} stalls, ${s.escapes.planned} escapes (${s.escapes.unsolved} unsolved)`);
  }
  rmSync(stateDir, { recursive: true, force: true });
}

/** The person's modelled time for a job. */
function needs(job: Job): number {
  return job.type === 'PICKING' ? pickSeconds * (job.quantity ?? 1) : 3;
}

function avg(list: number[]): number {
  return list.length === 0 ? NaN : list.reduce((a, b) => a + b, 0) / list.length;
}

for (const name of args.sites!.split(',')) await runSite(name);
