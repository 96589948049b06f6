/**
 * The system domain's durable facts: the flags that survive restarts of the brain and of the
 * daemon (whether the system is paused, the RFID writing mode), and, for opening the store,
 * the bot table beside them (its rules are src/domain/bots/bots.ts).
 */
import type { CollectionDef } from '../../store/collection.js';
import { botRecords } from '../bots/records.js';

export interface SystemFlag {
  key: 'paused' | 'rfid_writing_mode';
  value: boolean;
  updated_at: number;
}

export const systemFlags: CollectionDef<SystemFlag> = { name: 'system_flags', key: (f) => f.key };

export const SYSTEM_COLLECTIONS = [botRecords, systemFlags] as const;
