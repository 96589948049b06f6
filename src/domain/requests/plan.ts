/**
 * Splits a request into its job graph (spec 2.18) against the warehouse as it is, inside the
 * write transaction that stores the result, so two requests can never promise the same items.
 *
 * Choice of carriers and boxes (docs/requests.md): fewest carrier moves first (a carrier the
 * request uses already costs nothing more; otherwise one move plus one per carrier standing in
 * front of it in its lane), then the level with the least open work (so every level's bots
 * and balconies work), then the oldest stock (the box whose load changed longest ago).
 */
import type { Store } from '../../store/store.js';
import { boxes, carriers, emptyBoxesOf, positionKey, skus, type BoxRecord, type CarrierRecord, type SkuRecord } from '../inventory/records.js';
import { boxSizeKey } from '../inventory/section-code.js';
import { carriersInFront } from '../inventory/lane.js';
import { carriersComingInFront } from './lanes.js';
import type { Site, SiteLevel } from '../site/load.js';
import { ABORT, AbortCollector } from './abort.js';
import type { CreateInput, FetchInput, SkuEntityInput } from './inputs.js';
import { initialProgress, isFinalJob, jobs, newJob, type EntityRecord, type JobRecord, type JobType, type InputType, type RequestType, type RequestWarning } from './records.js';
import { newRecordId } from './record-id.js';
import { chooseBoxes, olderFirst, oldestFirst, type Judged, type Offer, type Weighed } from './box-choice.js';

export interface PlanContext {
  store: Store;
  site: Site;
  now: number;
  /** picking.external.enabled: missing fulfillment quantities become warnings and PICKING_ALERT jobs. */
  externalPicking: boolean;
  /** The level of a bot in the database: undefined when unknown, null while offboarded. */
  botLevel(botId: number): number | null | undefined;
  /** Next job sequence number. */
  nextSeq(): number;
  /** Open jobs on a level now: the work its bots and balconies already have. */
  openWork(levelId: number): number;
}

/** What a request becomes: its type, entities, jobs and (putaway) placements; reservations follow the jobs. */
export interface Plan {
  type: RequestType;
  /** What was asked for: the input's type (a PUTAWAY is planned as a REPLENISHMENT, a RECOVERY as a RESUME). */
  input_type: InputType;
  level_id: number | null;
  bot_id: number | null;
  entities: EntityRecord[];
  jobs: JobRecord[];
  warnings: RequestWarning[];
  placements: { box_id: number; carrier_id: string; sku_id: string; quantity: number }[];
  abort: AbortCollector;
}

/** Builds the plan of a request, or a plan whose `abort` holds why it cannot be done. */
export function planRequest(ctx: PlanContext, requestId: string, input: CreateInput): Plan {
  const b = new PlanBuilder(ctx, requestId);
  b.plan.input_type = input.type;
  switch (input.type) {
    case 'FULFILLMENT': b.fulfillment(input.entities); break;
    case 'REPLENISHMENT': b.replenishment('REPLENISHMENT', input.entities, false); break;
    case 'PUTAWAY': b.replenishment('REPLENISHMENT', input.entities, true); break;
    case 'FETCH': b.fetch(input.entities); break;
    case 'PAUSE': b.control('PAUSE', 'PAUSE'); break;
    case 'RESUME': b.control('RESUME', 'RESUME'); break;
    case 'RECHARGE': b.botJob('RECHARGE', 'CHARGING', input.bot_id); break;
    case 'UNCHARGING':
      if (input.bot_id === undefined) b.unchargeAll();
      else b.botJob('UNCHARGING', 'UNCHARGING', input.bot_id);
      break;
    case 'OFFBOARD': b.offboard(input.bot_id, input.balcony_id); break;
    case 'ONBOARD': b.onboard(input.bot_id, input.level_id, input.balcony_id); break;
    case 'RFID_WRITE': b.rfid(input.level_id, input.tags, input.check ?? true); break;
    case 'CARRIER_ONBOARDING': b.carrierOnboarding(input.carrier_id, input.balcony_id); break;
    case 'RECOVERY': b.recovery(input.level_id, input.reconnect, input.stranded); break;
  }
  return b.plan;
}

