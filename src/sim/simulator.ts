/**
 * The whole simulated site in one process: a SimLevel (gateway, pty, bots, balcony LED
 * controllers) for every level of the site whose `serial_device` is "sim". main.ts runs it as
 * the simulator child process; nothing here knows about IPC.
 */
import { randomInt } from 'node:crypto';
import { loadSite } from '../domain/site/load.js';
import { BOT_FIGURES, type BotFigures } from './figures.js';
import { SimLevel, type LevelSnapshot } from './gateway.js';
import { DEFAULT_KNOBS, mergeKnobs, type LinkKnobs } from './knobs.js';
import { Random } from './random.js';

export interface SimulatorOptions {
  /** "demo" (the embedded demo site) or a site layout file path */
  site: string;
  /** makes sessions, batteries, jitter and noise reproducible; random when absent */
  seed?: number;
  /** initial knobs for every level */
  knobs?: Partial<LinkKnobs>;
  /** changes to the bot figures (tests shorten the slow ones) */
  figures?: Partial<BotFigures>;
  /** only these level ids (default: every level whose serial_device is "sim") */
  levels?: number[];
}

export interface LevelDevice {
  level_id: number;
  /** the pty slave the controller opens as the level's serial device */
  path: string;
}

export class Simulator {
  readonly seed: number;
  readonly levels = new Map<number, SimLevel>();

  constructor(options: SimulatorOptions) {
    const site = loadSite(options.site);
    this.seed = options.seed ?? randomInt(1, 2 ** 31);
    const rng = new Random(this.seed);
    const knobs = mergeKnobs(DEFAULT_KNOBS, options.knobs ?? {});
    const figures: BotFigures = { ...BOT_FIGURES, ...options.figures };
    const wanted = options.levels ?? site.levels.filter((l) => l.serial_device === 'sim').map((l) => l.id);
    try {
      for (const id of wanted) {
        const level = site.level(id);
        if (!level) throw new RangeError(`site ${site.name} has no level ${id}`);
        this.levels.set(id, new SimLevel(level, site.layout.carriers, figures, knobs, rng.fork(id)));
      }
    } catch (err) {
      this.close();
      throw err;
    }
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

  snapshot(): LevelSnapshot[] {
    return [...this.levels.values()].map((l) => l.snapshot());
  }

  close(): void {
    for (const l of this.levels.values()) l.close();
    this.levels.clear();
  }

  private pick(levelId: number | undefined): SimLevel[] {
    if (levelId === undefined) return [...this.levels.values()];
    const l = this.levels.get(levelId);
    if (!l) throw new RangeError(`no simulated level ${levelId}`);
    return [l];
  }
}
