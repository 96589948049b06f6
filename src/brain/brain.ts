/**
 * The orchestration brain: it turns accepted requests into motion and back into finished
 * jobs. Everything it knows is rebuilt from the store (open jobs, bots in the database, the
 * pause flag) and from bot telemetry, so `restart()` (POST /restart_brain, cancel_all) and a
 * daemon restart after `kill -9` resume where the durable state says. It runs the control
 * jobs itself (PAUSE, RESUME, ONBOARDING_BD, CHANGE_RFID_WRITING_MODE) and one dispatcher per
 * level for the rest.
 */
import type { Logger } from '../log/logger.js';
import { EVENT } from '../domain/events/catalogue.js';
import type { Events } from '../domain/events/events.js';
import type { Inventory } from '../domain/inventory/inventory.js';
import { isFinalJob, type JobRecord } from '../domain/requests/records.js';
import type { Requests } from '../domain/requests/requests.js';
import type { Site } from '../domain/site/load.js';
import { botRecords, flag, systemFlags, type SystemFlag } from '../domain/system/records.js';
import type { StorageStatus } from '../domain/system/control.js';
import type { Store } from '../store/store.js';
import { botsToCharge } from './charging.js';
import { LevelDispatcher } from './dispatch.js';
import type { LevelMotion } from './motion.js';
import { BalconyLights, type SendCommand } from './lights.js';
import type { BotEvent } from './links.js';
import { carriers } from '../domain/inventory/records.js';

/** The radio lines as the brain uses them (BridgedRadio in the worker). */
export interface BrainRadio {
  send: SendCommand;
  onBot(listener: (event: BotEvent) => void): () => void;
}

/** A level whose bots have all been silent this long (with the radio running) puts the storage in ERROR. */
const SILENT_LEVEL_MS = 10_000;

export interface BrainDeps {
  store: Store;
  site: Site;
  requests: Requests;
  inventory: Inventory;
  events: Events;
  logger: Logger;
  /** The motion of each level whose radio line runs; absent levels have no bots to dispatch. */
  motion: ReadonlyMap<number, LevelMotion>;
  chargeBelow: () => number;
  now: () => number;
  /** Milliseconds between dispatch passes when nothing else wakes the brain. */
  periodMs?: number;
  /** Hears every change of the storage status. */
  onStatus?: (status: StorageStatus) => void;
  /** The radio lines, when they run: bot events become events, balcony LEDs follow the work. */
  radio?: BrainRadio;
}

export class Brain {
  private status: StorageStatus = 'OFF';
  private dispatchers = new Map<number, LevelDispatcher>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  private stopChange: (() => void) | undefined;
  /** Requests changed since the last pass (an offboarding may have ended). */
  private changed = new Set<string>();
  private stopRadio: (() => void) | undefined;
  private lights: BalconyLights | undefined;
  private startedAt = 0;
  private readonly log: Logger;

  constructor(private readonly deps: BrainDeps) {
    this.log = deps.logger.child({ component: 'brain' });
  }

  /** Rebuilds from the store and starts dispatching. */
  async start(): Promise<void> {
    await this.setStatus('STARTING_UP', 'brain starting');
    this.dispatchers = new Map(this.deps.site.levels.map((l) => [l.id, new LevelDispatcher({
      store: this.deps.store, site: this.deps.site, requests: this.deps.requests, inventory: this.deps.inventory, logger: this.log,
      paused: () => this.paused(), chargeBelow: this.deps.chargeBelow,
    }, l.id, this.deps.motion.get(l.id))]));
    for (const m of this.deps.motion.values()) m.setPaused(this.paused());
    this.stopChange = this.deps.requests.onChange((ids) => {
      for (const id of ids) this.changed.add(id);
      this.wake();
    });
    const radio = this.deps.radio;
    if (radio) {
      this.lights = new BalconyLights(this.deps.site, radio.send);
      this.stopRadio = radio.onBot((event) => this.onBot(event));
    }
    this.startedAt = this.deps.now();
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
    this.stopChange?.();
    this.stopRadio?.();
    await this.passing;
    for (const d of this.dispatchers.values()) d.stop();
    this.status = 'OFF';
    this.deps.onStatus?.('OFF');
  }

