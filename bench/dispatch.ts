// npm run bench:dispatch [-- --jobs 150,300,600 --passes 200 --level demo|large]
//
// One dispatch pass of the brain (src/brain/worker/policy/dispatch.ts `decide`) on the demo
// level with many open retrievals, as under a rush of requests: a pass runs after every
// commit, so its cost times the commits is the brain thread's load (with 900 open
// jobs, passes that asked the snapshot the same question for every job took most of it).
// Each size's time per pass is printed with its ratio to the first size's: a pass that grows
// with the jobs gives the ratio of the sizes (4 for 150 -> 600), a quadratic one its square.
//
// The snapshot is synthetic (src/brain/worker/level/snapshot.ts): carriers on random storage
// spaces, a retrieval for each, the first 30 started towards a balcony, 40 bots on the
// highway of which 10 idle. The decisions' digest is printed so that a change meant to be
// faster only can be checked to decide the same.
//
// `--level large`: one generated level of 25,000 spaces with 200 bots of which 60 idle, where
// every third job is a storing whose carrier waits on the highway: each of those the pass
// starts weighs every lane of the level for a space to take its carrier home.
import { parseArgs } from 'node:util';
import os from 'node:os';
import { buildSite, type Cell } from '../src/domain/site/load.js';
import { demoLayout } from '../src/domain/site/demo.js';
import { generateSite } from '../src/domain/site/generate.js';
import { newJob, type JobRecord } from '../src/domain/requests/records.js';
import type { LevelSnapshot } from '../src/brain/worker/level/snapshot.js';
import type { MotionBot } from '../src/brain/worker/motion/motion.js';
import { decide, type Decision } from '../src/brain/worker/policy/dispatch.js';
import { laneCarriersOf } from '../test/helpers/lane-carriers.js';

const { values: args } = parseArgs({ options: { jobs: { type: 'string', default: '150,300,600' }, passes: { type: 'string', default: '200' }, level: { type: 'string', default: 'demo' } } });
const sizes = args.jobs!.split(',').map(Number);
const PASSES = Number(args.passes);
const LARGE = args.level === 'large';
const level = LARGE
  ? buildSite(generateSite({ levels: 1, spacesPerLevel: 25000, balconiesPerLevel: 10, chargersPerLevel: 24, botsPerLevel: 200, carrierFill: 0, boxesPerCarrier: 1, skus: 1, seed: 7 })).levels[0]!
  : buildSite(demoLayout()).levels[0]!;
const BOTS = LARGE ? 200 : 40;
const IDLE = LARGE ? 60 : 10;

/** A level with `n` open retrievals (as many as it has spaces at most). */
function busyLevel(n: number): LevelSnapshot {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const spaces = level.storage.slice();
  for (let i = spaces.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [spaces[i], spaces[j]] = [spaces[j]!, spaces[i]!];
  }
  const carriers = new Map<string, Cell>();
  const jobs: JobRecord[] = [];
  for (let i = 0; i < Math.min(n, spaces.length); i++) {
    const id = `C${i}`;
    const balcony = level.balconies[i % level.balconies.length]!;
    const started = i < 30;
    if (LARGE && !started && i % 3 === 0) {
      // A carrier going home from the highway.
      carriers.set(id, level.highway[(i * 7) % level.highway.length]!);
      jobs.push(newJob({ id: `j${i}`, request_id: `r${i}`, type: 'STORING', entity_id: 'e', entity_index: 0, seq: i, now: 0 }, { status: 'ACCEPTED', level_id: level.id, carrier_id: id }));
      continue;
    }
    carriers.set(id, { x: spaces[i]!.x, y: spaces[i]!.y });
    jobs.push(newJob({ id: `j${i}`, request_id: `r${i}`, type: 'RETRIEVING', entity_id: 'e', entity_index: 0, seq: i, now: 0 }, {
      status: started ? 'EXECUTING' : 'ACCEPTED', level_id: level.id, balcony_ids: [balcony.id], carrier_id: id,
      bot_id: started ? 1 + i : null, target: started ? balcony.ports[0]! : null,
    }));
  }
  const bots: MotionBot[] = [];
  for (let b = 0; b < BOTS; b++) {
    const at = level.highway[(b * 13) % level.highway.length]!;
    bots.push({ id: 1 + b, level_id: level.id, online: true, idle: b >= BOTS - IDLE, x: at.x, y: at.y, lifted: false, charging: false, battery: 90, faulted: false, stuck: false });
  }
  const byCell = new Map([...carriers].map(([id, c]) => [`${c.x}:${c.y}`, id]));
  const byId = new Map(jobs.map((j) => [j.id, j]));
  return {
    level, now: 1, paused: false, chargeBelow: 20, bots, unplaced: [], line: { up: true }, jobs,
    running: new Set(jobs.filter((j) => j.status === 'EXECUTING').map((j) => j.id)),
    order: (id) => ({ priority: 10, counter: Number(id.slice(1)) }),
    job: (id) => byId.get(id),
    carrierAt: (c) => byCell.get(`${c.x}:${c.y}`),
    laneCarriers: laneCarriersOf(level, carriers.values()),
    carrier: (id) => {
      const c = carriers.get(id);
      return c && { id, level_id: level.id, ...c };
    },
    unreachable: () => new Set(), missing: () => false,
  };
}

/** A digest of the decisions, to tell whether two builds decide alike. */
function digest(decisions: Decision[]): string {
  let h = 0;
  for (const d of decisions) {
    const text = `${d.kind} ${d.job.id} ${'bot' in d ? d.bot : ''} ${'target' in d && d.target ? `${d.target.x},${d.target.y}` : ''}`;
    for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  }
  return (h >>> 0).toString(16);
}

console.log(`bench:dispatch on the ${LARGE ? 'large' : 'demo'} level (${level.storage.length} spaces), ${PASSES} passes a size, ${os.cpus().length} cores, load average ${os.loadavg().map((v) => v.toFixed(2)).join(' ')}`);
let first: { ms: number; jobs: number } | undefined;
for (const n of sizes) {
  // A new snapshot per pass, as the brain takes one: whatever a pass works out from it is not kept across passes.
  const snapshots = Array.from({ length: PASSES }, () => busyLevel(n));
  let decisions: Decision[] = [];
  for (let i = 0; i < 20; i++) decisions = decide(snapshots[i % PASSES]!); // warm-up
  const t0 = performance.now();
  for (const s of snapshots) decisions = decide(s);
  const ms = (performance.now() - t0) / PASSES;
  const jobs = snapshots[0]!.jobs.length;
  first ??= { ms, jobs };
  console.log(`${String(jobs).padStart(5)} open jobs: ${ms.toFixed(2).padStart(7)} ms a pass, ${(ms / first.ms).toFixed(2).padStart(6)} x the first size's time for ${(jobs / first.jobs).toFixed(1)} x its jobs; ${decisions.length} decisions, digest ${digest(decisions)}`);
}
