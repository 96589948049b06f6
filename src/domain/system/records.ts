/**
 * The brain's durable facts beyond requests and jobs: which bots are in the database and on
 * which level (onboarding and offboarding change it; DELETE /bot removes them), and whether
 * the system is paused. Both survive restarts of the brain and of the daemon.
 */
import type { CollectionDef } from '../../store/collection.js';
import type { Store } from '../../store/store.js';
import type { Site } from '../site/load.js';

export interface BotRecord {
  id: number;
  /** Level the bot works on, or null while offboarded. */
  level_id: number | null;
  updated_at: number;
}

export interface SystemFlag {
  key: 'paused' | 'rfid_writing_mode';
  value: boolean;
  updated_at: number;
}

export const botRecords: CollectionDef<BotRecord> = { name: 'bots', key: (b) => b.id };
export const systemFlags: CollectionDef<SystemFlag> = { name: 'system_flags', key: (f) => f.key };

export const SYSTEM_COLLECTIONS = [botRecords, systemFlags] as const;

/** Writes the site's bots into an empty bot table (first start); returns whether it wrote. */
export async function seedBots(store: Store, site: Site, now: number): Promise<boolean> {
  return store.write(() => {
    if (store.collection(botRecords).count() > 0) return false;
    for (const level of site.levels) for (const bot of level.bots) store.collection(botRecords).put({ id: bot.id, level_id: level.id, updated_at: now });
    return true;
  });
}

/** A system flag's value (false when never set). */
export function flag(store: Store, key: SystemFlag['key']): boolean {
  return store.collection(systemFlags).get(key)?.value ?? false;
}
