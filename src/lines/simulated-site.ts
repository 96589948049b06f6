/**
 * The simulated site of the levels whose layout says "sim", supervised on the main thread like
 * a gateway that may be unplugged: the simulator child process is started where the store and
 * the bots' last telemetry say things stand, and when it ends on its own it is started again
 * (with a growing pause while it keeps dying young), its levels' lines re-pointed at its new
 * ptys, and an error event says so. Tests and technicians reach the simulator through this
 * facade whichever process is current.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CARRIER_PLACES, type Site } from '../domain/site/load.js';
import type { Logger } from '../log/logger.js';
import { startSimulator, type SimulatorProcess, type StartSimulatorOptions } from '../sim/process.js';
import { BOT_FIGURES, type BotFigures } from '../sim/figures.js';
import type { LevelSnapshot } from '../sim/gateway.js';
import type { LinkKnobs } from '../sim/knobs.js';
import type { BotState } from './events.js';

/** Where a carrier stands now (the store's record). */
export interface CarrierPlace {
  id: string;
  level_id: number;
  x: number;
  y: number;
}

export interface SimulatedSiteOptions {
  site: Site;
  stateDir: string;
  logger: Logger;
  /** Levels run this many times faster than real time (benchmarks). */
  speed?: number;
  /** Battery of every simulated bot at its first start, per mille. */
  battery?: number;
  /** Where the store has every carrier now. */
  carriers(): CarrierPlace[];
  /** The bots as their telemetry last put them (empty before the first start). */
  bots(): BotState[];
  /** Bots that people took off their level (offboarded): the simulator keeps them off. */
  absentBots(): number[];
  /** The level's simulated gateway is on this pty now. */
  onDevice(levelId: number, path: string): Promise<void> | void;
  /** The simulator ended on its own (`code`) and was started again: for the event log. */
  onRestart(code: number | string, attempt: number): void;
}

/** A simulator that lived this long before it ended is restarted at once. */
const YOUNG_MS = 60_000;

export class SimulatedSite {
  private current: SimulatorProcess | undefined;
  private stopping = false;
  private restartMs = 1000;
  private startedAt = 0;
  private attempt = 0;

  private constructor(private readonly o: SimulatedSiteOptions) {}

  /** Starts the simulator and hands each simulated level's pty to `onDevice`. */
  static async start(options: SimulatedSiteOptions): Promise<SimulatedSite> {
    const sim = new SimulatedSite(options);
    await sim.launch(true);
    return sim;
  }

  /** The simulator process running now, if any. */
  get process(): SimulatorProcess | undefined {
    return this.current;
  }

  get pid(): number {
    return this.live().pid;
  }

  setKnobs(knobs: Partial<LinkKnobs>, levelId?: number): Promise<void> {
    return this.live().setKnobs(knobs, levelId);
  }

  injectFault(levelId: number, bot: number, code: number, options?: { detail?: number; clearAfterMs?: number }): Promise<void> {
    return this.live().injectFault(levelId, bot, code, options);
  }

  snapshot(): Promise<LevelSnapshot[]> {
    return this.live().snapshot();
  }

  /** Pulls a level's gateway cable for `downMs`; the line follows it to its new pty. */
  async unplug(levelId: number, downMs: number): Promise<string> {
    const device = await this.live().unplug(levelId, downMs);
    await this.o.onDevice(levelId, device);
    return device;
  }

  /** A person puts a carrier on a cell (a balcony position). */
  placeCarrier(levelId: number, carrierId: string, x: number, y: number): Promise<void> {
    return this.live().placeCarrier(levelId, carrierId, x, y);
  }

  /** A person takes a bot off its level (offboarding). */
  takeBot(levelId: number, botId: number): Promise<void> {
    return this.live().takeBot(levelId, botId);
  }

  /** A person puts a bot on a level (onboarding). */
  putBot(levelId: number, botId: number, x: number, y: number, heading: 'N' | 'E' | 'S' | 'W'): Promise<void> {
    return this.live().putBot(levelId, botId, x, y, heading);
  }