class PlanBuilder {
  readonly plan: Plan;
  /** Carrier id -> its RETRIEVING job in this plan. */
  private readonly retrieving = new Map<string, JobRecord>();
  /** Carrier id -> the person jobs at the balcony that must end before it is stored. */
  private readonly worked = new Map<string, JobRecord[]>();
  /** Box id -> items (or room) this plan takes already. */
  private readonly taken = new Map<number, number>();

  constructor(
    private readonly ctx: PlanContext,
    private readonly requestId: string,
  ) {
    this.plan = {
      type: 'FETCH', input_type: 'FETCH', level_id: null, bot_id: null, entities: [], jobs: [], warnings: [], placements: [],
      abort: new AbortCollector(),
    };
  }

  // ------------------------------------------------------------------ logistic requests

  fulfillment(entities: SkuEntityInput[]): void {
    this.plan.type = 'FULFILLMENT';
    const picks: JobRecord[] = [];
    entities.forEach((e, index) => {
      const sku = this.sku(e.sku_id);
      const entity = this.entity('Sku', e.sku_id, 'PICKING', e.sku_id, e.quantity, e.balcony_ids);
      if (!sku || this.duplicate(entities, index)) return;
      const balconies = this.allowedBalconies(sku, e.balcony_ids);
      entity.balcony_ids = balconies;
      const held = this.reservedByBox(sku.id, 'PICKING');
      const own = byAge([...this.ctx.store.collection(boxes).findBy('sku_id', sku.id)]);
      const free = (box: BoxRecord) => box.load!.item_count - (held.get(box.id) ?? 0) - (this.taken.get(box.id) ?? 0);
      const { best, available } = this.choose(own, (box) => box.load?.sku_id === sku.id, free, e.quantity, balconies);
      if (balconies.length === 0) {
        this.plan.abort.add('Sku', sku.id, ABORT.noBalcony);
        return;
      }
      const missing = Math.max(0, e.quantity - available);
      if (missing > 0 && !this.ctx.externalPicking) {
        this.plan.abort.add('Sku', sku.id, ABORT.insufficientQuantity, `asked ${e.quantity}, fulfillable ${available}`);
        return;
      }
      picks.push(...this.work('PICKING', sku, entity, index, balconies, best, e.quantity - missing));
      if (missing > 0) {
        this.plan.warnings.push({ code: '0x5101', entity_id: sku.id, message: `${missing} of ${e.quantity} not in storage: to be picked outside the system`, missing_quantity: missing });
        picks.push(this.job('PICKING_ALERT', sku.id, index, [], {
          sku_id: sku.id, sku_name: sku.name, quantity: missing, measurement_unit: sku.measurement_unit, balcony_ids: balconies,
          level_id: this.balconyLevel(balconies[0]!) ?? null, is_selectable: true,
        }));
      }
    });
    this.store();
    if (picks.length > 0) {
      this.job('PACKING', this.requestId, -1, picks.map((j) => j.id), { balcony_ids: [...new Set(picks.flatMap((p) => p.balcony_ids))], level_id: picks[0]!.level_id, is_selectable: true });
    }
  }

