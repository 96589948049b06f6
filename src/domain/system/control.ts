/**
 * System control (spec 4.2, 4.3): the storage status, restarting the brain, cancelling all
 * logistic work, charging all bots, removing bots from the database, and the bots as their
 * lines and the database see them. The HTTP routes call this service and nothing else for
 * these; the brain and the radio lines are reached through the interfaces below.
 */
import type { Events } from '../events/events.js';
import { ValidationError } from '../errors.js';
import type { Requests } from '../requests/requests.js';
import type { Store } from '../../store/store.js';
import { Bots } from '../bots/bots.js';

/** Spec 3.3. */
export const STORAGE_STATUSES = ['RUNNING', 'PAUSED', 'STARTING_UP', 'MAINTENANCE', 'ERROR', 'OFF', 'SHUTTING_DOWN'] as const;
export type StorageStatus = (typeof STORAGE_STATUSES)[number];

/** What the system service asks of the brain (BrainHost on the main thread). */
export interface BrainControl {
  /** The storage status now (spec 3.3). */
  storageStatus(): StorageStatus;
  /** Stops and starts the brain from the stored state. */
  restart(): Promise<void>;
  /** Bots that a charge-all would send to charge. */
  chargeAllCandidates(force: boolean): Promise<number[]>;
}

/** A bot as its radio line last heard it. */
export interface LiveBot {
  id: number;
  level_id: number;
  battery_level: number;
  is_charging: boolean;
  carrier_held: boolean;
  online: boolean;
  x: number;
  y: number;
  heading: string;
}

/** A bot as GET /bots shows it: its live state, and whether the database has it on a level. */
export interface BotView extends LiveBot {
  /** On its level in the database: dispatch may give it work. False once offboarded or removed. */
  in_service: boolean;
  /** Its level's radio line carries it (false while the line is down). */
  line_up: boolean;
}

export interface SystemDeps {
  store: Store;
  requests: Requests;
  events: Events;
  brain: BrainControl;
  /** The bots the radio lines know (none while the lines are off). */
  liveBots(): readonly LiveBot[];
  /** Whether a level's radio line is up (true when unknown). */
  lineUp(levelId: number): boolean;
}

export interface RestartOutcome {
  status: 'restarted' | 'timeout';
  details: string;
}

export interface CancelAllOutcome {
  status: 'success' | 'restart_failed';
  cancelled_count: number;
  brain_restart: 'restarted' | 'not_required' | 'failed';
  manual_restart_required: boolean;
  message: string;
}

/** Resolves with the promise's outcome, or 'timeout' after `seconds` (the promise goes on). */
async function within<T>(promise: Promise<T>, seconds: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), seconds * 1000)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class SystemService {
  private readonly botTable: Bots;

  constructor(private readonly deps: SystemDeps) {
    this.botTable = new Bots({ store: deps.store, events: deps.events, now: Date.now });
  }

  storageStatus(): StorageStatus {
    // A disk that refuses writes stops the site as surely as a fault: ERROR until a write succeeds.
    if (this.deps.store.storageFault()) return 'ERROR';
    return this.deps.brain.storageStatus();
  }

  /** POST /restart_brain: answers within `timeoutS`; a restart that takes longer goes on in the background. */
  async restartBrain(timeoutS: number): Promise<RestartOutcome> {
    const outcome = await within(this.deps.brain.restart().then(() => 'ok' as const, (err: Error) => err), timeoutS);
    if (outcome === 'timeout') return { status: 'timeout', details: `the brain did not finish restarting within ${timeoutS} s; it goes on in the background` };
    if (outcome !== 'ok') return { status: 'timeout', details: `the brain could not be restarted (${outcome.message}); it is tried again in the background` };
    return { status: 'restarted', details: `storage status ${this.storageStatus()}` };
  }

  /** POST /requests/cancel_all: every open logistic request is cancelled, then the brain restarts. */
  async cancelAll(timeoutS: number): Promise<CancelAllOutcome> {
    const cancelled = await this.deps.requests.cancelAll();
    if (cancelled === 0) return { status: 'success', cancelled_count: 0, brain_restart: 'not_required', manual_restart_required: false, message: 'no open logistic request' };
    const outcome = await within(this.deps.brain.restart().then(() => 'ok' as const, () => 'failed' as const), timeoutS);
    const ok = outcome === 'ok';
    return {
      status: ok ? 'success' : 'restart_failed', cancelled_count: cancelled, brain_restart: ok ? 'restarted' : 'failed', manual_restart_required: !ok,
      message: ok ? `${cancelled} request(s) cancelled; carriers on their way go back to storage` : `${cancelled} request(s) cancelled, but the brain did not restart in time: POST /api/v2/restart_brain`,
    };
  }

  /** POST /system/charge_all_bots: a RECHARGE request for every bot the brain names; bots that cannot charge now are left out. */
  async chargeAll(force: boolean): Promise<{ request_ids: string[]; bot_ids: number[] }> {
    const ids: string[] = [];
    const charged: number[] = [];
    for (const bot of await this.deps.brain.chargeAllCandidates(force)) {
      try {
        ids.push((await this.deps.requests.create({ type: 'RECHARGE', bot_id: bot })).request.id);
        charged.push(bot);
      } catch {
        // A bot that cannot charge now (busy, no charger): the abort is in the event log.
      }
    }
    return { request_ids: ids, bot_ids: charged };
  }

  /**
   * DELETE /bot: removes bots from the database (`*`: every bot). Named bots that are unknown or
   * have open requests are refused, and nothing is removed.
   */
  async deleteBots(which: readonly number[] | '*'): Promise<{ success: boolean; message: string }> {
    const all = which === '*';
    const ids = all ? this.botTable.ids() : [...which];
    if (!all) {
      const open = new Set(this.deps.requests.openRequests().map((r) => r.bot_id));
      const refused = ids.filter((id) => open.has(id) || this.botTable.levelOf(id) === undefined);
      if (refused.length > 0) throw ValidationError.of(['query', 'bot_idxs'], `bot(s) ${refused.join(', ')} are unknown or have open requests; finish or cancel them first`);
    }
    const removed = await this.botTable.remove(ids);
    return { success: true, message: `${removed} bot(s) removed from the database; they get no work until onboarded again` };
  }

  /** GET /bots: every bot a radio line knows, with whether it is in service, filtered. */
  bots(filter: { id?: readonly number[]; level_id?: readonly number[]; is_charging?: boolean } = {}): BotView[] {
    const out: BotView[] = [];
    for (const b of this.deps.liveBots()) {
      if (filter.id && !filter.id.includes(b.id)) continue;
      if (filter.level_id && !filter.level_id.includes(b.level_id)) continue;
      if (filter.is_charging !== undefined && b.is_charging !== filter.is_charging) continue;
      const level = this.botTable.levelOf(b.id);
      out.push({ ...b, in_service: level !== undefined && level !== null, line_up: this.deps.lineUp(b.level_id) });
    }
    return out;
  }
}
