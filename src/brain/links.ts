/**
 * The daemon's side of every level's radio line: the serial device (or the simulator's pty
 * for levels whose layout says "sim"), the native link on it, and what the bots report. It
 * keeps the latest telemetry per bot for `GET /bots` and sends balcony LED sequences. Levels
 * are independent: a level whose device is away only takes its own bots offline.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log/logger.js';
import { createLink, type Link, type LinkEvent } from '../native/link.js';
import { SerialTransport } from '../link/serial.js';
import type { Fault, LedStep, Result, Telemetry } from '../link/protocol/messages.js';
import type { Command } from '../native/link.js';
import { startSimulator, type SimulatorProcess } from '../sim/process.js';
import { BOT_FIGURES, type BotFigures } from '../sim/figures.js';
import { CARRIER_PLACES, type Site } from '../domain/site/load.js';
import { LED_NODE_BASE } from './lights.js';

/** How long an LED sequence may take to be acknowledged before it counts as not published. */
const LED_ACK_TIMEOUT_MS = 3000;

/** What `GET /bots` shows of a bot (spec 2.8), plus where it is and whether it answers. */
export interface BotState {
  id: number;
  level_id: number;
  battery_level: number;
  is_charging: boolean;
  /** The bot holds a carrier (the carrier's id is the inventory's business). */
  carrier_held: boolean;
  online: boolean;
  x: number;
  y: number;
  heading: string;
  faults: number;
  updated_at: number | null;
}

/** What the brain hears of its bots. */
export type BotEvent =
  | { kind: 'telemetry'; bot: BotState; telemetry: Telemetry }
  | { kind: 'fault'; bot: BotState; fault: Fault }
  | { kind: 'online' | 'offline'; bot: BotState; reason: string };

/** How a command ended: acknowledged with a result, or not delivered. */
export type CommandOutcome = { delivered: true; result: Result; detail: number } | { delivered: false; reason: string };

/** Where a carrier stands now (the store's record). */
export interface CarrierPlace {
  id: string;
  level_id: number;
  x: number;
  y: number;
}

/**
 * Writes the site layout with the carriers where they stand now, for the simulator; returns its
 * path. A carrier the store places on a bot (stopped on a highway with it) is left out: the
 * simulated bots start afresh unloaded, so it is for a person to set it down and onboard it
 * again, as on a real site (the brain's job says so).
 */
function simulatorLayout(site: Site, places: readonly CarrierPlace[], stateDir: string, logger: Logger): string {
  const carriers = [];
  for (const c of places) {
    if (CARRIER_PLACES.has(site.kindAt(c.level_id, c.x, c.y))) carriers.push({ id: c.id, level_id: c.level_id, x: c.x, y: c.y });
    else logger.warn({ carrier_id: c.id, level_id: c.level_id, x: c.x, y: c.y }, 'carrier on a bot when the daemon stopped: left out of the simulated site');
  }
  const file = path.join(stateDir, 'simulated-site.json');
  writeFileSync(file, JSON.stringify({ ...site.layout, carriers }), { mode: 0o600 });
  return file;
}

interface LevelLine {
  levelId: number;
  path: string;
  link: Link;
  transport: SerialTransport;
}

export class SiteLinks {
  private readonly lines = new Map<number, LevelLine>();
  private readonly bots = new Map<number, BotState>();
  private readonly waiting = new Map<string, (outcome: CommandOutcome) => void>();
  private readonly listeners = new Set<(event: BotEvent) => void>();

  private constructor(
    private readonly site: Site,
    private readonly logger: Logger,
    private readonly sim: SimulatorProcess | undefined,
    private readonly now: () => number,
  ) {
    for (const level of site.levels) {
      for (const bot of level.bots) {
        this.bots.set(bot.id, {
          id: bot.id, level_id: level.id, battery_level: 0, is_charging: false, carrier_held: false, online: false,
          x: bot.start.x, y: bot.start.y, heading: bot.heading, faults: 0, updated_at: null,
        });
      }
    }
  }

  /** Starts the simulator when a level needs it, then a transport and a link per level. */
  static async start(
    site: Site, sitePath: string, logger: Logger,
    options: { speed?: number; battery?: number; now?: () => number; carriers?: readonly CarrierPlace[]; stateDir?: string } = {},
  ): Promise<SiteLinks> {
    const simulated = site.levels.some((l) => l.serial_device === 'sim');
    const speed = options.speed ?? 1;
    // Faster than real time: the bots' mechanical figures shrink; the protocol's timing does not.
    const figures: Partial<BotFigures> = {
      cellMs: BOT_FIGURES.cellMs / speed, turnMs: BOT_FIGURES.turnMs / speed, liftMs: BOT_FIGURES.liftMs / speed,
      idleDrainPerS: BOT_FIGURES.idleDrainPerS * speed, moveDrainPerS: BOT_FIGURES.moveDrainPerS * speed,
      liftDrainPerS: BOT_FIGURES.liftDrainPerS * speed, chargePerS: BOT_FIGURES.chargePerS * speed,
      ...(options.battery === undefined ? {} : { batteryStartMin: options.battery, batteryStartMax: options.battery }),
    };
    // The simulated site starts where the store says the carriers are (they moved since the
    // layout was written), as a real site would after a restart.
    const simSite = options.carriers && options.stateDir ? simulatorLayout(site, options.carriers, options.stateDir, logger) : sitePath;
    const sim = simulated ? await startSimulator({ site: simSite, onLog: (line) => logger.debug({ sim: line }, 'simulator'), figures }) : undefined;
    if (sim) logger.info({ pid: sim.pid, devices: Object.fromEntries(sim.devices) }, 'simulator started');
    const links = new SiteLinks(site, logger, sim, options.now ?? Date.now);
    for (const level of site.levels) {
      const path = level.serial_device === 'sim' ? sim!.devices.get(level.id) : level.serial_device;
      if (!path) throw new Error(`level ${level.id}: the simulator gave no device`);
      links.open(level.id, path);
    }
    return links;
  }