  replenishment(type: RequestType, entities: SkuEntityInput[], emptyOnly: boolean): void {
    this.plan.type = type;
    entities.forEach((e, index) => {
      const sku = this.sku(e.sku_id);
      const entity = this.entity('Sku', e.sku_id, 'REFILLING', e.sku_id, e.quantity, e.balcony_ids);
      if (!sku || this.duplicate(entities, index)) return;
      const balconies = this.allowedBalconies(sku, e.balcony_ids);
      entity.balcony_ids = balconies;
      const held = this.reservedByBox(sku.id, 'REFILLING');
      const room = (box: BoxRecord) => {
        const used = (held.get(box.id) ?? 0) + (this.taken.get(box.id) ?? 0);
        if (box.load) return box.load.sku_id === sku.id && !emptyOnly ? box.load.item_count_max - box.load.item_count - used : 0;
        const cap = sku.allowed_box_size_capacities?.[boxSizeKey(box.code32)];
        return cap === undefined ? 0 : cap - used;
      };
      // Its own boxes with room, and the empty boxes of the sizes it allows: no other box has
      // room for it. Level by level, the least open work first: on a site whose boxes have one
      // age (as seeded), an order of age alone passed every box of the busier levels first.
      const sizes = Object.keys(sku.allowed_box_size_capacities ?? {});
      const own = emptyOnly ? [] : byAge([...this.ctx.store.collection(boxes).findBy('sku_id', sku.id)]);
      const work = this.workOn(this.levelsOf(balconies));
      const pool = byLevelWork(work, (level) => [...sizes.map((size) => this.emptyBoxes(size, level)), own.filter((box) => box.level_id === level)]);
      const member = (box: BoxRecord) => (box.load ? !emptyOnly && box.load.sku_id === sku.id : sizes.includes(boxSizeKey(box.code32)));
      const { best, available } = this.choose(pool, member, room, e.quantity, balconies, work);
      if (available < e.quantity) {
        this.plan.abort.add('Sku', sku.id, balconies.length === 0 ? ABORT.noBalcony : ABORT.insufficientRoom, `asked ${e.quantity}, room for ${available}`);
        return;
      }
      for (const refill of this.work('REFILLING', sku, entity, index, balconies, best, e.quantity)) {
        this.plan.placements.push({ box_id: refill.box_id!, carrier_id: refill.carrier_id!, sku_id: sku.id, quantity: refill.quantity! });
      }
    });
    this.store();
  }

  fetch(entities: FetchInput['entities']): void {
    this.plan.type = 'FETCH';
    const seen = new Set<string>();
    entities.forEach((e, index) => {
      const entity = this.entity('Carrier', e.carrier_id, 'CHECKING', null, 1, e.balcony_ids);
      const carrier = this.carrier(e.carrier_id);
      if (seen.has(e.carrier_id)) return this.plan.abort.add('Carrier', e.carrier_id, ABORT.duplicateEntity);
      seen.add(e.carrier_id);
      if (!carrier) return this.plan.abort.add('Carrier', e.carrier_id, ABORT.unknownCarrier);
      if (this.carrierBusy(carrier.id)) return this.plan.abort.add('Carrier', e.carrier_id, ABORT.carrierBusy);
      const balconies = this.levelBalconies(carrier.level_id, e.balcony_ids);
      entity.balcony_ids = balconies;
      if (balconies.length === 0) return this.plan.abort.add('Carrier', e.carrier_id, ABORT.unknownBalcony, `none of ${JSON.stringify(e.balcony_ids)} on level ${carrier.level_id}`);
      const retrieve = this.retrieve(carrier, balconies, entity, index);
      this.workedAt(carrier.id, this.job('CHECKING', carrier.id, index, [retrieve.id], { carrier_id: carrier.id, level_id: carrier.level_id, balcony_ids: balconies, quantity: 1, is_selectable: true }));
    });
    this.store();
  }

  // ------------------------------------------------------------------ system control

  control(type: RequestType, job: JobType): void {
    this.plan.type = type;
    this.entity('Level', 'site', job, null, 1);
    this.job(job, 'site', 0, [], { quantity: 1 });
  }

  botJob(type: RequestType, job: JobType, botId: number): void {
    this.plan.type = type;
    this.plan.bot_id = botId;
    this.entity('Bot', String(botId), job, null, 1);
    const level = this.ctx.botLevel(botId);
    if (level === undefined) return this.plan.abort.add('Bot', String(botId), ABORT.unknownBot);
    if (level === null) return this.plan.abort.add('Bot', String(botId), ABORT.botNotOnboarded);
    if (this.botBusy(botId)) return this.plan.abort.add('Bot', String(botId), ABORT.botBusy);
    if (job === 'CHARGING' && this.ctx.site.level(level)!.chargers.length === 0) return this.plan.abort.add('Bot', String(botId), ABORT.noCharger);
    this.plan.level_id = level;
    this.job(job, String(botId), 0, [], { bot_id: botId, level_id: level, quantity: 1 });
  }

