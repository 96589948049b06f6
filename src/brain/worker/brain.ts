/**
 * The orchestration brain, in its worker thread: it turns accepted requests into motion and
 * back into finished jobs. What it knows is rebuilt from the store (open work, carriers, the bot
 * table, the pause flag) and from bot telemetry, so a restart (POST /restart_brain, cancel_all)
 * or a daemon restart after `kill -9` resumes where the durable state says. This file is the
 * pass loop: each pass runs the control jobs, then each level's dispatch (snapshot -> policy ->
 * runner), then automatic charging, the levels' recovery, the balcony lights and the storage
 * status, each in a module of its own. It also hears the radio lines: a line that comes back
 * gets a recovery request (reconnect, refresh the level, clear the highway).
 */
import type { Logger } from '../../log/logger.js';
import type { Bots } from '../../domain/bots/bots.js';
import type { Events } from '../../domain/events/events.js';
import type { CarrierPlaces } from '../../domain/inventory/carrier-places.js';
import type { Inventory } from '../../domain/inventory/inventory.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { Requests } from '../../domain/requests/requests.js';
import type { Site, SiteLevel } from '../../domain/site/load.js';
import type { StorageStatus } from '../../domain/system/control.js';
import type { SystemFlags } from '../../domain/system/flags.js';
import type { StateChange } from '../../domain/system/shared-store.js';
import type { LineStatus } from '../../lines/events.js';
import { AutoCharging } from './auto-charging.js';
import { recordBotEvent, type BotEventsDeps } from './bot-events.js';
import { BotsOnLevels } from './bots-on-levels.js';
import { ControlJobs } from './control-jobs.js';
import { LevelRunner } from './level/runner.js';
import { takeSnapshot, type LineState } from './level/snapshot.js';
import { LevelRecovery } from './level-recovery.js';
import { BalconyLights } from './lights.js';
import type { LevelMotion } from './motion/motion.js';
import { decide } from './policy/dispatch.js';
import type { BrainRadio } from './radio.js';
import { StorageStatusKeeper } from './storage-status.js';
import { Buckets, SECONDS_BOUNDS } from '../../domain/figures/buckets.js';

/** The longest pause the pacing of passes puts between two (see wake). */
const MAX_PASS_GAP_MS = 100;

export interface BrainDeps {
  site: Site;
  requests: Requests;
  inventory: Inventory;
  events: Events;
  work: OpenWork;
  carriers: CarrierPlaces;
  /** The bot table. */
  bots: Bots;
  /** The system flags (paused, RFID writing mode). */
  flags: SystemFlags;
  /** Hears commits, of either thread, that changed the bot table, a flag or where a carrier stands. */
  onStateChange: (listener: (change: StateChange) => void) => () => void;
  logger: Logger;
  /** The motion of each level whose radio line runs; absent levels have no bots to dispatch. */
  motion: ReadonlyMap<number, LevelMotion>;
  chargeBelow: () => number;
  /** The wall clock: instants the store keeps and the policy compares with them. */
  now: () => number;
  /** The monotonic clock: the brain's own waits, which live in memory and must not stretch when the wall clock steps back. */
  monotonic: () => number;
  /** Milliseconds between dispatch passes when nothing else wakes the brain. */
  periodMs?: number;
  /** Hears every change of the storage status. */
  onStatus?: (status: StorageStatus) => void;
  /** The radio lines, when they run: bot events become events, balcony LEDs follow the work. */
  radio?: BrainRadio;
}

interface Level {
  site: SiteLevel;
  motion: LevelMotion | undefined;
  runner: LevelRunner | undefined;
}

export class Brain {
  /** How long each dispatch pass took, in seconds (for /metrics). */
  readonly passes = new Buckets(SECONDS_BOUNDS);
  private readonly levels = new Map<number, Level>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** No pass before this (performance.now()), and the timer that runs the one asked for meanwhile. */
  private nextPassAt = 0;
  private paced: NodeJS.Timeout | undefined;
  private readonly stops: (() => void)[] = [];
  private lights: BalconyLights | undefined;
  /** What the lines said last, by level (none yet: unknown). */
  private readonly lines = new Map<number, LineStatus>();
  private readonly log: Logger;
  private readonly status: StorageStatusKeeper;
  private readonly botsOnLevels: BotsOnLevels;
  private readonly control: ControlJobs;
  private readonly charging: AutoCharging;
  private readonly recovery: LevelRecovery;
  private readonly botEvents: BotEventsDeps;

  constructor(private readonly deps: BrainDeps) {
    const log = (this.log = deps.logger.child({ component: 'brain' }));
    const { site, requests, work, motion, monotonic } = deps;
    this.status = new StorageStatusKeeper({ flags: deps.flags, work, motion, events: deps.events, radio: deps.radio !== undefined, monotonic, log, onStatus: deps.onStatus });
    this.botsOnLevels = new BotsOnLevels({ bots: deps.bots, motion, log });
    this.control = new ControlJobs({
      site, requests, work, motion, bots: deps.bots, flags: deps.flags, botsOnLevels: this.botsOnLevels, now: deps.now,
      setStatus: (status, why) => this.status.set(status, why),
    });
    this.charging = new AutoCharging({ site, requests, work, motion, chargeBelow: deps.chargeBelow, monotonic, log });
    this.recovery = new LevelRecovery({ site, requests, inventory: deps.inventory, work, carriers: deps.carriers, motion, send: deps.radio?.send, monotonic, log });
    this.botEvents = { events: deps.events, lines: this.lines, log };
  }