  /** The simulator of the 'sim' levels, if any (tests inject faults through it). */
  get simulator(): SimulatorProcess | undefined {
    return this.sim;
  }

  /** Bots with their latest telemetry; `online` is the link's session state. */
  list(): BotState[] {
    return [...this.bots.values()];
  }

  /**
   * Sends a balcony's LED sequence to its controller, one channel per port; resolves true once
   * every channel acknowledged it, false when one refused or nothing came in time.
   */
  async publishLeds(balconyId: number, steps: LedStep[]): Promise<boolean> {
    const balcony = this.site.balconies.find((b) => b.id === balconyId);
    if (!balcony || !this.lines.has(balcony.level_id)) return false;
    const node = LED_NODE_BASE + balconyId;
    const outcomes = balcony.ports.map((_, channel) => this.send(balcony.level_id, node, { type: 'LED_SEQUENCE', channel, repeat: 0, steps }, LED_ACK_TIMEOUT_MS));
    return (await Promise.all(outcomes)).every((o) => o.delivered && o.result === 'OK');
  }

  /**
   * Sends a command to a node of a level; resolves with its acknowledgement, or why it was not
   * delivered (`timeoutMs` bounds the wait beyond the link's own retransmissions).
   */
  send(levelId: number, node: number, command: Command, timeoutMs = 10_000): Promise<CommandOutcome> {
    const line = this.lines.get(levelId);
    if (!line) return Promise.resolve({ delivered: false, reason: `level ${levelId} has no radio line` });
    let id: number;
    try {
      id = line.link.send(node, command);
    } catch (err) {
      // A node the link has not heard from yet cannot be sent to.
      return Promise.resolve({ delivered: false, reason: (err as Error).message });
    }
    return new Promise<CommandOutcome>((resolve) => {
      const key = `${levelId}:${id}`;
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        resolve({ delivered: false, reason: `no acknowledgement within ${timeoutMs} ms` });
      }, timeoutMs);
      this.waiting.set(key, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
    });
  }

  /** Hears telemetry, faults and link changes of bots; returns the function that stops listening. */
  onBot(listener: (event: BotEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Link counters per level, for diagnostics. */
  stats(): Record<number, unknown> {
    const out: Record<number, unknown> = {};
    for (const [id, line] of this.lines) out[id] = { path: line.path, link: line.link.stats(), transport: line.transport.stats };
    return out;
  }

  /** Closes every line and stops the simulator. */
  async close(): Promise<void> {
    for (const line of this.lines.values()) {
      line.link.close();
      await line.transport.close();
    }
    this.lines.clear();
    for (const resolve of this.waiting.values()) resolve({ delivered: false, reason: 'the controller is stopping' });
    this.waiting.clear();
    await this.sim?.stop();
  }

  private tell(event: BotEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private open(levelId: number, path: string): void {
    const log = this.logger.child({ level_id: levelId, device: path });
    // The transport reads only after start(), so the link exists before the first byte arrives.
    const transport: SerialTransport = new SerialTransport({ path, onData: (bytes) => link.receive(bytes), log });
    const link = createLink({ write: (bytes) => void transport.write(Buffer.from(bytes)), onEvent: (batch) => this.onEvents(levelId, batch) });
    transport.start();
    this.lines.set(levelId, { levelId, path, link, transport });
  }

  private onEvents(levelId: number, batch: LinkEvent[]): void {
    for (const event of batch) {
      switch (event.kind) {
        case 'message': {
          const bot = this.bots.get(event.node);
          if (!bot || bot.level_id !== levelId) break;
          const m = event.message;
          if (m.type === 'TELEMETRY') {
            // `online` is left to the link's online/offline events: a bot that lost the link
            // keeps sending telemetry (with LINK_LOST) and is offline until it is welcomed again.
            Object.assign(bot, {
              x: m.x, y: m.y, heading: m.heading, battery_level: m.battery / 10, is_charging: m.charging, carrier_held: m.carrier,
              faults: m.faults, updated_at: this.now(),
            });
            this.tell({ kind: 'telemetry', bot, telemetry: m });
          } else if (m.type === 'FAULT') {
            this.tell({ kind: 'fault', bot, fault: m });
          }
          break;
        }
        case 'online':
        case 'offline': {
          const bot = this.bots.get(event.node);
          if (bot && bot.level_id === levelId) {
            bot.online = event.kind === 'online';
            this.tell({ kind: event.kind, bot, reason: event.reason });
          }
          this.logger.info({ level_id: levelId, node: event.node, reason: event.reason }, event.kind === 'online' ? 'node online' : 'node offline');
          break;
        }
        case 'acked':
          this.waiting.get(`${levelId}:${event.id}`)?.({ delivered: true, result: event.result, detail: event.detail });
          this.waiting.delete(`${levelId}:${event.id}`);
          break;
        case 'failed':
          this.waiting.get(`${levelId}:${event.id}`)?.({ delivered: false, reason: event.reason });
          this.waiting.delete(`${levelId}:${event.id}`);
          break;
      }
    }
  }
}