  /**
   * OFFBOARDING drives the bot to a balcony position, OFFBOARDING_BC has the bot coordinator
   * keep it parked there out of dispatch, OFFBOARDING_BD is the person taking it off (their
   * trigger takes it off the level in the database).
   */
  offboard(botId: number, balconyId: number | undefined): void {
    this.plan.type = 'OFFBOARD';
    this.plan.bot_id = botId;
    this.entity('Bot', String(botId), 'OFFBOARDING_BD', null, 1, balconyId === undefined ? undefined : [balconyId]);
    const level = this.ctx.botLevel(botId);
    if (level === undefined) return this.plan.abort.add('Bot', String(botId), ABORT.unknownBot);
    if (level === null) return this.plan.abort.add('Bot', String(botId), ABORT.botNotOnboarded);
    if (this.botBusy(botId)) return this.plan.abort.add('Bot', String(botId), ABORT.botBusy);
    const balconies = this.levelBalconies(level, balconyId === undefined ? undefined : [balconyId]);
    if (balconies.length === 0) return this.plan.abort.add('Bot', String(botId), ABORT.balconyLevel, `balcony ${balconyId} is not on level ${level}`);
    this.plan.level_id = level;
    const fields = { bot_id: botId, level_id: level, balcony_ids: balconies, quantity: 1 };
    const move = this.job('OFFBOARDING', String(botId), -1, [], fields);
    const park = this.job('OFFBOARDING_BC', String(botId), -1, [move.id], fields);
    this.job('OFFBOARDING_BD', String(botId), 0, [park.id], { ...fields, is_selectable: true });
  }

  /** UNCHARGING without a bot: every charging bot of the site leaves its charger. */
  unchargeAll(): void {
    this.plan.type = 'UNCHARGING';
    this.entity('Level', 'site', 'UNCHARGE_ALL', null, 1);
    this.job('UNCHARGE_ALL', 'site', 0, [], { quantity: 1 });
  }

  /**
   * The brain's own request for a level (type RESUME: its bots may get commands again): after a
   * line outage, connect to every bot of the level in the database and read the level into the
   * digital twin again; then take home each carrier left on a bot with no work.
   */
  recovery(levelId: number, reconnect: boolean, stranded: readonly string[]): void {
    this.plan.type = 'RESUME';
    this.plan.level_id = levelId;
    this.entity('Level', String(levelId), reconnect ? 'REFRESH_LEVEL' : 'CLEAR_AUTOBAHN', null, reconnect ? 1 : stranded.length);
    let parents: string[] = [];
    if (reconnect) {
      const connect = this.job('CONNECT_TO_BOTS', String(levelId), -1, [], { level_id: levelId, quantity: 1 });
      parents = [this.job('REFRESH_LEVEL', String(levelId), 0, [connect.id], { level_id: levelId, quantity: 1 }).id];
    }
    for (const id of stranded) {
      const carrier = this.carrier(id);
      if (carrier) this.job('CLEAR_AUTOBAHN', id, reconnect ? -1 : 0, parents, { carrier_id: id, level_id: carrier.level_id, quantity: 1 });
    }
  }

