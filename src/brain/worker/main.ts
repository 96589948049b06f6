/**
 * The brain's worker thread: it opens the same LMDB environment as the main thread, builds its
 * own Requests and Inventory over it, follows the open work and the carriers in memory, and
 * runs the Brain. It talks to the main thread by messages (src/brain/messages.ts): its storage
 * status, its log lines, the commands it sends to bots over the radio lines the main thread
 * owns, and the bot and line news it hears; what either thread commits reaches the other
 * through the commit bridge. A crash here ends this thread, never the API.
 */
import path from 'node:path';
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { BOT_MOTION, liftSteps, moveMs, PLAN_STEP_MS } from '../../domain/site/motion-figures.js';
import { Bots } from '../../domain/bots/bots.js';
import { Events } from '../../domain/events/events.js';
import { CarrierPlaces } from '../../domain/inventory/carrier-places.js';
import { Inventory } from '../../domain/inventory/inventory.js';
import { OpenWork } from '../../domain/requests/open-work.js';
import { Requests } from '../../domain/requests/requests.js';
import { buildSite } from '../../domain/site/load.js';
import { SystemFlags } from '../../domain/system/flags.js';
import { onStateChange, openSharedStore, replicateThroughMainThread, shareCommits } from '../../domain/system/shared-store.js';
import { createLogger, setLevel } from '../../log/logger.js';
import { createLevelPlanner, type LevelPlannerStats } from '../../native/planner.js';
import { SPARE_THREAD, type BeginBrain, type BrainInit, type BrainSettings, type FromBrain, type ToBrain } from '../messages.js';
import { Brain } from './brain.js';
import { levelGrid } from './motion/level-grid.js';
import type { LevelMotion } from './motion/motion.js';
import { PLAN_WINDOW, PlannedMotion, RELEASED_ACTIONS } from './motion/planned-motion.js';
import { standsOnItsCell } from './policy/places.js';
import { BridgedRadio } from './radio.js';
import { CommitFigures } from '../../domain/figures/commits.js';
import { SLOW_COMMIT_MS } from '../../storage-watch.js';
import { BRAIN_FIGURES_MS, brainFigures } from './figures.js';
import { Outbox } from '../../outbox.js';

const port = parentPort!;
// A spare thread has loaded every module above by now: what it waited for was its state. Its
// listener stays: with none on the parent port until the brain's own below, the thread could
// end while it awaits an unref'd port (the replication gate's).
const init = workerData === SPARE_THREAD
  ? await new Promise<BrainInit>((resolve) => port.on('message', (m: BeginBrain | ToBrain[]) => !Array.isArray(m) && resolve(m.init)))
  : (workerData as BrainInit);
const outbox = new Outbox<FromBrain>((batch) => port.postMessage(batch));
const post = (message: FromBrain) => outbox.post(message);

const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    // At once: the last words of a thread about to die must not wait for the end of its task.
    for (const line of chunk.toString().split('\n')) if (line) outbox.postNow({ type: 'log', line });
    done();
  },
});
const rootLogger = createLogger(init.config.log_level, sink);
const logger = rootLogger.child({ thread: 'brain' });

let settings: BrainSettings = init.settings;
const radio = new BridgedRadio(post);
const site = buildSite(init.layout);
const store = await openSharedStore(path.join(init.config.state_dir, 'db'), init.config.store_map_size_bytes);
// On a replicated pair, nothing is written before the gate is on: an unstamped batch would be
// missing from the log.
if (init.replication) await replicateThroughMainThread(store, init.replication);
const stopBridge = shareCommits(store, init.commits);
const commits = new CommitFigures(SLOW_COMMIT_MS);
const stopTiming = store.onCommitHeld(commits.heard);
const work = new OpenWork(store, site.levels.map((l) => l.id));
const places = new CarrierPlaces(store, site.levels);
const events = new Events(store, Date.now);
const bots = new Bots({ store, events, now: Date.now });
const flags = new SystemFlags({ store, now: Date.now });
const inventory = new Inventory({ store, site, now: Date.now, events });
const requests = new Requests({
  store, site, inventory, events, now: Date.now,
  // The main thread's inventory view follows this thread's commits through the bridge.
  refresh: () => undefined,
  externalPicking: () => settings.externalPicking,
  botLevel: (id) => bots.levelOf(id),
});
/** Whether a carrier really stands on a cell, for the planner's flags (policy/places.ts standsOnItsCell). */
function standsOn(levelId: number, x: number, y: number): boolean {
  const id = places.at(levelId, x, y);
  return id !== undefined && standsOnItsCell(work.jobsOn(levelId), id);
}

