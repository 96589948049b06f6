/**
 * Inventory changes: SKUs, boxes and loads (spec 2.10-2.13, 4.4, 4.5, 4.12). Every change
 * runs in one store transaction that also moves the SKU totals it affects, and checks every
 * rule before it writes, so a refused change writes nothing. After the commit the in-memory
 * inventory view re-reads what changed.
 */
import type { Store } from '../../store/store.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Site } from '../site/load.js';
import { boxSizeKey, overlaps, parseGivenCode, parseSectionCode, sectionCount, type GivenSectionCode } from './section-code.js';
import { boxes, carriers, positionKey, skus, type BoxRecord, type CarrierRecord, type LoadRecord, type SkuImage, type SkuRecord } from './records.js';
import type { InventoryView } from './view.js';
import type { LoadInput, SkuInput } from './inputs.js';
import type { Events } from '../events/events.js';
import { EVENT } from '../events/catalogue.js';

/** Why something holds an SKU's stock (open requests), or undefined. */
export type SkuHoldCheck = (skuId: string) => string | undefined;

export interface InventoryDeps {
  store: Store;
  site: Site;
  /** The inventory view to refresh after changes; the brain's worker has none (main refreshes its own). */
  view?: InventoryView;
  now: () => number;
  /** Reasons open work holds an SKU (deletion is refused while there is one). */
  skuHolds?: SkuHoldCheck;
  events?: Events;
}

/** A box and its load before or after a change: what the SKU totals follow. */
interface Placement {
  code32: number;
  load: LoadRecord | null;
}

/** The fields of an SKU that PATCH /sku/{id} may change. */
const SKU_EDITABLE = ['name', 'measurement_unit', 'on_empty_sku_action', 'allowed_box_size_capacities', 'balcony_ids'] as const satisfies readonly (keyof SkuInput)[];

export class Inventory {
  constructor(private readonly deps: InventoryDeps) {}

  private get store(): Store {
    return this.deps.store;
  }

  // ------------------------------------------------------------------ SKUs