  storageStatus(): StorageStatus {
    return this.status;
  }

  paused(): boolean {
    return flag(this.deps.store, 'paused');
  }

  /** Runs a dispatch pass soon; passes never overlap. */
  wake(): void {
    if (!this.timer) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((err: unknown) => this.log.error({ err }, 'dispatch pass failed'))
      .finally(() => {
        this.passing = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async pass(): Promise<void> {
    await this.controlJobs();
    for (const d of this.dispatchers.values()) await d.pass();
    await this.offboarded();
    await this.chargeBots();
    this.showLights();
    if (this.status !== 'SHUTTING_DOWN' && this.status !== 'STARTING_UP') await this.setStatus(...this.derivedStatus());
  }

  /** The storage status from the state of things (spec 3.3; docs/requests.md). */
  private derivedStatus(): [StorageStatus, string] {
    if (this.paused()) return ['PAUSED', 'paused: bots get no new commands'];
    const rfid = this.deps.requests.openRequests().find((r) => r.type === 'RFID_MAINTENANCE' && r.status === 'EXECUTING');
    if (rfid) return ['MAINTENANCE', `RFID maintenance ${rfid.id} runs on level ${rfid.level_id}`];
    if (this.deps.radio && this.deps.now() - this.startedAt > SILENT_LEVEL_MS) {
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
          record(EVENT.botFault, `bot ${event.bot.id}: fault 0x${event.fault.code.toString(16).padStart(4, '0')} (${event.fault.severity}) at ${event.fault.x},${event.fault.y}`);
        } else this.log.info({ bot_id: event.bot.id, fault: event.fault }, 'bot fault report');
        break;
      case 'offline':
        record(EVENT.botOffline, `bot ${event.bot.id} lost on the radio line (${event.reason})`);
        break;
      case 'online':
        record(EVENT.botOnline, `bot ${event.bot.id} answers on the radio line (${event.reason})`);
        break;
      case 'telemetry':
        break;
    }
  }

  /** Idle bots under the battery threshold, and idle bots that may top up at a free charger, get a RECHARGE request of their own. */
  private async chargeBots(): Promise<void> {
    const open = this.deps.requests.openRequests();
    for (const m of this.deps.motion.values()) {
      const chargers = this.deps.site.level(m.levelId)!.chargers;
      for (const { bot, why } of botsToCharge(chargers, m.bots(), this.deps.requests.openJobs(m.levelId), open, this.deps.chargeBelow())) {
        try {
          const { request } = await this.deps.requests.create({ type: 'RECHARGE', bot_id: bot.id });
          this.log.info({ bot_id: bot.id, battery: bot.battery, request_id: request.id },
            why === 'low' ? 'battery low: sent to charge' : 'idle with a charger free: sent to top up its battery');
        } catch (err) {
          this.log.warn({ err, bot_id: bot.id }, 'a bot should charge, but no charging request could be made');
        }
      }
    }
  }

  /** Balcony LEDs follow the person jobs that wait at each port. */
  private showLights(): void {
    if (!this.lights) return;
    const waiting: { job: JobRecord; x: number; y: number }[] = [];
    for (const level of this.deps.site.levels) {
      for (const job of this.deps.requests.openJobs(level.id)) {
        if (job.status !== 'EXECUTING' || job.details.waiting_for !== 'trigger' || !job.carrier_id) continue;
        const c = this.deps.store.collection(carriers).get(job.carrier_id);
        if (c) waiting.push({ job, x: c.x, y: c.y });
      }
    }
    this.lights.update(waiting);
  }

  /** Jobs the brain does at once. */
  private async controlJobs(): Promise<void> {
    const jobs = [0, ...this.deps.site.levels.map((l) => l.id)]
      .flatMap((l) => this.deps.requests.openJobs(l))
      .filter((j) => j.status === 'ACCEPTED' && (j.type === 'PAUSE' || j.type === 'RESUME' || j.type === 'ONBOARDING_BD' || j.type === 'CHANGE_RFID_WRITING_MODE'));
    for (const job of jobs) await this.control(job);
  }

  private async control(job: JobRecord): Promise<void> {
    const now = this.deps.now();
    await this.deps.requests.write(() => {
      const running = this.deps.requests.moveJob(job, 'EXECUTING');
      switch (job.type) {
        case 'PAUSE':
        case 'RESUME':
          this.setFlag('paused', job.type === 'PAUSE', now);
          break;
        case 'CHANGE_RFID_WRITING_MODE':
          this.setFlag('rfid_writing_mode', job.details['writing_mode'] === true, now);
          break;
        case 'ONBOARDING_BD':
          this.deps.store.collection(botRecords).put({ id: job.bot_id!, level_id: job.level_id, updated_at: now });
          this.deps.events.record(EVENT.botOnboarded, `bot ${job.bot_id} onboarded on level ${job.level_id}`, { bot_id: String(job.bot_id), level_id: job.level_id, request_id: job.request_id });
          break;
      }
      this.deps.requests.moveJob(running, 'SUCCEEDED');
      this.deps.requests.settle(job.request_id);
    });
    if (job.type === 'PAUSE' || job.type === 'RESUME') {
      const paused = job.type === 'PAUSE';
      for (const m of this.deps.motion.values()) m.setPaused(paused);
      await this.setStatus(paused ? 'PAUSED' : 'RUNNING', paused ? 'paused: bots get no new commands' : 'resumed');
    }
    if (job.type === 'ONBOARDING_BD') {
      const balcony = this.deps.site.balconies.find((b) => b.id === job.balcony_id);
      const port = balcony?.ports[0];
      if (port) this.deps.motion.get(job.level_id!)?.addBot(job.bot_id!, port.x, port.y);
    }
  }

  /** An OFFBOARDING_BD a person confirmed takes its bot out of the level. */
  private async offboarded(): Promise<void> {
    const ids = this.changed;
    this.changed = new Set();
    for (const id of ids) {
      const job = this.deps.requests.jobsOf(id).find((j) => j.type === 'OFFBOARDING_BD' && j.status === 'SUCCEEDED');
      const bot = job && this.deps.store.collection(botRecords).get(job.bot_id!);
      if (!job || !bot || bot.level_id === null) continue;
      const level = bot.level_id;
      await this.deps.store.write(() => {
        this.deps.store.collection(botRecords).put({ ...bot, level_id: null, updated_at: this.deps.now() });
        this.deps.events.record(EVENT.botOffboarded, `bot ${bot.id} offboarded from level ${level}`, { bot_id: String(bot.id), level_id: level, request_id: id });
      });
      this.deps.motion.get(level)?.removeBot(bot.id);
    }
  }

  /** POST /system/charge_all_bots: a RECHARGE request per bot on a level (idle ones only unless `force`). */
  chargeAllCandidates(force: boolean): number[] {
    const out: number[] = [];
    for (const [levelId, m] of this.deps.motion) {
      for (const b of m.bots()) {
        if (b.charging || !b.online) continue;
        if (!force && !b.idle) continue;
        if (this.deps.requests.openJobs(levelId).some((j) => j.bot_id === b.id && !isFinalJob(j.status))) continue;
        out.push(b.id);
      }
    }
    return out;
  }

  private setFlag(key: SystemFlag['key'], value: boolean, now: number): void {
    this.deps.store.collection(systemFlags).put({ key, value, updated_at: now });
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
