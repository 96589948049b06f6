/**
 * The system flags (src/domain/system/records.ts), read and written here alone: PAUSE and
 * RESUME set `paused`, CHANGE_RFID_WRITING_MODE sets `rfid_writing_mode`. A flag never set is
 * false.
 */
import type { Store } from '../../store/store.js';
import { systemFlags, type SystemFlag } from './records.js';

export type FlagKey = SystemFlag['key'];

export interface SystemFlagsDeps {
  store: Store;
  now: () => number;
}

export class SystemFlags {
  constructor(private readonly deps: SystemFlagsDeps) {}

  /** A flag's value (false when never set). */
  value(key: FlagKey): boolean {
    return this.deps.store.collection(systemFlags).get(key)?.value ?? false;
  }

  /** Paused: bots get no new commands (spec, PAUSE). */
  paused(): boolean {
    return this.value('paused');
  }

  /** Sets a flag. Call inside a write. */
  setInWrite(key: FlagKey, value: boolean): void {
    this.deps.store.collection(systemFlags).put({ key, value, updated_at: this.deps.now() });
  }
}