  /** Stops the simulator for good. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.stop();
  }

  private live(): SimulatorProcess {
    if (!this.current) throw new Error('the simulator is not running (it is being started again)');
    return this.current;
  }

  private async launch(first: boolean): Promise<void> {
    const options = this.options(first);
    const sim = await startSimulator(options);
    this.current = sim;
    this.startedAt = performance.now();
    this.o.logger.info({ pid: sim.pid, devices: Object.fromEntries(sim.devices) }, first ? 'simulator started' : 'simulator started again');
    void sim.exited.then((code) => this.ended(sim, code));
    for (const [levelId, device] of sim.devices) await this.o.onDevice(levelId, device);
  }

  private ended(sim: SimulatorProcess, code: number | string): void {
    if (this.current !== sim || this.stopping) return;
    this.current = undefined;
    this.restartMs = performance.now() - this.startedAt < YOUNG_MS ? Math.min(this.restartMs * 2, 30_000) : 1000;
    this.attempt++;
    this.o.logger.error({ pid: sim.pid, code, retry_in_ms: this.restartMs }, 'the simulator ended unexpectedly; starting it again');
    setTimeout(() => {
      if (this.stopping) return;
      this.launch(false).then(
        () => this.o.onRestart(code, this.attempt),
        (err: unknown) => {
          this.o.logger.error({ err }, 'the simulator could not be started again; trying later');
          this.ended(sim, code);
        },
      );
    }, this.restartMs).unref();
  }

  /**
   * The simulator's options: the layout with the carriers where the store has them (a carrier on
   * a bot travels with that bot) and, after the first start, the bots where their telemetry last
   * put them, as a real site stands after its gateways come back.
   */
  private options(first: boolean): StartSimulatorOptions {
    const { site, logger } = this.o;
    const speed = this.o.speed ?? 1;
    // Faster than real time: the bots' mechanical figures shrink; the protocol's timing does not.
    const figures: Partial<BotFigures> = {
      cellMs: BOT_FIGURES.cellMs / speed, turnMs: BOT_FIGURES.turnMs / speed, liftMs: BOT_FIGURES.liftMs / speed,
      idleDrainPerS: BOT_FIGURES.idleDrainPerS * speed, moveDrainPerS: BOT_FIGURES.moveDrainPerS * speed,
      liftDrainPerS: BOT_FIGURES.liftDrainPerS * speed, chargePerS: BOT_FIGURES.chargePerS * speed,
      ...(this.o.battery === undefined ? {} : { batteryStartMin: this.o.battery, batteryStartMax: this.o.battery }),
    };
    const onBots = new Map<string, string>();
    const carriers = [];
    for (const c of this.o.carriers()) {
      if (CARRIER_PLACES.has(site.kindAt(c.level_id, c.x, c.y))) carriers.push({ id: c.id, level_id: c.level_id, x: c.x, y: c.y });
      else onBots.set(`${c.level_id}:${c.x}:${c.y}`, c.id);
    }
    const bots = first ? [] : this.o.bots().filter((b) => b.updated_at !== null).map((b) => {
      const carrier = b.carrier_held ? onBots.get(`${b.level_id}:${b.x}:${b.y}`) : undefined;
      if (carrier) onBots.delete(`${b.level_id}:${b.x}:${b.y}`);
      return { id: b.id, level_id: b.level_id, x: b.x, y: b.y, heading: b.heading as 'N' | 'E' | 'S' | 'W', battery_permille: Math.round(b.battery_level * 10), ...(carrier ? { carrier } : {}) };
    });
    for (const [cell, id] of onBots) logger.warn({ carrier_id: id, cell }, 'carrier on a bot that does not report: left out of the simulated site');
    const file = path.join(this.o.stateDir, 'simulated-site.json');
    writeFileSync(file, JSON.stringify({ ...site.layout, carriers }), { mode: 0o600 });
    // Only the "sim" levels: a tcp:// level's gateway is a device server, not ours to simulate.
    const levels = site.levels.filter((l) => l.serial_device === 'sim').map((l) => l.id);
    return { site: file, levels, figures, bots, absentBots: this.o.absentBots(), onLog: (line) => logger.debug({ sim: line }, 'simulator') };
  }
}