  onboard(botId: number, levelId: number, balconyId: number): void {
    this.plan.type = 'ONBOARD';
    this.plan.bot_id = botId;
    this.entity('Bot', String(botId), 'ONBOARDING', null, 1, [balconyId]);
    if (!this.ctx.site.level(levelId)) return this.plan.abort.add('Level', String(levelId), ABORT.unknownLevel);
    const current = this.ctx.botLevel(botId);
    if (current !== undefined && current !== null) return this.plan.abort.add('Bot', String(botId), ABORT.botOnboarded, `on level ${current}`);
    if (this.botBusy(botId)) return this.plan.abort.add('Bot', String(botId), ABORT.botBusy);
    if (this.balconyLevel(balconyId) !== levelId) return this.plan.abort.add('Bot', String(botId), ABORT.balconyLevel, `balcony ${balconyId} is not on level ${levelId}`);
    this.plan.level_id = levelId;
    const person = this.job('ONBOARDING', String(botId), 0, [], { bot_id: botId, level_id: levelId, balcony_id: balconyId, balcony_ids: [balconyId], quantity: 1, is_selectable: true });
    this.job('ONBOARDING_BD', String(botId), 0, [person.id], { bot_id: botId, level_id: levelId, balcony_id: balconyId, balcony_ids: [balconyId], quantity: 1 });
  }

  rfid(levelId: number, tags: { x: number; y: number }[] | undefined, check: boolean): void {
    this.plan.type = 'RFID_MAINTENANCE';
    const level = this.ctx.site.level(levelId);
    this.entity('Level', String(levelId), 'WRITE_RFID_TAG', null, tags?.length ?? level?.rfid_tags.length ?? 0);
    if (!level) return this.plan.abort.add('Level', String(levelId), ABORT.unknownLevel);
    this.plan.level_id = levelId;
    const known = new Set(level.rfid_tags.map((t) => positionKey(levelId, t.x, t.y)));
    const list = tags ?? level.rfid_tags;
    for (const t of list) if (!known.has(positionKey(levelId, t.x, t.y))) this.plan.abort.add('Level', `${levelId}:${t.x}:${t.y}`, ABORT.unknownTag);
    if (this.plan.abort.failed) return;
    const on = this.job('CHANGE_RFID_WRITING_MODE', String(levelId), -1, [], { level_id: levelId, quantity: 1 }, { writing_mode: true });
    const last: string[] = [];
    for (const t of list) {
      const write = this.job('WRITE_RFID_TAG', `${levelId}:${t.x}:${t.y}`, 0, [on.id], { level_id: levelId, quantity: 1, target: { x: t.x, y: t.y } });
      last.push(check ? this.job('CHECK_RFID_TAG', `${levelId}:${t.x}:${t.y}`, -1, [write.id], { level_id: levelId, quantity: 1, target: { x: t.x, y: t.y } }).id : write.id);
    }
    const off = this.job('CHANGE_RFID_WRITING_MODE', String(levelId), -1, last, { level_id: levelId, quantity: 1 }, { writing_mode: false });
    // The tags changed under the digital twin: the level is read again before bots drive on it.
    this.job('REFRESH_LEVEL', String(levelId), -1, [off.id], { level_id: levelId, quantity: 1 });
  }

  carrierOnboarding(carrierId: string, balconyId: number): void {
    this.plan.type = 'ONBOARD';
    this.entity('Carrier', carrierId, 'ONBOARDING', null, 1, [balconyId]);
    if (this.carrier(carrierId)) return this.plan.abort.add('Carrier', carrierId, ABORT.carrierExists);
    const levelId = this.balconyLevel(balconyId);
    if (levelId === undefined) return this.plan.abort.add('Carrier', carrierId, ABORT.unknownBalcony, `balcony ${balconyId}`);
    this.plan.level_id = levelId;
    const person = this.job('ONBOARDING', carrierId, 0, [], { carrier_id: carrierId, level_id: levelId, balcony_id: balconyId, balcony_ids: [balconyId], quantity: 1, is_selectable: true });
    this.job('STORING', carrierId, -1, [person.id], { carrier_id: carrierId, level_id: levelId, balcony_id: balconyId, balcony_ids: [balconyId] });
  }

  // ------------------------------------------------------------------ parts

