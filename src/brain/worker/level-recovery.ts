/**
 * Bringing a level back to what the store says of it: after a radio line outage, a request of
 * the brain's own reconnects and refreshes the level; carriers left on bots with no work are
 * taken home by the same kind of request; a bot that holds a carrier the store places elsewhere
 * is asked which one it is, and the store follows the carrier to the bot.
 */
import type { CarrierPlaces } from '../../domain/inventory/carrier-places.js';
import type { Inventory } from '../../domain/inventory/inventory.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import { CARRIER_JOBS, inputTypeOf } from '../../domain/requests/records.js';
import type { Requests } from '../../domain/requests/requests.js';
import { CARRIER_PLACES, type Site, type SiteLevel } from '../../domain/site/load.js';
import type { Logger } from '../../log/logger.js';
import type { LevelMotion } from './motion/motion.js';
import type { SendCommand } from './radio.js';

/** How often a bot holding a carrier the store does not place under it is asked which one it is. */
const RECONCILE_MS = 3000;

export interface LevelRecoveryDeps {
  site: Site;
  requests: Requests;
  inventory: Inventory;
  work: OpenWork;
  carriers: CarrierPlaces;
  motion: ReadonlyMap<number, LevelMotion>;
  /** Commands to bots, when the radio lines run. */
  send: SendCommand | undefined;
  monotonic: () => number;
  log: Logger;
}

export class LevelRecovery {
  /** When each bot's held carrier was last read (reconcile). */
  private readonly reconciled = new Map<number, number>();

  constructor(private readonly deps: LevelRecoveryDeps) {}

  /**
   * A request of the brain's own for a level (docs/requests.md): after a line outage it
   * reconnects and refreshes the level; either way it takes home the carriers left on bots with
   * no work. `scan`: look at every carrier of the level (the first news of a line, an outage),
   * not only those under bots. Nothing is made while one is open for the level.
   */
  async recover(levelId: number, reconnect: boolean, scan = reconnect): Promise<void> {
    const level = this.deps.site.level(levelId);
    if (!level) return;
    for (const r of this.deps.work.requests()) if (inputTypeOf(r) === 'RECOVERY' && r.level_id === levelId) return;
    const stranded = this.stranded(level, scan);
    if (!reconnect && stranded.length === 0) return;
    try {
      const { request } = await this.deps.requests.create({ type: 'RECOVERY', level_id: levelId, reconnect, stranded });
      this.deps.log.info({ level_id: levelId, request_id: request.id, stranded },
        reconnect ? 'radio line back: reconnecting the level' : 'carriers left on bots with no work: taking them home');
    } catch (err) {
      this.deps.log.error({ err, level_id: levelId }, 'could not make the recovery request');
    }
  }

  /**
   * Carriers on a bot with no open work: where the store places a carrier outside any place for
   * carriers (a bot stopped with it on the highway), or under an idle bot holding its lift up
   * that no job drives. Only the cells of bots, unless `scan`.
   */
  private stranded(level: SiteLevel, scan: boolean): string[] {
    const held = (this.deps.motion.get(level.id)?.bots() ?? []).filter((b) => b.lifted && b.idle && b.online);
    // Asked every pass: most passes no bot holds its lift up idle, and then no job need be read.
    if (held.length === 0 && !scan) return [];
    const worked = new Set<string>();
    const driving = new Set<number>();
    // The level's jobs and those of no level: a job of another level moves neither its carriers nor its bots.
    for (const jobs of [this.deps.work.jobsOn(level.id), this.deps.work.jobsOn(0)]) {
      for (const j of jobs) {
        if (j.carrier_id && CARRIER_JOBS.has(j.type)) worked.add(j.carrier_id);
        if (j.bot_id !== null && (j.status === 'EXECUTING' || j.status === 'CANCELLING')) driving.add(j.bot_id);
      }
    }
    const out = new Set<string>();
    for (const b of held) {
      if (driving.has(b.id)) continue;
      const id = this.deps.carriers.at(level.id, b.x, b.y);
      if (id && !worked.has(id)) out.add(id);
    }
    if (scan) {
      for (const c of this.deps.carriers.all()) {
        if (c.level_id === level.id && !CARRIER_PLACES.has(level.kindAt(c.x, c.y)) && !worked.has(c.id)) out.add(c.id);
      }
    }
    return [...out];
  }

  /**
   * A bot holding its lift up with no job driving it, where the store places no carrier, holds
   * one the store places elsewhere (a failure the store did not see the end of): its carrier's
   * tag says which, and the store follows the carrier to the bot, where its own work, or
   * CLEAR_AUTOBAHN, picks it up. Asked once per bot per RECONCILE_MS.
   */
  reconcile(levelId: number): void {
    const send = this.deps.send;
    const motion = this.deps.motion.get(levelId);
    if (!send || !motion) return;
    const now = this.deps.monotonic();
    const held = motion.bots().filter((b) => b.lifted && b.idle && b.online && !b.stuck && this.deps.carriers.at(levelId, b.x, b.y) === undefined
      && (this.reconciled.get(b.id) ?? -Infinity) <= now - RECONCILE_MS);
    // Asked every pass: only a bot that may hold an unknown carrier makes the open jobs worth reading.
    if (held.length === 0) return;
    const driving = new Set<number>();
    for (const j of this.deps.work.allJobs()) if (j.bot_id !== null && (j.status === 'EXECUTING' || j.status === 'CANCELLING')) driving.add(j.bot_id);
    for (const b of held) {
      if (driving.has(b.id)) continue;
      this.reconciled.set(b.id, now);
      void send(levelId, b.id, { type: 'RFID_READ', target: 'CARRIER', offset: 0, length: 32 }).then(async (outcome) => {
        const id = outcome.delivered && outcome.result === 'OK' && outcome.data ? Buffer.from(outcome.data).toString('utf8').replace(/\0+$/, '') : '';
        const known = id ? this.deps.carriers.of(id) : undefined;
        if (!known) return this.deps.log.warn({ bot_id: b.id, level_id: levelId, tag: id, outcome }, 'bot holds a carrier the store does not know: a person must take it off');
        const at = motion.lastSeen(b.id);
        if (!at?.lifted) return;
        this.deps.log.warn({ bot_id: b.id, carrier_id: id, store: known, at }, 'bot holds a carrier the store placed elsewhere: the store follows it');
        await this.deps.requests.write(() => this.deps.inventory.placeCarrierInWrite(id, levelId, at.x, at.y));
      }).catch((err: unknown) => this.deps.log.error({ err, bot_id: b.id }, 'could not reconcile a held carrier'));
    }
  }
}
