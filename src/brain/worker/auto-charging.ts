/**
 * Automatic charging (docs/requests.md): every pass, the bots policy/charging.ts chooses (idle
 * bots under the battery threshold, and idle bots that may top up at a free charger) get a
 * RECHARGE request of their own. Also the bots POST /system/charge_all_bots would send.
 */
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { Requests } from '../../domain/requests/requests.js';
import type { Site } from '../../domain/site/load.js';
import type { Logger } from '../../log/logger.js';
import type { LevelMotion } from './motion/motion.js';
import { botsToCharge } from './policy/charging.js';

/** How long a bot whose charging request was refused waits before the brain asks again. */
const CHARGE_RETRY_MS = 30_000;

export interface AutoChargingDeps {
  site: Site;
  requests: Requests;
  work: OpenWork;
  motion: ReadonlyMap<number, LevelMotion>;
  chargeBelow: () => number;
  monotonic: () => number;
  log: Logger;
}

export class AutoCharging {
  /** Bots whose charging request was refused, and when to ask again. */
  private readonly refusedUntil = new Map<number, number>();

  constructor(private readonly deps: AutoChargingDeps) {}

  /** Sends the bots that should charge now. */
  async pass(): Promise<void> {
    const open = [...this.deps.work.requests()];
    const now = this.deps.monotonic();
    for (const [id, until] of this.refusedUntil) if (until <= now) this.refusedUntil.delete(id);
    const held = new Set(this.refusedUntil.keys());
    for (const m of this.deps.motion.values()) {
      const chargers = this.deps.site.level(m.levelId)!.chargers;
      for (const { bot, why } of botsToCharge(chargers, m.bots(), this.deps.work.jobsOn(m.levelId), open, this.deps.chargeBelow(), held)) {
        try {
          const { request } = await this.deps.requests.create({ type: 'RECHARGE', bot_id: bot.id });
          this.deps.log.info({ bot_id: bot.id, battery: bot.battery, request_id: request.id },
            why === 'low' ? 'battery low: sent to charge' : 'idle with a charger free: sent to top up its battery');
        } catch (err) {
          // Each refusal is an aborted request on record: asking again every pass would fill the store.
          this.refusedUntil.set(bot.id, this.deps.monotonic() + CHARGE_RETRY_MS);
          this.deps.log.warn({ err, bot_id: bot.id, retry_in_s: CHARGE_RETRY_MS / 1000 }, 'a bot should charge, but no charging request could be made');
        }
      }
    }
  }

  /** POST /system/charge_all_bots: the bots a RECHARGE request per bot would send (idle ones only unless `force`). */
  candidates(force: boolean): number[] {
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
}
