/**
 * Which bots the bot table has on each level, as the motion was last told. The table changes
 * from either thread (an onboarding, an offboarding trigger, DELETE /bot): a bot that left a
 * level leaves its motion (out of service), one that joined a level joins it.
 */
import type { Bots } from '../../domain/bots/bots.js';
import type { Logger } from '../../log/logger.js';
import type { LevelMotion } from './motion/motion.js';

export class BotsOnLevels {
  /** Level of each bot the table has on one. */
  private readonly onLevel = new Map<number, number>();

  constructor(private readonly deps: { bots: Bots; motion: ReadonlyMap<number, LevelMotion>; log: Logger }) {}

  /** Reads the table at the brain's start; the motion was made with these bots. */
  load(): void {
    for (const [id, level] of this.deps.bots.onLevels()) this.onLevel.set(id, level);
  }

  /** Ids of the bots the table has on a level. */
  on(levelId: number | null): number[] {
    return [...this.onLevel].filter(([, l]) => l === levelId).map(([id]) => id);
  }

  /** The table changed: the motion of each level follows it. */
  changed(): void {
    const now = this.deps.bots.onLevels();
    for (const [id, level] of this.onLevel) {
      if (now.get(id) === level) continue;
      this.deps.motion.get(level)?.removeBot(id);
      this.deps.log.info({ bot_id: id, level_id: level }, 'bot left the level: out of service');
    }
    for (const [id, level] of now) {
      if (this.onLevel.get(id) === level) continue;
      this.deps.motion.get(level)?.addBot(id);
      this.deps.log.info({ bot_id: id, level_id: level }, 'bot joined the level');
    }
    this.onLevel.clear();
    for (const [id, level] of now) this.onLevel.set(id, level);
  }
}