  /**
   * The person's jobs (PICKING or REFILLING) for `quantity` items of an SKU, taken from the
   * chosen boxes best first, each after its carrier's RETRIEVING.
   */
  private work(
    type: 'PICKING' | 'REFILLING', sku: SkuRecord, entity: EntityRecord, index: number, balconies: number[],
    best: readonly Judged<BoxRecord, Weighed & { carrier: CarrierRecord }>[], quantity: number,
  ): JobRecord[] {
    const out: JobRecord[] = [];
    let left = quantity;
    for (const c of best) {
      if (left === 0) break;
      const take = Math.min(left, c.free);
      left -= take;
      this.taken.set(c.box.id, (this.taken.get(c.box.id) ?? 0) + take);
      const retrieve = this.retrieve(c.carrier, balconies, entity, index);
      const job = this.job(type, entity.entity_id, index, [retrieve.id], {
        carrier_id: c.carrier.id, box_id: c.box.id, level_id: c.carrier.level_id, balcony_ids: balconies, sku_id: sku.id, sku_name: sku.name,
        quantity: take, measurement_unit: sku.measurement_unit, on_empty_sku_action: sku.on_empty_sku_action, is_selectable: true,
      });
      this.workedAt(c.carrier.id, job);
      out.push(job);
    }
    return out;
  }

  /**
   * The boxes to take `quantity` from, best first, and what the usable ones give (`chooseBoxes`).
   * `pool` holds the boxes the entity may use (`member` says whether a box is one of them),
   * oldest first, or, when the caller gives each level's open work (`known`, from `workOn`),
   * by that work first and oldest first within equal work; `free` is what a box can give it. A
   * box counts when its carrier is on a level of an allowed balcony and no other open request
   * holds it.
   */
  private choose(pool: Iterable<BoxRecord>, member: (box: BoxRecord) => boolean, free: (box: BoxRecord) => number, quantity: number, balconies: number[], known?: Map<number, number>) {
    const levels = known ? new Set(known.keys()) : this.levelsOf(balconies);
    // No allowed balcony on any level: no box can be used, and none need be read.
    if (levels.size === 0) return { best: [], available: 0 };
    const offer = (box: BoxRecord): Offer<BoxRecord> | undefined => {
      const n = free(box);
      return n > 0 ? { box, free: n } : undefined;
    };
    // Boxes on the carriers this plan brings already, wherever they stand in the pool's order.
    const brought: Offer<BoxRecord>[] = [];
    for (const carrierId of this.retrieving.keys()) {
      for (const box of this.ctx.store.collection(boxes).findBy('carrier_id', carrierId)) {
        const o = member(box) ? offer(box) : undefined;
        if (o) brought.push(o);
      }
    }
    brought.sort((a, b) => olderFirst(a.box, b.box));
    const retrieving = this.retrieving;
    function* rest(): Iterable<Offer<BoxRecord>> {
      for (const box of pool) {
        const o = retrieving.has(box.carrier_id) ? undefined : offer(box);
        if (o) yield o;
      }
    }
    // Counting the levels' open work reads their indexes: only once a box is usable, unless the
    // caller counted it to order its pool. Until then a box whose carrier other work holds is
    // passed over here (most fulfillments refused under load get no further); after, that is
    // asked only of the boxes judged (`moves`).
    let work = known;
    const weigh = (box: BoxRecord) => {
      const carrier = this.carrier(box.carrier_id);
      if (!carrier || !levels.has(carrier.level_id) || (!work && this.carrierBusy(carrier.id))) return undefined;
      work ??= this.workOn(levels);
      return { carrier, work: work.get(carrier.level_id)! };
    };
    const moves = (_box: BoxRecord, { carrier }: { carrier: CarrierRecord }) => {
      if (this.carrierBusy(carrier.id)) return undefined;
      return this.retrieving.has(carrier.id) ? 0 : 1 + this.inFront(carrier).length;
    };
    return chooseBoxes(brought, rest(), quantity, () => Math.min(...work!.values()), weigh, moves);
  }

  /** The levels of the balconies `balconies` (those the site has). */
  private levelsOf(balconies: number[]): Set<number> {
    const levels = new Set<number>();
    for (const id of balconies) {
      const level = this.balconyLevel(id);
      if (level !== undefined) levels.add(level);
    }
    return levels;
  }

