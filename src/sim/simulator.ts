/**
 * The whole simulated site in one process: a SimLevel (gateway, pty, bots, balcony LED
 * controllers) for every level of the site whose `serial_device` is "sim", and one whose
 * gateway listens on a TCP port for every level whose device is `tcp://host:port` (the
 * simulator standing in for device servers on another host, both boxes of a pair connecting to
 * it). main.ts runs it as the simulator child process or alone; nothing here knows about IPC.
 * People's hands act through it (hands.ts): carriers and bots are site-wide, so an id in use on
 * one level is refused on another.
 */
import { randomInt } from 'node:crypto';
import { loadSite } from '../domain/site/load.js';
import type { Heading } from '../link/protocol/messages.js';
import { BOT_FIGURES, type BotFigures } from './figures.js';
import { SimLevel, type LevelSnapshot } from './gateway.js';
import { HandRefused, checkBotId, checkCarrierId } from './hands.js';
import { DEFAULT_KNOBS, mergeKnobs, type LinkKnobs } from './knobs.js';
import { Random } from './random.js';
import { startState, type BotRestart } from './start-state.js';
import { TcpLine, type TcpLineEvents } from './tcp-line.js';
import { parseTcpDevice } from '../link/tcp.js';
import { CarrierTags } from './world.js';

export interface SimulatorOptions {
  /** "demo" (the embedded demo site) or a site layout file path */
  site: string;
  /** makes sessions, batteries, jitter and noise reproducible; random when absent */
  seed?: number;
  /** initial knobs for every level */
  knobs?: Partial<LinkKnobs>;
  /** changes to the bot figures (tests shorten the slow ones) */
  figures?: Partial<BotFigures>;
  /** only these level ids (default: every level whose serial_device is "sim" or tcp://host:port) */
  levels?: number[];
  /** the address the tcp://host:port levels listen on (their port is the layout's); default 0.0.0.0 */
  bind?: string;
  /** bots to start in another state than the layout's start: a restart where the site stood (start-state.ts) */
  bots?: BotRestart[];
  /** bots of the layout that people had taken off their level: they start off it */
  absentBots?: number[];
}

export interface LevelDevice {
  level_id: number;
  /** the pty slave the controller opens as the level's serial device, or the layout's tcp://host:port */
  path: string;
}

export class Simulator {
  readonly seed: number;
  readonly levels = new Map<number, SimLevel>();
  /** per bot id, how often it has been put on a level since the simulator started */
  private readonly boots = new Map<number, number>();
  /** the battery of each bot taken off, which it still has when put on again */
  private readonly batteries = new Map<number, number>();

