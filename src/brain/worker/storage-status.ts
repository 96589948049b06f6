/**
 * The storage status (spec 3.3; docs/requests.md): STARTING_UP, SHUTTING_DOWN and OFF around
 * the brain's start and stop, PAUSED and RUNNING as PAUSE and RESUME run, and between those
 * what every dispatch pass derives from the state of things. Each change is logged, recorded as
 * an event and told to the host.
 */
import { EVENT } from '../../domain/events/catalogue.js';
import type { Events } from '../../domain/events/events.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { StorageStatus } from '../../domain/system/control.js';
import type { SystemFlags } from '../../domain/system/flags.js';
import type { Logger } from '../../log/logger.js';
import type { LevelMotion } from './motion/motion.js';

/** A level whose bots have all been silent this long (with the radio running) puts the storage in ERROR. */
const SILENT_LEVEL_MS = 10_000;

export interface StorageStatusDeps {
  flags: SystemFlags;
  work: OpenWork;
  motion: ReadonlyMap<number, LevelMotion>;
  events: Events;
  /** Whether the radio lines run: without them, silent bots say nothing of the storage. */
  radio: boolean;
  monotonic: () => number;
  log: Logger;
  onStatus?: (status: StorageStatus) => void;
}

export class StorageStatusKeeper {
  private status: StorageStatus = 'OFF';
  private startedAt = 0;

  constructor(private readonly deps: StorageStatusDeps) {}

  /** The brain runs from now: its bots' silence counts once they have had SILENT_LEVEL_MS to answer. */
  started(): void {
    this.startedAt = this.deps.monotonic();
  }

  async set(status: StorageStatus, why: string): Promise<void> {
    if (this.status === status) return;
    const before = this.status;
    this.status = status;
    this.deps.onStatus?.(status);
    this.deps.log.info({ storage_status: status, before }, why);
    await this.deps.events.emit(EVENT.storageStatus, `storage status ${before} -> ${status}: ${why}`).catch((err: unknown) => this.deps.log.error({ err }, 'could not record the storage status'));
  }

  /** After a dispatch pass: the status the state of things gives, unless the brain is starting or stopping. */
  async follow(): Promise<void> {
    if (this.status !== 'SHUTTING_DOWN' && this.status !== 'STARTING_UP') await this.set(...this.derived());
  }

  /** The brain stopped: OFF, told to the host without an event (the stop's SHUTTING_DOWN has one). */
  off(): void {
    this.status = 'OFF';
    this.deps.onStatus?.('OFF');
  }

  private derived(): [StorageStatus, string] {
    if (this.deps.flags.paused()) return ['PAUSED', 'paused: bots get no new commands'];
    for (const r of this.deps.work.requests()) {
      if (r.type === 'RFID_MAINTENANCE' && r.status === 'EXECUTING') return ['MAINTENANCE', `RFID maintenance ${r.id} runs on level ${r.level_id}`];
    }
    if (this.deps.radio && this.deps.monotonic() - this.startedAt > SILENT_LEVEL_MS) {
      for (const [levelId, m] of this.deps.motion) {
        const bots = m.bots();
        if (bots.length > 0 && !bots.some((b) => b.online)) return ['ERROR', `no bot of level ${levelId} answers on its radio line`];
      }
    }
    return ['RUNNING', 'dispatching'];
  }
}
