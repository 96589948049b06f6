/**
 * The bot table: which bots are in the database and on which level. It survives restarts of
 * the brain and of the daemon; src/domain/bots/bots.ts holds the rules of every write to it.
 */
import type { CollectionDef } from '../../store/collection.js';

export interface BotRecord {
  id: number;
  /** Level the bot works on, or null while offboarded. */
  level_id: number | null;
  updated_at: number;
}

export const botRecords: CollectionDef<BotRecord> = { name: 'bots', key: (b) => b.id };
