/**
 * The daemon's side of every level's radio line: the serial device (or the simulator's pty
 * for levels whose layout says "sim"), the native link on it, and what the bots report. It
 * keeps the latest telemetry per bot for `GET /bots` and sends balcony LED sequences. Levels
 * are independent: a level whose device is away only takes its own bots offline.
 */
import type { Logger } from '../log/logger.js';
import { createLink, type Link, type LinkEvent } from '../native/link.js';
import { SerialTransport } from '../link/serial.js';
import type { LedStep } from '../link/protocol/messages.js';
import { startSimulator, type SimulatorProcess } from '../sim/process.js';
import type { Site } from '../domain/site/load.js';

/** Node address of a balcony's LED controller (PROTOCOL.md). */
export const LED_NODE_BASE = 0x1000;
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

interface LevelLine {
  levelId: number;
  path: string;
  link: Link;
  transport: SerialTransport;
}

export class SiteLinks {
  private readonly lines = new Map<number, LevelLine>();
  private readonly bots = new Map<number, BotState>();
  private readonly waiting = new Map<string, (ok: boolean) => void>();

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
  static async start(site: Site, sitePath: string, logger: Logger, now: () => number = Date.now): Promise<SiteLinks> {
    const simulated = site.levels.some((l) => l.serial_device === 'sim');
    const sim = simulated ? await startSimulator({ site: sitePath, onLog: (line) => logger.debug({ sim: line }, 'simulator') }) : undefined;
    if (sim) logger.info({ pid: sim.pid, devices: Object.fromEntries(sim.devices) }, 'simulator started');
    const links = new SiteLinks(site, logger, sim, now);
    for (const level of site.levels) {
      const path = level.serial_device === 'sim' ? sim!.devices.get(level.id) : level.serial_device;
      if (!path) throw new Error(`level ${level.id}: the simulator gave no device`);
      links.open(level.id, path);
    }
    return links;
  }

  /** Bots with their latest telemetry. */
  list(): BotState[] {
    return [...this.bots.values()];
  }

  /**
   * Sends a balcony's LED sequence to its controller, one channel per port; resolves true once
   * every channel acknowledged it, false when one refused or nothing came in time.
   */
  async publishLeds(balconyId: number, steps: LedStep[]): Promise<boolean> {
    const balcony = this.site.balconies.find((b) => b.id === balconyId);
    const line = balcony && this.lines.get(balcony.level_id);
    if (!balcony || !line) return false;
    const node = LED_NODE_BASE + balconyId;
    const outcomes = balcony.ports.map((_, channel) => {
      let id: number;
      try {
        id = line.link.send(node, { type: 'LED_SEQUENCE', channel, repeat: 0, steps });
      } catch (err) {
        // An LED controller the link has not heard from yet cannot be sent to.
        this.logger.warn({ err, balcony_id: balconyId }, 'LED sequence not sent');
        return Promise.resolve(false);
      }
      return new Promise<boolean>((resolve) => {
        const key = `${line.levelId}:${id}`;
        const timer = setTimeout(() => {
          this.waiting.delete(key);
          resolve(false);
        }, LED_ACK_TIMEOUT_MS);
        this.waiting.set(key, (ok) => {
          clearTimeout(timer);
          resolve(ok);
        });
      });
    });
    return (await Promise.all(outcomes)).every(Boolean);
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
    for (const resolve of this.waiting.values()) resolve(false);
    this.waiting.clear();
    await this.sim?.stop();
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
            Object.assign(bot, {
              x: m.x, y: m.y, heading: m.heading, battery_level: m.battery / 10, is_charging: m.charging, carrier_held: m.carrier,
              faults: m.faults, online: true, updated_at: this.now(),
            });
          }
          break;
        }
        case 'online':
        case 'offline': {
          const bot = this.bots.get(event.node);
          if (bot && bot.level_id === levelId) bot.online = event.kind === 'online';
          this.logger.info({ level_id: levelId, node: event.node, reason: event.reason }, event.kind === 'online' ? 'node online' : 'node offline');
          break;
        }
        case 'acked':
          this.waiting.get(`${levelId}:${event.id}`)?.(event.result === 'OK');
          this.waiting.delete(`${levelId}:${event.id}`);
          break;
        case 'failed':
          this.waiting.get(`${levelId}:${event.id}`)?.(false);
          this.waiting.delete(`${levelId}:${event.id}`);
          break;
      }
    }
  }
}