  /** Each level's open work: its open jobs, and those this plan has made on it so far. */
  private workOn(levels: Set<number>): Map<number, number> {
    return new Map([...levels].map((level) => [level, this.ctx.openWork(level) + this.plan.jobs.filter((j) => j.level_id === level).length]));
  }

  /** The empty boxes of one size on one level, oldest first (then by id), read as they are taken. */
  private *emptyBoxes(size: string, levelId: number): Iterable<BoxRecord> {
    const c = this.ctx.store.collection(boxes);
    for (const key of c.keysWithin('empty', emptyBoxesOf(size, levelId))) {
      const box = c.get(key);
      if (box) yield box;
    }
  }

  /** RETRIEVING of a carrier once per plan, after BUFFERING (or retrieving) what stands in front of it. */
  private retrieve(carrier: CarrierRecord, balconies: number[], entity: EntityRecord, index: number): JobRecord {
    const existing = this.retrieving.get(carrier.id);
    if (existing) return existing;
    const parents: string[] = [];
    for (const blocker of this.inFront(carrier)) {
      const own = this.retrieving.get(blocker.id);
      if (own) {
        parents.push(own.id);
        continue;
      }
      const buffer = this.job('BUFFERING', blocker.id, -1, [], { carrier_id: blocker.id, level_id: blocker.level_id }, { in_front_of: carrier.id });
      parents.push(buffer.id);
      // Back into storage once the deep carrier has left the lane.
      this.job('STORING', blocker.id, -1, [buffer.id], { carrier_id: blocker.id, level_id: blocker.level_id });
    }
    const job = this.job('RETRIEVING', carrier.id, entity.entity_type === 'Carrier' ? index : -1, parents, {
      carrier_id: carrier.id, level_id: carrier.level_id, balcony_ids: balconies,
    });
    this.retrieving.set(carrier.id, job);
    return job;
  }

  /** STORING of every retrieved carrier once the work at the balcony on it has ended. */
  private store(): void {
    for (const [carrierId, retrieve] of this.retrieving) {
      const after = this.worked.get(carrierId) ?? [retrieve];
      this.job('STORING', carrierId, -1, after.map((j) => j.id), { carrier_id: carrierId, level_id: retrieve.level_id, balcony_ids: retrieve.balcony_ids });
    }
  }

  private workedAt(carrierId: string, job: JobRecord): void {
    const list = this.worked.get(carrierId) ?? [];
    list.push(job);
    this.worked.set(carrierId, list);
  }

  /** Carriers standing, or being set down, in front of `carrier` in its lane: each must be buffered first. */
  private inFront(carrier: CarrierRecord): CarrierRecord[] {
    const level = this.ctx.site.level(carrier.level_id);
    if (!level) return [];
    const stored = carriersInFront(this.ctx.store, level, carrier);
    const coming = carriersComingInFront(this.ctx.store, level, carrier).filter((c) => !stored.some((s) => s.id === c.id));
    return [...stored, ...coming];
  }

  private job(
    type: JobType, entityId: string, entityIndex: number, parents: string[], fields: Partial<JobRecord>,
    facts?: Parameters<typeof initialProgress>[1],
  ): JobRecord {
    const job = newJob(
      { id: newRecordId(), request_id: this.requestId, type, entity_id: entityId, entity_index: entityIndex, seq: this.ctx.nextSeq(), now: this.ctx.now },
      { parent_job_ids: parents, ...fields }, facts,
    );
    this.plan.jobs.push(job);
    if (job.level_id !== null && this.plan.level_id === null) this.plan.level_id = job.level_id;
    return job;
  }