// One planner thread and motion per level with a radio line. The bots' figures are the
// site's one table (src/domain/site/motion-figures.ts, which the simulator plays too),
// shortened by WAREHOUSE_SIM_SPEED on simulated levels.
const motion = new Map<number, LevelMotion>();
if (init.links) {
  for (const level of site.levels) {
    const speed = level.serial_device === 'sim' ? init.config.sim_speed : 1;
    const stepMs = Math.round(PLAN_STEP_MS / speed);
    const lift = liftSteps(stepMs, BOT_MOTION.liftMs / speed);
    const occupied = (x: number, y: number) => standsOn(level.id, x, y);
    // A bot starts its next move without stopping, so the plan keeps pace with the bots.
    const planner = createLevelPlanner({
      grid: levelGrid(level, occupied), durations: { forward: 1, turn: 1, lift, lower: lift }, seed: level.id, maxReleasedActions: RELEASED_ACTIONS, window: PLAN_WINDOW,
    });
    motion.set(level.id, new PlannedMotion({
      level, planner, radio, logger: logger.child({ level_id: level.id }), moveMs: moveMs(BOT_MOTION.cellMs / speed), turnMs: Math.round(BOT_MOTION.turnMs / speed),
      faultClearMs: () => settings.faultClearSeconds * 1000,
      botIds: () => bots.onLevel(level.id),
      occupied,
    }));
  }
}
const brain = new Brain({
  site, requests, inventory, events, work, carriers: places, bots, flags, onStateChange: (listener) => onStateChange(store, listener),
  logger, motion, now: Date.now, monotonic: () => performance.now(),
  chargeBelow: () => settings.chargeBelow,
  onStatus: (status) => post({ type: 'status', status }),
  radio: init.links ? { send: (level, node, command) => radio.send(level, node, command), onBot: (listener) => radio.onBot(listener) } : undefined,
});

/**
 * The lines' state when this thread was made, updated by what the main thread says while the
 * brain starts, and told to the brain once it has: applied after, the state at spawn time
 * would overwrite newer news (a line up that came during the start read as still opening).
 */
const linesAtStart = new Map(init.lines.map((status) => [status.level_id, status]));
let started = false;

port.on('message', (batch: ToBrain[]) => {
  for (const message of batch) heard(message);
});

function heard(message: ToBrain): void {
  switch (message.type) {
    case 'settings':
      settings = message.settings;
      brain.wake();
      break;
    case 'log-level':
      setLevel(rootLogger, message.level);
      break;
    case 'bot':
      radio.heard(message.event);
      break;
    case 'line':
      if (started) brain.lineChanged(message.status);
      else linesAtStart.set(message.status.level_id, message.status);
      break;
    case 'call':
      void answer(message.id, message.method, message.args);
      break;
    case 'sent':
      radio.sent(message.id, message.outcome);
      break;
  }
}

/**
 * Stops in the order that leaves nothing native running: dispatch first, then each level's
 * planner thread (no callback after its close), then the store. The levels are closing before
 * the commands in flight end as not delivered, so that those stop no bot: stopped, every bot
 * with a move under way made its planner recompute its distances for the cells it held, and a
 * level with hundreds of them did not stop in time.
 */
async function stop(): Promise<void> {
  clearInterval(figuresTimer);
  stopTiming();
  await brain.stop();
  const closing = [...motion.values()].map((m) => m.close());
  radio.close();
  await Promise.all(closing);
  work.close();
  places.close();
  stopBridge();
  await store.close();
}

async function answer(id: number, method: string, args: unknown[]): Promise<void> {
  try {
    let result: unknown;
    if (method === 'stop') await stop();
    else if (method === 'chargeAllCandidates') result = brain.chargeAllCandidates(args[0] as boolean);
    outbox.postNow({ type: 'result', id, result });
    if (method === 'stop') port.close();
  } catch (err) {
    outbox.postNow({ type: 'result', id, error: (err as Error).message });
  }
}

/** Posts the figures /metrics shows of this thread. */
function postFigures(): void {
  const planners = function* (): Generator<[number, LevelPlannerStats]> {
    for (const [levelId, m] of motion) if (m.plannerStats) yield [levelId, m.plannerStats()];
  };
  post({ type: 'figures', figures: brainFigures({ passes: brain.passes, commits, work, planners }) });
}
const figuresTimer = setInterval(postFigures, BRAIN_FIGURES_MS);
figuresTimer.unref();

await brain.start();
started = true;
for (const status of linesAtStart.values()) brain.lineChanged(status);
post({ type: 'ready' });
postFigures();