  /** Creates an SKU, or brings back a deleted one under the same id. */
  async createSku(id: string, input: SkuInput): Promise<SkuRecord> {
    this.checkSkuInput(input);
    const now = this.deps.now();
    const sku = await this.store.write(() => {
      const existing = this.store.collection(skus).get(id);
      if (existing && existing.deleted_at === null) throw new ConflictError(`SKU ${id} already exists`);
      const record: SkuRecord = {
        ...(existing ?? emptyTotals()),
        id,
        name: input.name ?? null,
        measurement_unit: input.measurement_unit ?? 'PIECE',
        on_empty_sku_action: input.on_empty_sku_action ?? 'UNASSIGN',
        allowed_box_size_capacities: input.allowed_box_size_capacities ?? null,
        balcony_ids: input.balcony_ids ?? null,
        image: existing?.image ?? null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      this.store.collection(skus).put(record);
      return record;
    });
    this.deps.view?.refreshSku(id);
    return sku;
  }

  /** Changes an SKU's master data; capacities below what its loads already allow are refused. */
  async patchSku(id: string, input: SkuInput): Promise<SkuRecord> {
    this.checkSkuInput(input);
    const sku = await this.store.write(() => {
      const current = this.liveSku(id);
      const next: SkuRecord = { ...current, updated_at: this.deps.now() };
      // Only the fields an SKU's owner edits: ids, totals and counters are the system's.
      for (const key of SKU_EDITABLE) {
        if (input[key] !== undefined) (next as unknown as Record<string, unknown>)[key] = input[key];
      }
      if (input.allowed_box_size_capacities !== undefined) {
        for (const box of this.store.collection(boxes).findBy('sku_id', id)) checkCapacity(next, box.code32, box.load!, ['body', 'allowed_box_size_capacities'], box.id);
      }
      this.store.collection(skus).put(next);
      return next;
    });
    this.deps.view?.refreshSku(id);
    return sku;
  }

  /** Marks an SKU deleted; refused while loads or open work hold it. */
  async deleteSku(id: string): Promise<SkuRecord> {
    const sku = await this.store.write(() => {
      const current = this.liveSku(id);
      if (current.load_count > 0) {
        throw new ConflictError(`SKU ${id} cannot be deleted: ${current.load_count} load(s) in boxes hold ${current.total_quantity} item(s); remove the loads first`);
      }
      const held = this.deps.skuHolds?.(id);
      if (held) throw new ConflictError(`SKU ${id} cannot be deleted: ${held}`);
      const now = this.deps.now();
      const next = { ...current, deleted_at: now, updated_at: now };
      this.store.collection(skus).put(next);
      this.deps.events?.record(EVENT.skuDeleted, `SKU ${id} "${current.name ?? ''}" deleted`);
      return next;
    });
    this.deps.view?.refreshSku(id);
    return sku;
  }

  /** Records a stored image file on an SKU; returns the record and the file it replaced. */
  async setSkuImage(id: string, image: SkuImage, overwrite: boolean): Promise<{ sku: SkuRecord; replaced: SkuImage | null }> {
    return this.store.write(() => {
      const current = this.liveSku(id);
      if (current.image && !overwrite) {
        throw new ConflictError(`SKU ${id} already has an image; send overwrite_existing_image=true to replace it`);
      }
      const sku = { ...current, image, updated_at: this.deps.now() };
      this.store.collection(skus).put(sku);
      return { sku, replaced: current.image };
    });
  }

  /** The SKU with this id (deleted ones too), or NotFoundError. */
  sku(id: string): SkuRecord {
    const sku = this.store.collection(skus).get(id);
    if (!sku) throw new NotFoundError(`SKU ${id} does not exist`);
    return sku;
  }

  // ------------------------------------------------------------------ boxes

  /** Creates a box on a carrier in sections no other box there takes. */
  async createBox(carrierId: string, code: GivenSectionCode): Promise<BoxRecord> {
    const code32 = parseGivenCode(code);
    const box = await this.store.write(() => {
      const carrier = this.store.collection(carriers).get(carrierId);
      if (!carrier) throw new NotFoundError(`carrier ${carrierId} does not exist`);
      this.checkFree(carrierId, code32, new Set());
      const record: BoxRecord = { id: this.store.nextId('box'), carrier_id: carrierId, level_id: carrier.level_id, code32, load: null, updated_at: this.deps.now() };
      this.store.collection(boxes).put(record);
      return record;
    });
    this.deps.view?.refreshCarriers([carrierId]);
    return box;
  }

  /** Moves a box to other sections of its carrier. */
  async patchBox(boxId: number, code: GivenSectionCode): Promise<BoxRecord> {
    const [box] = await this.place([{ ...code, box_id: boxId }], ['body']);
    return box!;
  }

  /** Deletes a box that holds no load. */
  async deleteBox(boxId: number): Promise<BoxRecord> {
    const box = await this.store.write(() => {
      const box = this.box(boxId);
      if (box.load) throw new ConflictError(`box ${boxId} holds ${box.load.item_count} of SKU ${box.load.sku_id}; remove its load first`);
      this.store.collection(boxes).remove(boxId);
      return box;
    });
    this.deps.view?.refreshCarriers([box.carrier_id]);
    return box;
  }

  /** Swaps the placement (carrier and sections) of two boxes. */
  async swapBoxes(sourceId: number, targetId: number): Promise<[BoxRecord, BoxRecord]> {
    if (sourceId === targetId) throw ValidationError.of(['path', 'target_box_id'], 'A box cannot be swapped with itself', 'value_error');
    const pair = await this.store.write(() => {
      const source = this.box(sourceId);
      const target = this.box(targetId);
      const now = this.deps.now();
      const a = { ...source, carrier_id: target.carrier_id, level_id: target.level_id, code32: target.code32, updated_at: now };
      const b = { ...target, carrier_id: source.carrier_id, level_id: source.level_id, code32: source.code32, updated_at: now };
      // The sections each carrier has taken stay the same set, so no overlap can appear.
      for (const [before, after] of [[source, a], [target, b]] as const) {
        if (after.load) checkCapacity(this.liveSku(after.load.sku_id), after.code32, after.load, ['path', after.id === sourceId ? 'source_box_id' : 'target_box_id'], after.id);
        this.book(before, after);
        this.store.collection(boxes).put(after);
      }
      return [a, b] as [BoxRecord, BoxRecord];
    });
    this.deps.view?.refreshCarriers(new Set([pair[0].carrier_id, pair[1].carrier_id]));
    return pair;
  }

  /** Applies several section-code changes at once; the end state must have no overlap. */
  async swapRegion(updates: (GivenSectionCode & { box_id: number })[]): Promise<BoxRecord[]> {
    return this.place(updates, ['body', 'updates']);
  }

  private async place(updates: (GivenSectionCode & { box_id: number })[], loc: (string | number)[]): Promise<BoxRecord[]> {
    const issues = [];
    const codes: number[] = [];
    const seen = new Set<number>();
    for (const [i, u] of updates.entries()) {
      const at = loc.length > 1 ? [...loc, i] : loc;
      try {
        codes.push(parseGivenCode(u, at));
      } catch (err) {
        issues.push(...(err as ValidationError).issues);
      }
      if (seen.has(u.box_id)) issues.push({ loc: [...at, 'box_id'], msg: `box ${u.box_id} appears twice`, type: 'value_error' });
      seen.add(u.box_id);
    }
    if (issues.length > 0) throw new ValidationError(issues);

    const changed = await this.store.write(() => {
      const now = this.deps.now();
      const moved = updates.map((u, i) => ({ before: this.box(u.box_id), code32: codes[i]! }));
      const after = moved.map(({ before, code32 }) => ({ ...before, code32, updated_at: now }));
      for (const [i, box] of after.entries()) {
        if (box.load) checkCapacity(this.liveSku(box.load.sku_id), box.code32, box.load, loc.length > 1 ? [...loc, i, 'section_code'] : [...loc, 'section_code'], box.id);
      }
      const movedIds = new Set(after.map((b) => b.id));
      for (const box of after) this.checkFree(box.carrier_id, box.code32, movedIds, after, box.id);
      for (const [i, box] of after.entries()) {
        this.book(moved[i]!.before, box);
        this.store.collection(boxes).put(box);
      }
      return after;
    });
    this.deps.view?.refreshCarriers(new Set(changed.map((b) => b.carrier_id)));
    return changed;
  }

  /** The box with this id, or NotFoundError. */
  box(boxId: number): BoxRecord {
    const box = this.store.collection(boxes).get(boxId);
    if (!box) throw new NotFoundError(`box ${boxId} does not exist`);
    return box;
  }

  // ------------------------------------------------------------------ loads

  /** Puts a load of an SKU into an empty box. */
  async addLoad(boxId: number, input: LoadInput): Promise<LoadRecord> {
    checkCounts(input.item_count, input.item_count_max);
    return this.changeLoad(boxId, (box) => {
      if (box.load) throw new ConflictError(`box ${boxId} already holds a load of SKU ${box.load.sku_id}; a box holds one SKU load at a time`);
      return { sku_id: input.sku_id, item_count: input.item_count, item_count_max: input.item_count_max };
    });
  }

  /** Changes a box's load: its SKU, count or maximum. */
  async patchLoad(boxId: number, input: Partial<LoadInput>): Promise<LoadRecord> {
    return this.changeLoad(boxId, (box) => {
      if (!box.load) throw new NotFoundError(`box ${boxId} holds no load`);
      const next = { ...box.load };
      if (input.sku_id !== undefined) next.sku_id = input.sku_id;
      if (input.item_count !== undefined) next.item_count = input.item_count;
      if (input.item_count_max !== undefined) next.item_count_max = input.item_count_max;
      checkCounts(next.item_count, next.item_count_max);
      return next;
    });
  }

  /** Empties a box; returns the load it held. */
  async removeLoad(boxId: number): Promise<LoadRecord> {
    let removed: LoadRecord | undefined;
    await this.changeLoad(boxId, (box) => {
      if (!box.load) throw new NotFoundError(`box ${boxId} holds no load`);
      removed = box.load;
      return null;
    });
    return removed!;
  }

  private async changeLoad(boxId: number, change: (box: BoxRecord) => LoadRecord | null): Promise<LoadRecord> {
    const box = await this.store.write(() => {
      const before = this.box(boxId);
      const load = change(before);
      if (load) {
        const sku = this.liveSku(load.sku_id, ['body', 'sku_id']);
        checkCapacity(sku, before.code32, load, ['body', 'item_count_max'], boxId);
      }
      const after = { ...before, load, updated_at: this.deps.now() };
      this.book(before, after);
      this.store.collection(boxes).put(after);
      return after;
    });
    this.deps.view?.refreshCarriers([box.carrier_id]);
    return box.load!;
  }

  // ------------------------------------------------------------------ the brain's bookings (inside its own write)

  /**
   * Books `delta` items into (positive) or out of (negative) a box's load as part of the
   * caller's write transaction; an emptied load is removed when its SKU says UNASSIGN.
   * Returns the box after the change. Call only inside Store.write; refresh the view after.
   */
  bookInWrite(boxId: number, delta: number): BoxRecord {
    const before = this.box(boxId);
    if (!before.load) throw new ConflictError(`box ${boxId} holds no load to book ${delta} against`);
    const count = before.load.item_count + delta;
    if (count < 0) throw new ConflictError(`box ${boxId} holds ${before.load.item_count} item(s); ${-delta} cannot be booked out`);
    if (count > before.load.item_count_max) throw new ConflictError(`box ${boxId} holds at most ${before.load.item_count_max} item(s); ${count} do not fit`);
    const sku = this.store.collection(skus).get(before.load.sku_id);
    const load = count === 0 && sku?.on_empty_sku_action === 'UNASSIGN' ? null : { ...before.load, item_count: count };
    const after = { ...before, load, updated_at: this.deps.now() };
    this.book(before, after);
    this.store.collection(boxes).put(after);
    return after;
  }

  /** Puts a new load of an SKU into an empty box in the caller's write transaction. */
  fillInWrite(boxId: number, skuId: string, count: number, max: number): BoxRecord {
    const before = this.box(boxId);
    if (before.load) return this.bookInWrite(boxId, count);
    checkCounts(count, max);
    const after = { ...before, load: { sku_id: skuId, item_count: count, item_count_max: max }, updated_at: this.deps.now() };
    this.book(before, after);
    this.store.collection(boxes).put(after);
    return after;
  }

  /** Changes what open work promises of an SKU: items out and room in. Call only inside Store.write. */
  reserveInWrite(skuId: string, out: number, into: number): void {
    if (!this.store.collection(skus).has(skuId)) return;
    this.adjust(skuId, this.deps.now(), (s) => {
      s.reserved_out = Math.max(0, s.reserved_out + out);
      s.reserved_in = Math.max(0, s.reserved_in + into);
    });
  }

  /** The carrier the store has on a cell, if any (inside Store.write: as that write has it). */
  carrierOnCell(levelId: number, x: number, y: number): string | undefined {
    return this.store.collection(carriers).findOne('position', positionKey(levelId, x, y))?.id;
  }

  /**
   * As placeCarrierInWrite, unless the store has another carrier on that cell: then nothing is
   * written and that carrier's id is returned (one carrier a cell). Call only inside Store.write.
   */
  placeCarrierUnlessTakenInWrite(carrierId: string, levelId: number, x: number, y: number): string | undefined {
    const there = this.carrierOnCell(levelId, x, y);
    if (there !== undefined && there !== carrierId) return there;
    this.placeCarrierInWrite(carrierId, levelId, x, y);
    return undefined;
  }

  /** Records where a carrier stands now (a storage space, a buffer, a port, or the cell of the bot holding it). Call only inside Store.write. */
  placeCarrierInWrite(carrierId: string, levelId: number, x: number, y: number): CarrierRecord {
    const current = this.store.collection(carriers).get(carrierId);
    const next: CarrierRecord = { id: carrierId, level_id: levelId, x, y, updated_at: this.deps.now() };
    if (current && current.level_id === levelId && current.x === x && current.y === y) return current;
    this.store.collection(carriers).put(next);
    // Its boxes keep its level (the `empty` index reads them by level); their age stays.
    if (current && current.level_id !== levelId) {
      for (const box of [...this.store.collection(boxes).findBy('carrier_id', carrierId)]) this.store.collection(boxes).put({ ...box, level_id: levelId });
    }
    return next;
  }

  // ------------------------------------------------------------------ first start

  /**
   * Writes the site layout's SKUs, carriers, boxes and loads into an empty inventory, with
   * the totals booked as for any load; a store that holds inventory already is left alone.
   * Returns whether it wrote anything.
   */
  async seedFromLayout(): Promise<boolean> {
    const { layout } = this.deps.site;
    const seeded = await this.store.write(() => {
      if (this.store.collection(skus).count() + this.store.collection(carriers).count() + this.store.collection(boxes).count() > 0) return false;
      const now = this.deps.now();
      for (const s of layout.skus) {
        this.store.collection(skus).put({
          ...emptyTotals(), id: s.id, name: s.name, measurement_unit: s.measurement_unit ?? 'PIECE', on_empty_sku_action: s.on_empty_sku_action ?? 'UNASSIGN',
          allowed_box_size_capacities: null, balcony_ids: s.balcony_ids ?? null, image: null, created_at: now, updated_at: now, deleted_at: null,
        });
      }
      let maxBox = 0;
      for (const c of layout.carriers) {
        this.store.collection(carriers).put({ id: c.id, level_id: c.level_id, x: c.x, y: c.y, updated_at: now });
        // The layout validator refuses overlaps too; this keeps a layout built around it out of the store.
        const taken = new Map<number, number>();
        for (const b of c.boxes ?? []) {
          const box: BoxRecord = { id: b.id, carrier_id: c.id, level_id: c.level_id, code32: parseSectionCode(b.section_code), load: b.load ?? null, updated_at: now };
          const clashes = [...taken].filter(([, code]) => overlaps(code, box.code32)).map(([id]) => id);
          if (clashes.length > 0) throw new ConflictError(`site layout: box ${b.id} overlaps box(es) ${clashes.join(', ')} on carrier ${c.id}`);
          taken.set(b.id, box.code32);
          this.book({ code32: box.code32, load: null }, box);
          this.store.collection(boxes).put(box);
          maxBox = Math.max(maxBox, b.id);
        }
      }
      this.store.raiseSequence('box', maxBox);
      return true;
    });
    return seeded;
  }

  // ------------------------------------------------------------------ rules and totals

  /** Moves SKU totals from a box's placement before a change to the one after it. */
  private book(before: Placement, after: Placement): void {
    const now = this.deps.now();
    const a = before.load;
    const b = after.load;
    if (a && b && a.sku_id === b.sku_id) {
      this.adjust(a.sku_id, now, (s) => {
        const delta = b.item_count - a.item_count;
        s.total_quantity += delta;
        s.max_quantity += b.item_count_max - a.item_count_max;
        s.sections += sectionCount(after.code32) - sectionCount(before.code32);
        if (delta > 0) s.total_positive_inventory_bookings += delta;
        else s.total_negative_inventory_bookings += delta;
      });
      return;
    }
    if (a) {
      this.adjust(a.sku_id, now, (s) => {
        s.total_quantity -= a.item_count;
        s.max_quantity -= a.item_count_max;
        s.sections -= sectionCount(before.code32);
        s.load_count -= 1;
        s.total_negative_inventory_bookings -= a.item_count;
      });
    }
    if (b) {
      this.adjust(b.sku_id, now, (s) => {
        s.total_quantity += b.item_count;
        s.max_quantity += b.item_count_max;
        s.sections += sectionCount(after.code32);
        s.load_count += 1;
        s.total_positive_inventory_bookings += b.item_count;
      });
    }
  }

  private adjust(skuId: string, now: number, fn: (s: SkuRecord) => void): void {
    const sku = { ...this.store.collection(skus).get(skuId)! };
    fn(sku);
    sku.updated_at = now;
    this.store.collection(skus).put(sku);
  }

  /** Refuses sections on a carrier that a box other than `ignore` already takes. */
  private checkFree(carrierId: string, code32: number, ignore: Set<number>, pending: BoxRecord[] = [], self?: number): void {
    const clashes: number[] = [];
    for (const other of this.store.collection(boxes).findBy('carrier_id', carrierId)) {
      if (!ignore.has(other.id) && overlaps(other.code32, code32)) clashes.push(other.id);
    }
    for (const other of pending) {
      if (other.id !== self && other.carrier_id === carrierId && overlaps(other.code32, code32)) clashes.push(other.id);
    }
    if (clashes.length > 0) {
      throw new ConflictError(`sections overlap on carrier ${carrierId}: box(es) ${[...new Set(clashes)].join(', ')} already take some of them`);
    }
  }

  private liveSku(id: string, loc?: (string | number)[]): SkuRecord {
    const sku = this.store.collection(skus).get(id);
    if (!sku || sku.deleted_at !== null) {
      if (loc) throw ValidationError.of(loc, `SKU ${id} does not exist${sku ? ' (deleted)' : ''}`, 'value_error.unknown_sku');
      throw new NotFoundError(`SKU ${id} does not exist${sku ? ' (deleted)' : ''}`);
    }
    return sku;
  }

  private checkSkuInput(input: SkuInput): void {
    const known = new Set(this.deps.site.balconies.map((b) => b.id));
    for (const [i, id] of (input.balcony_ids ?? []).entries()) {
      if (!known.has(id)) throw ValidationError.of(['body', 'balcony_ids', i], `balcony ${id} does not exist; balconies: ${[...known].join(', ')}`, 'value_error.unknown_balcony');
    }
  }
}

/** item_count within 0..item_count_max, and a maximum of at least 1 (the HTTP schema says so too; the brain calls here directly). */
function checkCounts(count: number, max: number): void {
  if (!Number.isInteger(count) || count < 0) throw ValidationError.of(['body', 'item_count'], `item_count must be an integer >= 0, not ${count}`, 'greater_than_equal');
  if (!Number.isInteger(max) || max < 1) throw ValidationError.of(['body', 'item_count_max'], `item_count_max must be an integer >= 1, not ${max}`, 'greater_than_equal');
  if (count > max) throw ValidationError.of(['body', 'item_count'], `item_count ${count} is above item_count_max ${max}`, 'value_error.item_count');
}

/** A load may not promise more than the SKU allows for a box of this size. */
function checkCapacity(sku: SkuRecord, code32: number, load: LoadRecord, loc: (string | number)[], boxId: number): void {
  const key = boxSizeKey(code32);
  const cap = sku.allowed_box_size_capacities?.[key];
  if (cap !== undefined && load.item_count_max > cap) {
    throw ValidationError.of(loc, `box ${boxId} (size ${key}) may hold at most ${cap} of SKU ${sku.id}, not ${load.item_count_max}`, 'value_error.capacity');
  }
}

function emptyTotals(): Omit<SkuRecord, 'id' | 'name' | 'measurement_unit' | 'on_empty_sku_action' | 'allowed_box_size_capacities' | 'balcony_ids' | 'image' | 'created_at' | 'updated_at' | 'deleted_at'> {
  return {
    total_quantity: 0, max_quantity: 0, total_positive_inventory_bookings: 0, total_negative_inventory_bookings: 0,
    reserved_out: 0, reserved_in: 0, load_count: 0, sections: 0,
  };
}
