/**
 * The bot table's rules, in one place: the site's bots fill an empty table on the first start;
 * an ONBOARDING_BD puts a bot on its level; the person's OFFBOARDING_BD trigger takes it off
 * (the record stays, with no level: out of service, still listed); DELETE /bot removes records.
 * Dispatch gives work only to bots the table has on a level. Onboarding and offboarding run
 * inside the write that moves their job, so "in service" never depends on a message arriving.
 */
import type { Store } from '../../store/store.js';
import { EVENT } from '../events/catalogue.js';
import type { Events } from '../events/events.js';
import type { Site } from '../site/load.js';
import { botRecords } from './records.js';

export interface BotsDeps {
  store: Store;
  events: Events;
  now: () => number;
}

export class Bots {
  constructor(private readonly deps: BotsDeps) {}

  /** The level of a bot in the database: undefined when unknown, null while offboarded. */
  levelOf(id: number): number | null | undefined {
    return this.deps.store.collection(botRecords).get(id)?.level_id;
  }

  /** Ids of every bot in the database, offboarded ones too. */
  ids(): number[] {
    return [...this.deps.store.collection(botRecords).scan()].map((b) => b.id);
  }

  /** Ids of the bots the database has on a level. */
  onLevel(levelId: number): number[] {
    return [...this.deps.store.collection(botRecords).scan()].filter((b) => b.level_id === levelId).map((b) => b.id);
  }

  /** The level of every bot the database has on one, by bot id. */
  onLevels(): Map<number, number> {
    const out = new Map<number, number>();
    for (const b of this.deps.store.collection(botRecords).scan()) if (b.level_id !== null) out.set(b.id, b.level_id);
    return out;
  }

  /** ONBOARDING_BD: the bot joins its level in the database. Call inside a write. */
  onboardInWrite(botId: number, levelId: number, requestId: string): void {
    this.deps.store.collection(botRecords).put({ id: botId, level_id: levelId, updated_at: this.deps.now() });
    this.deps.events.record(EVENT.botOnboarded, `bot ${botId} onboarded on level ${levelId}`, { bot_id: String(botId), level_id: levelId, request_id: requestId });
  }

  /** OFFBOARDING_BD's trigger: a bot on a level leaves it in the database. Call inside a write. */
  offboardInWrite(botId: number, requestId: string): void {
    const bot = this.deps.store.collection(botRecords).get(botId);
    if (!bot || bot.level_id === null) return;
    this.deps.store.collection(botRecords).put({ ...bot, level_id: null, updated_at: this.deps.now() });
    this.deps.events.record(EVENT.botOffboarded, `bot ${bot.id} offboarded from level ${bot.level_id}`, { bot_id: String(bot.id), level_id: bot.level_id, request_id: requestId });
  }

  /** DELETE /bot: removes bots from the database in one write; returns how many it had. */
  async remove(ids: readonly number[]): Promise<number> {
    const { store, events } = this.deps;
    return store.write(() => {
      let n = 0;
      for (const id of ids) if (store.collection(botRecords).remove(id)) n++;
      if (n > 0) events.record(EVENT.botsDeleted, `${n} bot(s) removed from the database: ${ids.join(', ')}`);
      return n;
    });
  }
}

/** Writes the site's bots into an empty bot table (first start); returns whether it wrote. */
export async function seedBots(store: Store, site: Site, now: number): Promise<boolean> {
  return store.write(() => {
    if (store.collection(botRecords).count() > 0) return false;
    for (const level of site.levels) for (const bot of level.bots) store.collection(botRecords).put({ id: bot.id, level_id: level.id, updated_at: now });
    return true;
  });
}
