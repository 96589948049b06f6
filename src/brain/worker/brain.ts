/**
 * The orchestration brain, in its worker thread: it turns accepted requests into motion and
 * back into finished jobs. What it knows is rebuilt from the store (open work, carriers, the bot
 * table, the pause flag) and from bot telemetry, so a restart (POST /restart_brain, cancel_all)
 * or a daemon restart after `kill -9` resumes where the durable state says. Each pass runs the
 * control jobs, then each level's dispatch (snapshot -> policy -> runner), then automatic
 * charging and the balcony lights. It also hears the radio lines: a line that comes back gets
 * a recovery request (reconnect, refresh the level, clear the highway).
 */
import type { Logger } from '../../log/logger.js';
import { EVENT } from '../../domain/events/catalogue.js';
import type { Events } from '../../domain/events/events.js';
import type { CarrierPlaces } from '../../domain/inventory/carrier-places.js';
import type { Inventory } from '../../domain/inventory/inventory.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import { CARRIER_JOBS, type JobRecord } from '../../domain/requests/records.js';
import type { Requests } from '../../domain/requests/requests.js';
import { CARRIER_PLACES, type Site, type SiteLevel } from '../../domain/site/load.js';
import type { Bots } from '../../domain/bots/bots.js';
import type { StorageStatus } from '../../domain/system/control.js';
import type { SystemFlags } from '../../domain/system/flags.js';
import type { StateChange } from '../../domain/system/shared-store.js';
import type { BotEvent, LineStatus } from '../../lines/events.js';
import { FAULT_BY_NAME } from '../../link/protocol/faults.js';
import { LevelRunner } from './level/runner.js';
import { takeSnapshot, type LineState } from './level/snapshot.js';
import { BalconyLights, type SendCommand } from './lights.js';
import type { LevelMotion } from './motion/motion.js';
import { botsToCharge } from './policy/charging.js';
import { controlStep, isControlJob } from './policy/control.js';
import { decide } from './policy/dispatch.js';

/** The radio lines as the brain uses them (BridgedRadio in the worker). */
export interface BrainRadio {
  send: SendCommand;
  onBot(listener: (event: BotEvent) => void): () => void;
}

/** How often a bot holding a carrier the store does not place under it is asked which one it is. */
const RECONCILE_MS = 3000;

/** A level whose bots have all been silent this long (with the radio running) puts the storage in ERROR. */
const SILENT_LEVEL_MS = 10_000;
/** The longest pause the pacing of passes puts between two (see wake). */
const MAX_PASS_GAP_MS = 100;

/** How long a bot whose charging request was refused waits before the brain asks again. */
const CHARGE_RETRY_MS = 30_000;

export interface BrainDeps {
  site: Site;
  /** The bot table. */
  bots: Bots;
  /** The system flags (paused, RFID writing mode). */
  flags: SystemFlags;
  /** Hears commits, of either thread, that changed the bot table, a flag or where a carrier stands. */
  onStateChange: (listener: (change: StateChange) => void) => () => void;
  requests: Requests;
  inventory: Inventory;
  events: Events;
  work: OpenWork;
  carriers: CarrierPlaces;
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
  private status: StorageStatus = 'OFF';
  private readonly levels = new Map<number, Level>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** No pass before this (performance.now()), and the timer that runs the one asked for meanwhile. */
  private nextPassAt = 0;
  private paced: NodeJS.Timeout | undefined;
  /** Bots whose charging request was refused, and when to ask again. */
  private readonly chargeRefusedUntil = new Map<number, number>();
  private readonly stops: (() => void)[] = [];
  private lights: BalconyLights | undefined;
  private startedAt = 0;
  /** What the lines said last, by level (none yet: unknown). */
  private readonly lines = new Map<number, LineStatus>();
  /** When each bot's held carrier was last read (reconcile). */
  private readonly reconciled = new Map<number, number>();
  /** Bots of each level in the database as the motion was last told. */
  private readonly onLevel = new Map<number, number>();
  private readonly log: Logger;

  constructor(private readonly deps: BrainDeps) {
    this.log = deps.logger.child({ component: 'brain' });
  }