  private entity(type: EntityRecord['entity_type'], entityId: string, jobType: JobType, skuId: string | null, quantity: number, balconyIds?: number[]): EntityRecord {
    const entity: EntityRecord = {
      id: newRecordId(), entity_id: entityId, entity_type: type, job_type: jobType, sku_id: skuId, balcony_ids: balconyIds ?? [],
      total_quantity: quantity, completed_quantity: 0, succeeded_quantity: 0, cancelled_quantity: 0,
    };
    this.plan.entities.push(entity);
    return entity;
  }

  private sku(id: string): SkuRecord | undefined {
    const sku = this.ctx.store.collection(skus).get(id);
    if (!sku) this.plan.abort.add('Sku', id, ABORT.unknownSku);
    else if (sku.deleted_at !== null) this.plan.abort.add('Sku', id, ABORT.deletedSku);
    else return sku;
    return undefined;
  }

  private duplicate(entities: SkuEntityInput[], index: number): boolean {
    const id = entities[index]!.sku_id;
    if (entities.findIndex((e) => e.sku_id === id) === index) return false;
    this.plan.abort.add('Sku', id, ABORT.duplicateEntity);
    return true;
  }

  private carrier(id: string): CarrierRecord | undefined {
    return this.ctx.store.collection(carriers).get(id);
  }

  /**
   * Open work of another request holds the carrier: this plan's own jobs are not stored yet, so
   * any open job of the carrier is another's. The index's keys say it without decoding a job.
   */
  private carrierBusy(id: string): boolean {
    return this.ctx.store.collection(jobs).keysBy('open_carrier', id).length > 0;
  }

  /** Open work of the bot's own (charging, leaving or joining a level) holds it. */
  private botBusy(botId: number): boolean {
    for (const j of this.ctx.store.collection(jobs).findBy('open_bot', botId)) {
      if (j.type === 'CHARGING' || j.type === 'UNCHARGING' || j.type.startsWith('OFFBOARDING') || j.type.startsWith('ONBOARDING')) return true;
    }
    return false;
  }

  /** Box id -> quantity open jobs of `type` on the SKU hold. */
  private reservedByBox(skuId: string, type: JobType): Map<number, number> {
    const out = new Map<number, number>();
    for (const j of this.ctx.store.collection(jobs).findBy('sku_id', skuId)) {
      if (j.type === type && j.box_id !== null && !isFinalJob(j.status)) out.set(j.box_id, (out.get(j.box_id) ?? 0) + (j.quantity ?? 0));
    }
    return out;
  }

  private balconyLevel(balconyId: number): number | undefined {
    return this.ctx.site.balconies.find((b) => b.id === balconyId)?.level_id;
  }

  /** Balconies an SKU may go to, narrowed by the entity's own list. */
  private allowedBalconies(sku: SkuRecord, wanted: number[] | undefined): number[] {
    const all = this.ctx.site.balconies.map((b) => b.id);
    const allowed = sku.balcony_ids && sku.balcony_ids.length > 0 ? all.filter((id) => sku.balcony_ids!.includes(id)) : all;
    return wanted ? allowed.filter((id) => wanted.includes(id)) : allowed;
  }

  private levelBalconies(levelId: number, wanted: number[] | undefined): number[] {
    const level: SiteLevel | undefined = this.ctx.site.level(levelId);
    const ids = level ? level.balconies.map((b) => b.id) : [];
    return wanted ? ids.filter((id) => wanted.includes(id)) : ids;
  }

}

/** Boxes oldest first. */
function byAge(list: BoxRecord[]): BoxRecord[] {
  return list.sort(olderFirst);
}

/**
 * The boxes `sourcesOf(level)` give (each source oldest first), level by level from the least
 * open work in `work`, the levels of equal work together oldest first: the plan's order as far
 * as it goes before the carrier moves are counted. Read as taken.
 */
function* byLevelWork(work: Map<number, number>, sourcesOf: (level: number) => Iterable<BoxRecord>[]): Iterable<BoxRecord> {
  for (const load of [...new Set(work.values())].sort((a, b) => a - b)) {
    yield* oldestFirst([...work].filter(([, w]) => w === load).flatMap(([level]) => sourcesOf(level)));
  }
}