  /** `tcpEvents` hears the controllers' connections to a TCP level, for the log. */
  constructor(options: SimulatorOptions, tcpEvents?: (levelId: number) => TcpLineEvents) {
    const site = loadSite(options.site);
    this.seed = options.seed ?? randomInt(1, 2 ** 31);
    const rng = new Random(this.seed);
    const knobs = mergeKnobs(DEFAULT_KNOBS, options.knobs ?? {});
    const figures: BotFigures = { ...BOT_FIGURES, ...options.figures };
    const wanted = options.levels ?? site.levels.filter((l) => l.serial_device === 'sim' || parseTcpDevice(l.serial_device)).map((l) => l.id);
    const bind = options.bind ?? '0.0.0.0';
    for (const id of wanted) if (!site.level(id)) throw new RangeError(`site ${site.name} has no level ${id}`);
    const starts = startState(site, wanted, options.bots, options.absentBots);
    const tags = new CarrierTags();
    try {
      for (const id of wanted) {
        const start = starts.get(id)!;
        const device = site.level(id)!.serial_device;
        const tcp = parseTcpDevice(device);
        const openLine = tcp ? (onBytes: (bytes: Buffer) => void) => new TcpLine(device, bind, tcp.port, onBytes, tcpEvents?.(id)) : undefined;
        const setup = { carriers: site.layout.carriers, tags, bots: start.bots, absent: start.absent, openLine };
        this.levels.set(id, new SimLevel(site.level(id)!, setup, figures, knobs, rng.fork(id)));
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /** Resolves once every level's line can be reached (its TCP port listens); rejects with why one cannot. */
  async ready(): Promise<void> {
    await Promise.all([...this.levels.values()].map((l) => l.listening()));
  }

  devices(): LevelDevice[] {
    return [...this.levels.values()].map((l) => ({ level_id: l.id, path: l.path }));
  }

  /** Changes knobs on one level, or on all when `levelId` is undefined. */
  setKnobs(change: Partial<LinkKnobs>, levelId?: number): void {
    for (const l of this.pick(levelId)) l.setKnobs(change);
  }

  injectFault(levelId: number, bot: number, code: number, detail?: number, clearAfterMs?: number): void {
    const [level] = this.pick(levelId);
    level!.injectFault(bot, code, detail, clearAfterMs);
  }

  /** Unplugs a level's gateway for `downMs` (SimLevel.unplug); resolves with its new device path. */
  unplug(levelId: number, downMs: number): Promise<string> {
    const [level] = this.pick(levelId);
    return level!.unplug(downMs);
  }

  /** A person sets a carrier (a new id, or one no longer on any level) down on a free carrier place. */
  placeCarrier(levelId: number, carrierId: string, x: number, y: number): void {
    const level = this.level(levelId);
    checkCarrierId(carrierId);
    for (const l of this.levels.values()) {
      const cell = l.world.cellOf(carrierId);
      if (cell) throw new HandRefused(`carrier ${carrierId} already stands at (${cell.x}, ${cell.y}) on level ${l.id}`);
      const bot = [...l.bots.values()].find((b) => b.carrier === carrierId);
      if (bot) throw new HandRefused(`carrier ${carrierId} is held by bot ${bot.id} on level ${l.id}`);
    }
    level.placeCarrier(carrierId, x, y);
  }

  /** A person takes the carrier off a cell (SimLevel.removeCarrier); returns its id. */
  removeCarrier(levelId: number, x: number, y: number): string {
    return this.level(levelId).removeCarrier(x, y);
  }

  /** A person takes a bot off its level (SimLevel.takeBot). */
  takeBot(levelId: number, botId: number): void {
    const bot = this.level(levelId).takeBot(botId);
    // Kept in whole per mille, as a bot is put back with (its battery drains in fractions).
    this.batteries.set(botId, Math.round(bot.battery));
  }

  /**
   * A person puts a bot on a level; an id no level has is a new bot. It keeps the battery it
   * had when taken off unless `battery` says otherwise; a new bot's is drawn from the seed.
   */
  putBot(levelId: number, botId: number, x: number, y: number, heading: Heading, battery?: number): void {
    const level = this.level(levelId);
    checkBotId(botId);
    for (const l of this.levels.values()) {
      if (l.bots.has(botId)) throw new HandRefused(`bot ${botId} is already on level ${l.id}`);
    }
    const boot = (this.boots.get(botId) ?? 0) + 1;
    level.putBot({ id: botId, x, y, heading, battery: battery ?? this.batteries.get(botId) }, boot);
    this.boots.set(botId, boot);
    this.batteries.delete(botId);
    for (const l of this.levels.values()) if (l !== level) l.forgetAbsent(botId);
  }

  snapshot(): LevelSnapshot[] {
    return [...this.levels.values()].map((l) => l.snapshot());
  }

  close(): void {
    for (const l of this.levels.values()) l.close();
    this.levels.clear();
  }

  private level(levelId: number): SimLevel {
    const l = this.levels.get(levelId);
    if (!l) throw new HandRefused(`no simulated level ${String(levelId)}`);
    return l;
  }

  private pick(levelId: number | undefined): SimLevel[] {
    if (levelId === undefined) return [...this.levels.values()];
    const l = this.levels.get(levelId);
    if (!l) throw new RangeError(`no simulated level ${levelId}`);
    return [l];
  }
}