  /** Rebuilds from the store and starts dispatching. */
  async start(): Promise<void> {
    await this.setStatus('STARTING_UP', 'brain starting');
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
    for (const [id, level] of this.deps.bots.onLevels()) this.onLevel.set(id, level);
    for (const m of this.deps.motion.values()) m.setPaused(this.paused());
    this.stops.push(
      this.deps.work.onChange(() => this.wake()),
      this.deps.onStateChange((change) => {
        if (change.bots) this.botsChanged();
        this.wake();
      }),
    );
    const radio = this.deps.radio;
    if (radio) {
      this.lights = new BalconyLights(this.deps.site, radio.send);
      this.stops.push(radio.onBot((event) => this.onBot(event)));
    }
    this.startedAt = this.deps.monotonic();
    this.timer = setInterval(() => this.wake(), this.deps.periodMs ?? 250);
    this.timer.unref();
    await this.setStatus(this.paused() ? 'PAUSED' : 'RUNNING', 'brain started');
    this.wake();
  }

  /** Stops dispatching; motion in flight is left to finish its current segment. */
  async stop(): Promise<void> {
    await this.setStatus('SHUTTING_DOWN', 'brain stopping');
    clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.paced);
    this.paced = undefined;
    for (const stop of this.stops.splice(0)) stop();
    await this.passing;
    for (const l of this.levels.values()) l.runner?.stop();
    this.status = 'OFF';
    this.deps.onStatus?.('OFF');
  }

  storageStatus(): StorageStatus {
    return this.status;
  }

  paused(): boolean {
    return this.deps.flags.paused();
  }

  /**
   * Runs a dispatch pass soon; passes never overlap, and one starts no sooner after the last
   * than twice as long as that one took: under a stream of new work (hundreds of requests a
   * second) passes ran back to back and took half a core from the API's thread on a 2-core box
   * (issue 22), where a pass every few tens of milliseconds moves the bots as soon.
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
    if (before?.up === false) void this.recover(status.level_id, true);
    else if (!before) void this.recover(status.level_id, false, true);
    this.wake();
  }

  /** POST /system/charge_all_bots: the bots a RECHARGE request per bot would send (idle ones only unless `force`). */
  chargeAllCandidates(force: boolean): number[] {
    const out: number[] = [];
    for (const [levelId, m] of this.deps.motion) {
      for (const b of m.bots()) {
        if (b.charging || !b.online) continue;
        if (!force && !b.idle) continue;
        if (this.deps.work.jobsOn(levelId).some((j) => j.bot_id === b.id)) continue;
        out.push(b.id);
      }
    }
    return out;
  }

  private snapshot(l: Level) {
    return takeSnapshot({
      level: l.site, work: this.deps.work, carriers: this.deps.carriers, findJob: (id) => this.deps.requests.findJob(id),
      bots: () => l.motion?.bots() ?? null, unplaced: () => l.motion?.unplaced() ?? [], line: () => this.lineState(l.site.id), paused: () => this.paused(),
      chargeBelow: this.deps.chargeBelow, now: this.deps.now,
    }, l.runner ?? { running: new Set(), unreachable: () => new Set(), missing: () => false });
  }

  private lineState(levelId: number): LineState {
    const s = this.lines.get(levelId);
    return !s || s.up ? { up: true } : { up: false, reason: `${s.reason ?? 'no answer'} (device ${s.device})` };
  }

  private async pass(): Promise<void> {
    await this.controlJobs();
    for (const l of this.levels.values()) {
      const s = this.snapshot(l);
      const decisions = decide(s);
      if (l.runner) await l.runner.apply(decisions);
      else await this.explainOnly(decisions);
    }
    await this.chargeBots();
    for (const levelId of this.deps.motion.keys()) {
      this.reconcile(levelId);
      await this.recover(levelId, false);
    }
    this.showLights();
    if (this.status !== 'SHUTTING_DOWN' && this.status !== 'STARTING_UP') await this.setStatus(...this.derivedStatus());
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

  /** The storage status from the state of things (spec 3.3; docs/requests.md). */
  private derivedStatus(): [StorageStatus, string] {
    if (this.paused()) return ['PAUSED', 'paused: bots get no new commands'];
    for (const r of this.deps.work.requests()) {
      if (r.type === 'RFID_MAINTENANCE' && r.status === 'EXECUTING') return ['MAINTENANCE', `RFID maintenance ${r.id} runs on level ${r.level_id}`];
    }
    if (this.deps.radio && this.deps.monotonic() - this.startedAt > SILENT_LEVEL_MS) {
      for (const [levelId, m] of this.deps.motion) {
        const bots = m.bots();
        if (bots.length > 0 && !bots.some((b) => b.online)) return ['ERROR', `no bot of level ${levelId} answers on its radio line`];
      }
    }
    return ['RUNNING', 'dispatching'];
  }

  /** Bot faults and link changes become events with the bot's id. */
  private onBot(event: BotEvent): void {
    const context = { bot_id: String(event.bot.id), level_id: event.bot.level_id };
    const record = (kind: (typeof EVENT)[keyof typeof EVENT], text: string) =>
      void this.deps.events.emit(kind, text, context).catch((err: unknown) => this.log.error({ err }, 'could not record a bot event'));
    switch (event.kind) {
      case 'fault':
        if (event.fault.fault_state === 'RAISED' && (event.fault.severity === 'ERROR' || event.fault.severity === 'FATAL')) {
          record(EVENT.botFault, `bot ${event.bot.id}: fault 0x${event.fault.code.toString(16).padStart(4, '0')} (${event.fault.severity}) at ${event.fault.x},${event.fault.y}${faultDetail(event.fault)}`);
        } else this.log.info({ bot_id: event.bot.id, fault: event.fault }, 'bot fault report');
        break;
      case 'offline': {
        // A bot lost with its whole line says so: the line's own 0x7009 is the news, this one is its echo.
        const line = this.lines.get(event.bot.level_id);
        const withLine = line && !line.up ? `; the radio line of level ${line.level_id} is down (event 0x7009)` : '';
        record(EVENT.botOffline, `bot ${event.bot.id} lost on the radio line (${event.reason})${withLine}`);
        break;
      }
      case 'online':
        record(EVENT.botOnline, `bot ${event.bot.id} answers on the radio line (${event.reason})`);
        this.wake();
        break;
      case 'telemetry':
        break;
    }
  }

  /**
   * The bot table changed (an offboarding trigger, an onboarding, DELETE /bot, from either
   * thread): bots that left a level leave its motion, bots that joined one join it.
   */
  private botsChanged(): void {
    const now = this.deps.bots.onLevels();
    for (const [id, level] of this.onLevel) {
      if (now.get(id) === level) continue;
      this.deps.motion.get(level)?.removeBot(id);
      this.log.info({ bot_id: id, level_id: level }, 'bot left the level: out of service');
    }
    for (const [id, level] of now) {
      if (this.onLevel.get(id) === level) continue;
      this.deps.motion.get(level)?.addBot(id);
      this.log.info({ bot_id: id, level_id: level }, 'bot joined the level');
    }
    this.onLevel.clear();
    for (const [id, level] of now) this.onLevel.set(id, level);
  }

  /**
   * Idle bots under the battery threshold, and idle bots that may top up at a free charger, get
   * a RECHARGE request of their own.
   */
  private async chargeBots(): Promise<void> {
    const open = [...this.deps.work.requests()];
    const now = this.deps.monotonic();
    for (const [id, until] of this.chargeRefusedUntil) if (until <= now) this.chargeRefusedUntil.delete(id);
    const held = new Set(this.chargeRefusedUntil.keys());
    for (const m of this.deps.motion.values()) {
      const chargers = this.deps.site.level(m.levelId)!.chargers;
      for (const { bot, why } of botsToCharge(chargers, m.bots(), this.deps.work.jobsOn(m.levelId), open, this.deps.chargeBelow(), held)) {
        try {
          const { request } = await this.deps.requests.create({ type: 'RECHARGE', bot_id: bot.id });
          this.log.info({ bot_id: bot.id, battery: bot.battery, request_id: request.id },
            why === 'low' ? 'battery low: sent to charge' : 'idle with a charger free: sent to top up its battery');
        } catch (err) {
          // Each refusal is an aborted request on record: asking again every pass would fill the store.
          this.chargeRefusedUntil.set(bot.id, this.deps.monotonic() + CHARGE_RETRY_MS);
          this.log.warn({ err, bot_id: bot.id, retry_in_s: CHARGE_RETRY_MS / 1000 }, 'a bot should charge, but no charging request could be made');
        }
      }
    }
  }

  /** Balcony LEDs follow the person jobs that wait at each port. */
  private showLights(): void {
    if (!this.lights) return;
    const waiting: { job: JobRecord; x: number; y: number }[] = [];
    for (const level of this.deps.site.levels) {
      for (const job of this.deps.work.jobsOn(level.id)) {
        if (job.status !== 'EXECUTING' || job.wait?.waiting_for !== 'trigger' || !job.carrier_id) continue;
        const c = this.deps.carriers.of(job.carrier_id);
        if (c) waiting.push({ job, x: c.x, y: c.y });
      }
    }
    this.lights.update(waiting);
  }

  /** The brain's own jobs: done at once, or when what they wait for has come. */
  private async controlJobs(): Promise<void> {
    for (const level of [0, ...this.deps.site.levels.map((l) => l.id)]) {
      for (const job of this.deps.work.jobsOn(level)) {
        // The facts below cost a list of bots each: gathered for the brain's own jobs only.
        if (job.status !== 'ACCEPTED' || !isControlJob(job)) continue;
        const step = controlStep(job, {
          now: this.deps.now(), bots: job.level_id === null ? [] : this.deps.motion.get(job.level_id)?.bots() ?? [],
          botsOnLevel: [...this.onLevel].filter(([, l]) => l === job.level_id).map(([id]) => id),
        });
        if (step.kind === 'not_mine') continue;
        if (step.kind === 'wait') await this.deps.requests.write(() => this.deps.requests.explain(job, step.wait));
        else await this.control(job, step.note);
      }
    }
  }

  private async control(job: JobRecord, note: string | undefined): Promise<void> {
    const motion = job.level_id === null ? undefined : this.deps.motion.get(job.level_id);
    await this.deps.requests.write(() => {
      const current = this.deps.requests.findJob(job.id);
      if (!current || current.status !== 'ACCEPTED') return;
      const running = this.deps.requests.moveJob(current, 'EXECUTING', { wait: null });
      switch (job.type) {
        case 'PAUSE':
        case 'RESUME':
          this.deps.flags.setInWrite('paused', job.type === 'PAUSE');
          break;
        case 'CHANGE_RFID_WRITING_MODE':
          this.deps.flags.setInWrite('rfid_writing_mode', job.progress.kind === 'writing_mode' && job.progress.writing_mode);
          break;
        case 'ONBOARDING_BD':
          this.deps.bots.onboardInWrite(job.bot_id!, job.level_id!, job.request_id);
          break;
      }
      this.deps.requests.moveJob(running, 'SUCCEEDED', note ? { ended_because: note } : {}, note);
      this.deps.requests.settle(job.request_id);
    });
    switch (job.type) {
      case 'PAUSE':
      case 'RESUME': {
        const paused = job.type === 'PAUSE';
        for (const m of this.deps.motion.values()) m.setPaused(paused);
        await this.setStatus(paused ? 'PAUSED' : 'RUNNING', paused ? 'paused: bots get no new commands' : 'resumed');
        break;
      }
      case 'OFFBOARDING_BC':
        motion?.park(job.bot_id!);
        break;
      case 'CONNECT_TO_BOTS':
      case 'REFRESH_LEVEL':
        motion?.refresh();
        break;
      case 'UNCHARGE_ALL':
        for (const m of this.deps.motion.values()) for (const b of m.bots()) if (b.charging) await m.stopCharging(b.id);
        break;
    }
  }

  /**
   * A request of the brain's own for a level (docs/requests.md): after a line outage it
   * reconnects and refreshes the level; either way it takes home the carriers left on bots with
   * no work. `scan`: look at every carrier of the level (the first news of a line, an outage),
   * not only those under bots. Nothing is made while one is open for the level.
   */
  private async recover(levelId: number, reconnect: boolean, scan = reconnect): Promise<void> {
    const level = this.deps.site.level(levelId);
    if (!level) return;
    for (const r of this.deps.work.requests()) if (r.type === 'RESUME' && r.level_id === levelId) return;
    const stranded = this.stranded(level, scan);
    if (!reconnect && stranded.length === 0) return;
    try {
      const { request } = await this.deps.requests.create({ type: 'RECOVERY', level_id: levelId, reconnect, stranded });
      this.log.info({ level_id: levelId, request_id: request.id, stranded },
        reconnect ? 'radio line back: reconnecting the level' : 'carriers left on bots with no work: taking them home');
    } catch (err) {
      this.log.error({ err, level_id: levelId }, 'could not make the recovery request');
    }
  }

  /**
   * Carriers on a bot with no open work: where the store places a carrier outside any place for
   * carriers (a bot stopped with it on the highway), or under an idle bot holding its lift up
   * that no job drives. Only the cells of bots, unless `scan`.
   */
  private stranded(level: SiteLevel, scan: boolean): string[] {
    const held = (this.deps.motion.get(level.id)?.bots() ?? []).filter((b) => b.lifted && b.idle && b.online);
    // Asked every pass: most passes no bot holds its lift up idle, and then no job need be read.
    if (held.length === 0 && !scan) return [];
    const worked = new Set<string>();
    const driving = new Set<number>();
    for (const j of this.deps.work.allJobs()) {
      if (j.carrier_id && CARRIER_JOBS.has(j.type)) worked.add(j.carrier_id);
      if (j.bot_id !== null && (j.status === 'EXECUTING' || j.status === 'CANCELLING')) driving.add(j.bot_id);
    }
    const out = new Set<string>();
    for (const b of held) {
      if (driving.has(b.id)) continue;
      const id = this.deps.carriers.at(level.id, b.x, b.y);
      if (id && !worked.has(id)) out.add(id);
    }
    if (scan) {
      for (const c of this.deps.carriers.all()) {
        if (c.level_id === level.id && !CARRIER_PLACES.has(level.kindAt(c.x, c.y)) && !worked.has(c.id)) out.add(c.id);
      }
    }
    return [...out];
  }

  /**
   * A bot holding its lift up with no job driving it, where the store places no carrier, holds
   * one the store places elsewhere (a failure the store did not see the end of): its carrier's
   * tag says which, and the store follows the carrier to the bot, where its own work, or
   * CLEAR_AUTOBAHN, picks it up. Asked once per bot per RECONCILE_MS.
   */
  private reconcile(levelId: number): void {
    const radio = this.deps.radio;
    const motion = this.deps.motion.get(levelId);
    if (!radio || !motion) return;
    const now = this.deps.monotonic();
    const held = motion.bots().filter((b) => b.lifted && b.idle && b.online && !b.stuck && this.deps.carriers.at(levelId, b.x, b.y) === undefined
      && (this.reconciled.get(b.id) ?? -Infinity) <= now - RECONCILE_MS);
    // Asked every pass: only a bot that may hold an unknown carrier makes the open jobs worth reading.
    if (held.length === 0) return;
    const driving = new Set<number>();
    for (const j of this.deps.work.allJobs()) if (j.bot_id !== null && (j.status === 'EXECUTING' || j.status === 'CANCELLING')) driving.add(j.bot_id);
    for (const b of held) {
      if (driving.has(b.id)) continue;
      this.reconciled.set(b.id, now);
      void radio.send(levelId, b.id, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 32 }).then(async (outcome) => {
        const id = outcome.delivered && outcome.result === 'OK' && outcome.data ? Buffer.from(outcome.data).toString('utf8').replace(/\0+$/, '') : '';
        const known = id ? this.deps.carriers.of(id) : undefined;
        if (!known) return this.log.warn({ bot_id: b.id, level_id: levelId, tag: id, outcome }, 'bot holds a carrier the store does not know: a person must take it off');
        const at = motion.lastSeen(b.id);
        if (!at?.lifted) return;
        this.log.warn({ bot_id: b.id, carrier_id: id, store: known, at }, 'bot holds a carrier the store placed elsewhere: the store follows it');
        await this.deps.requests.write(() => this.deps.inventory.placeCarrierInWrite(id, levelId, at.x, at.y));
      }).catch((err: unknown) => this.log.error({ err, bot_id: b.id }, 'could not reconcile a held carrier'));
    }
  }

  private async setStatus(status: StorageStatus, why: string): Promise<void> {
    if (this.status === status) return;
    const before = this.status;
    this.status = status;
    this.deps.onStatus?.(status);
    this.log.info({ storage_status: status, before }, why);
    await this.deps.events.emit(EVENT.storageStatus, `storage status ${before} -> ${status}: ${why}`).catch((err: unknown) => this.log.error({ err }, 'could not record the storage status'));
  }
}

/** OBSTACLE's detail is the cell the bot could not enter (x | y << 16): a technician looks there first. */
function faultDetail(fault: { code: number; detail: number }): string {
  if (fault.code !== FAULT_BY_NAME.get('OBSTACLE')!.code) return '';
  return `; blocked entering ${fault.detail & 0xffff},${fault.detail >>> 16}`;
}