  /** Rebuilds from the store and starts dispatching. */
  async start(): Promise<void> {
    await this.status.set('STARTING_UP', 'brain starting');
    for (const level of this.deps.site.levels) {
      const motion = this.deps.motion.get(level.id);
      const entry: Level = { site: level, motion, runner: undefined };
      if (motion) {
        entry.runner = new LevelRunner({
          level, requests: this.deps.requests, inventory: this.deps.inventory, carriers: this.deps.carriers, motion, logger: this.log, now: this.deps.now,
          snapshot: () => this.snapshot(entry),
        });
      }
      this.levels.set(level.id, entry);
    }
    this.botsOnLevels.load();
    const paused = this.deps.flags.paused();
    for (const m of this.deps.motion.values()) m.setPaused(paused);
    this.stops.push(
      this.deps.work.onChange(() => this.wake()),
      this.deps.onStateChange((change) => {
        if (change.bots) this.botsOnLevels.changed();
        this.wake();
      }),
    );
    const radio = this.deps.radio;
    if (radio) {
      this.lights = new BalconyLights(this.deps.site, radio.send);
      this.stops.push(radio.onBot((event) => {
        recordBotEvent(this.botEvents, event);
        if (event.kind === 'online') this.wake();
      }));
    }
    this.status.started();
    this.timer = setInterval(() => this.wake(), this.deps.periodMs ?? 250);
    this.timer.unref();
    await this.status.set(this.deps.flags.paused() ? 'PAUSED' : 'RUNNING', 'brain started');
    this.wake();
  }

  /** Stops dispatching; motion in flight is left to finish its current segment. */
  async stop(): Promise<void> {
    await this.status.set('SHUTTING_DOWN', 'brain stopping');
    clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.paced);
    this.paced = undefined;
    for (const stop of this.stops.splice(0)) stop();
    await this.passing;
    for (const l of this.levels.values()) l.runner?.stop();
    this.status.off();
  }

  /**
   * Runs a dispatch pass soon; passes never overlap, and one starts no sooner after the last
   * than twice as long as that one took: under a stream of new work (hundreds of requests a
   * second) passes ran back to back and took half a core from the API's thread on a 2-core box,
   * where a pass every few tens of milliseconds moves the bots as soon.
   */
  wake(): void {
    if (!this.timer) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    const wait = this.nextPassAt - performance.now();
    if (wait > 0) {
      this.paced ??= setTimeout(() => {
        this.paced = undefined;
        this.wake();
      }, wait).unref();
      return;
    }
    const started = performance.now();
    this.passing = this.pass()
      .catch((err: unknown) => this.log.error({ err }, 'dispatch pass failed'))
      .finally(() => {
        const ended = performance.now();
        this.passes.observe((ended - started) / 1000);
        this.nextPassAt = ended + Math.min(2 * (ended - started), MAX_PASS_GAP_MS);
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          // A pass woken by its own commits runs on the next turn, not in this chain of
          // microtasks: chained passes never let the event loop deliver the other thread's
          // commit notices, so a pass that kept failing on work it could not see spun forever.
          setImmediate(() => this.wake());
        }
      });
  }

  /** A level's radio line changed: after an outage its bots get a recovery request; the first news of a line looks for carriers left on the highway. */
  lineChanged(status: LineStatus): void {
    const before = this.lines.get(status.level_id);
    this.lines.set(status.level_id, status);
    if (!status.up) return this.wake();
    if (before?.up === false) void this.recovery.recover(status.level_id, true);
    else if (!before) void this.recovery.recover(status.level_id, false, true);
    this.wake();
  }

  /** POST /system/charge_all_bots: the bots a RECHARGE request per bot would send (idle ones only unless `force`). */
  chargeAllCandidates(force: boolean): number[] {
    return this.charging.candidates(force);
  }

  private snapshot(l: Level) {
    return takeSnapshot({
      level: l.site, work: this.deps.work, carriers: this.deps.carriers, findJob: (id) => this.deps.requests.findJob(id),
      bots: () => l.motion?.bots() ?? null, unplaced: () => l.motion?.unplaced() ?? [], line: () => this.lineState(l.site.id), paused: () => this.deps.flags.paused(),
      chargeBelow: this.deps.chargeBelow, now: this.deps.now,
    }, l.runner ?? { running: new Set(), unreachable: () => new Set(), missing: () => false });
  }

  private lineState(levelId: number): LineState {
    const s = this.lines.get(levelId);
    return !s || s.up ? { up: true } : { up: false, reason: `${s.reason ?? 'no answer'} (device ${s.device})` };
  }

  private async pass(): Promise<void> {
    await this.control.run();
    for (const l of this.levels.values()) {
      const s = this.snapshot(l);
      const decisions = decide(s);
      if (l.runner) await l.runner.apply(decisions);
      else await this.explainOnly(decisions);
    }
    await this.charging.pass();
    for (const levelId of this.deps.motion.keys()) {
      this.recovery.reconcile(levelId);
      await this.recovery.recover(levelId, false);
    }
    this.lights?.showWork(this.deps.work, this.deps.carriers);
    await this.status.follow();
  }

  /** A level without motion (its line off): its jobs only say why they wait. */
  private async explainOnly(decisions: ReturnType<typeof decide>): Promise<void> {
    const waits = decisions.filter((d) => d.kind === 'wait' || d.kind === 'await_person');
    if (waits.length === 0) return;
    await this.deps.requests.write(() => {
      for (const d of waits) {
        const current = this.deps.requests.findJob(d.job.id);
        if (!current || current.status !== d.job.status) continue;
        if (d.kind === 'wait') this.deps.requests.explain(current, d.wait);
        else this.deps.requests.moveJob(current, 'EXECUTING', { balcony_id: d.balcony, wait: d.wait });
      }
    });
  }
}
