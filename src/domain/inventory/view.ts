/**
 * The inventory view (spec 2.12, 4.6) kept in memory: one row per box on a carrier and one
 * per empty storage space (no carrier, or a carrier without boxes). Rows are rebuilt from
 * the store per carrier after each committed change, so the view can never drift from LMDB
 * for long, and a list request reads rows and small indexes without touching the disk. A
 * refresh is idempotent: it re-reads the carrier, so the order of refreshes does not matter.
 *
 * Rows are also kept in `eta` order (an OrderedIndex, ties in scan order), updated wherever a
 * row's eta changes: a list sorted by eta reads its page from that order instead of reading
 * and sorting every matching row (140,000 for half a large site).
 *
 * A row handed out is never written again: any change (a box, a move, an eta, the SKU's facts)
 * puts a changed copy in its place. So the list route may keep each row's serialized item
 * (`rowsImmutable`), and anything that keeps a row (a search text) keeps it by identity.
 */
import { OrderedIndex, type GatheredRows, type ListSource } from '../list/index.js';
import type { Site, SiteLevel, StorageSpace } from '../site/load.js';
import type { Store } from '../../store/store.js';
import { boxes, carriers, positionKey, skus, type BoxRecord, type CarrierRecord, type SkuRecord } from './records.js';
import { LevelEta, laneEta } from './eta.js';
import { boxSizeKey, codeDigits, legacyCode } from './section-code.js';

/** Default largest box height on a level, millimetres, when the layout gives none. */
export const DEFAULT_BOX_HEIGHT_MAX = 400;

/**
 * One row. The text forms of the section code are kept in the row, and the SKU facts are
 * reached through a slot rather than looked up by id: a `search=*:text` reads them from every
 * row (280,000 on a large site), where computing them or a Map lookup per row was a fifth of
 * its time. Other derived fields are computed through the field table.
 */
export interface InventoryRow {
  id: string;
  level_id: number;
  position_x: number;
  position_y: number;
  depth: number | null;
  carrier_id: string | null;
  box_id: number | null;
  code32: number | null;
  /** `code32` as the legacy 8-digit code (section_code), or null without a box. */
  section_code: string | null;
  /** The box size as a reduced fraction of a carrier (box_size_string), or null without a box. */
  box_size_string: string | null;
  /** Union of the section codes of every box on the carrier (0 without one). */
  occupancy: number;
  eta: number | null;
  sku_id: string | null;
  /** The SKU's facts as they are now (refreshSku fills the slot and replaces its rows), or null without a load. */
  sku: SkuSlot | null;
  item_count: number | null;
  item_count_max: number | null;
  box_height_max: number;
  updated_at: number | null;
  /**
   * The row's place in scan order, given by put when the row is first added (a replaced row
   * keeps it; a dropped and re-added one goes last): the tie order of every sort.
   */
  seq: number;
}

/** What rows show of an SKU. */
export interface SkuFacts {
  name: string | null;
  measurement_unit: string;
  on_empty_sku_action: string;
}

/** What rows of an SKU share: its facts, undefined while the store has no such SKU. */
export interface SkuSlot {
  facts: SkuFacts | undefined;
}

export class InventoryView implements ListSource<InventoryRow> {
  readonly rowsImmutable = true;
  private readonly rows = new Map<string, InventoryRow>();
  private readonly byCarrier = new Map<string, InventoryRow[]>();
  private readonly bySku = new Map<string, Set<InventoryRow>>();
  private readonly byLevel = new Map<number, Set<InventoryRow>>();
  private readonly byBox = new Map<number, InventoryRow>();
  /** Where each carrier stood at its last refresh: to restore the empty-space row it leaves. */
  private readonly carrierAt = new Map<string, string>();
  /** Carrier standing on each cell, by position key. */
  private readonly carrierOn = new Map<string, string>();
  /** One slot per SKU id ever seen, so that rows keep a reference and never look up by id. */
  private readonly skuSlots = new Map<string, SkuSlot>();
  /**
   * SKU ids per measurement unit (deleted SKUs too), kept with the slots: the SKU list finds
   * and counts `measurement_unit__in` here and reads only the page's records from the store.
   */
  private readonly skusByUnit = new Map<string, { ids: Set<string>; sorted: string[] | undefined }>();
  private readonly etas = new Map<number, LevelEta>();
  private readonly boxHeight = new Map<number, number>();
  /** Every row by eta (missing last), ties by seq; not kept during build, which loads it at the end. */
  private readonly etaOrder = new OrderedIndex<InventoryRow>((row) => row.eta, (a, b) => a.seq - b.seq);
  /** Lower-cased searchable text by row; a changed row is another object, so it never goes stale. */
  private readonly searchTexts = new WeakMap<InventoryRow, string>();
  private nextSeq = 0;
  private building = false;

  constructor(
    private readonly site: Site,
    private readonly store: Store,
  ) {
    for (const level of site.levels) this.etas.set(level.id, new LevelEta(level));
    for (const level of site.layout.levels) this.boxHeight.set(level.id, level.box_height_max ?? DEFAULT_BOX_HEIGHT_MAX);
  }

  /** Builds every row from the store: at start. */
  build(): void {
    // Each row's eta is set by refreshLane after its row is made: filing rows in eta order one
    // change at a time would move most of them twice. The order is loaded once at the end.
    this.building = true;
    try {
      this.buildRows();
    } finally {
      this.building = false;
      this.etaOrder.load(this.rows.values());
    }
  }

  private buildRows(): void {
    for (const sku of this.store.collection(skus).scan()) this.setFacts(sku.id, factsOf(sku));
    const byCarrier = new Map<string, BoxRecord[]>();
    for (const box of this.store.collection(boxes).scan()) {
      let list = byCarrier.get(box.carrier_id);
      if (!list) byCarrier.set(box.carrier_id, (list = []));
      list.push(box);
    }
    const all = [...this.store.collection(carriers).scan()];
    // A space whose carrier holds boxes shows box rows, not its empty row: making that row
    // only for place() to drop it was a third of the build. The rows and their order are
    // those of placing every carrier over all the empty rows.
    const boxed = new Set<StorageSpace>();
    for (const carrier of all) {
      const space = this.site.level(carrier.level_id)?.spaceAt(carrier.x, carrier.y);
      if (space && byCarrier.has(carrier.id)) boxed.add(space);
    }
    for (const level of this.site.levels) for (const space of level.storage) if (!boxed.has(space)) this.put(this.spaceRow(space, null));
    for (const carrier of all) this.place(carrier, byCarrier.get(carrier.id) ?? []);
    for (const level of this.site.levels) for (const lane of level.lanes) this.refreshLane(level, lane.index);
  }

  /** Re-reads carriers after a committed change and rebuilds their rows. */
  refreshCarriers(ids: Iterable<string>): void {
    const lanes = new Set<string>();
    for (const id of ids) {
      const carrier = this.store.collection(carriers).get(id);
      const before = this.carrierAt.get(id);
      // A carrier that stays on its cell keeps its rows (and their place in scan order).
      if (before !== undefined && (!carrier || before !== positionKey(carrier.level_id, carrier.x, carrier.y))) this.leave(id, before, lanes);
      if (carrier) {
        this.place(carrier, [...this.store.collection(boxes).findBy('carrier_id', id)]);
        this.noteLane(carrier.level_id, carrier.x, carrier.y, lanes);
      }
    }
    for (const key of lanes) {
      const [level, lane] = key.split(':').map(Number) as [number, number];
      this.refreshLane(this.site.level(level)!, lane);
    }
  }

  /** Re-reads an SKU's name, unit and empty action after a committed change. */
  refreshSku(id: string): void {
    const sku = this.store.collection(skus).get(id);
    const facts = sku ? factsOf(sku) : undefined;
    const slot = this.slot(id);
    if (sameFacts(slot.facts, facts)) return;
    this.setFacts(id, facts);
    // The rows show the facts: each becomes a new object, as for any other change.
    for (const row of [...(this.bySku.get(id) ?? [])]) this.replace(row, { ...row });
  }

  /** Ids of the SKUs (deleted ones too) with this measurement unit, in id order. */
  skuIdsWithUnit(unit: string): readonly string[] {
    const entry = this.skusByUnit.get(unit);
    if (!entry) return [];
    entry.sorted ??= [...entry.ids].sort();
    return entry.sorted;
  }

  searchText(row: InventoryRow, compute: (row: InventoryRow) => string): string {
    let text = this.searchTexts.get(row);
    if (text === undefined) this.searchTexts.set(row, (text = compute(row)));
    return text;
  }

  /** What rows show of an SKU, if it exists. */
  sku(id: string | null): SkuFacts | undefined {
    return id === null ? undefined : this.skuSlots.get(id)?.facts;
  }

  /** Number of rows. */
  get size(): number {
    return this.rows.size;
  }

  rank(row: InventoryRow): number {
    return row.seq;
  }

  ordered(field: string, descending: boolean): Iterable<readonly InventoryRow[]> | undefined {
    switch (field) {
      case 'eta': return this.etaOrder.ordered(descending);
      // eta_int is Math.round(eta) (routes/inventory.ts): runs of etas that round alike join.
      case 'eta_int': return this.etaOrder.ordered(descending, Math.round);
      default: return undefined;
    }
  }

  countLookup(field: string, values: readonly unknown[]): number | undefined {
    let n = 0;
    switch (field) {
      case 'sku_id': for (const v of values) n += this.bySku.get(v as string)?.size ?? 0; return n;
      case 'level_id': for (const v of values) n += this.byLevel.get(v as number)?.size ?? 0; return n;
      case 'carrier_id': for (const v of values) for (const r of this.byCarrier.get(v as string) ?? []) if (r.carrier_id === v) n++; return n;
      case 'box_id': for (const v of values) if (this.byBox.has(v as number)) n++; return n;
      default: return undefined;
    }
  }

  lookup(field: string, values: readonly unknown[]): Iterable<InventoryRow> | GatheredRows<InventoryRow> | undefined {
    switch (field) {
      case 'sku_id': return this.fromIndex(this.bySku, values);
      case 'level_id': return this.fromIndex(this.byLevel, values);
      case 'carrier_id': return values.flatMap((v) => (this.byCarrier.get(v as string) ?? []).filter((r) => r.carrier_id === v));
      case 'box_id': return values.flatMap((v) => (this.byBox.has(v as number) ? [this.byBox.get(v as number)!] : []));
      default: return undefined;
    }
  }

  scan(): Iterable<InventoryRow> {
    return this.rows.values();
  }

  // ------------------------------------------------------------------ row upkeep

  private setFacts(id: string, facts: SkuFacts | undefined): void {
    const slot = this.slot(id);
    const before = slot.facts?.measurement_unit;
    if (before !== undefined && before !== facts?.measurement_unit) {
      const entry = this.skusByUnit.get(before)!;
      entry.ids.delete(id);
      entry.sorted = undefined;
    }
    if (facts !== undefined && before !== facts.measurement_unit) {
      let entry = this.skusByUnit.get(facts.measurement_unit);
      if (!entry) this.skusByUnit.set(facts.measurement_unit, (entry = { ids: new Set(), sorted: undefined }));
      entry.ids.add(id);
      entry.sorted = undefined;
    }
    slot.facts = facts;
  }

  private slot(id: string): SkuSlot {
    let slot = this.skuSlots.get(id);
    if (!slot) this.skuSlots.set(id, (slot = { facts: undefined }));
    return slot;
  }

  private fromIndex<K>(index: Map<K, Set<InventoryRow>>, values: readonly unknown[]): Iterable<InventoryRow> | GatheredRows<InventoryRow> {
    if (values.length === 1) return index.get(values[0] as K) ?? [];
    // Gathered only when asked: a list that reads rows in eta order never needs these
    // (140,000 for two levels of a large site, ~3 ms to gather), an unsorted page stops early.
    const sets = values.map((v) => index.get(v as K) ?? new Set<InventoryRow>());
    let gathered: InventoryRow[] | undefined;
    return {
      *[Symbol.iterator]() {
        for (const set of sets) yield* set;
      },
      toArray() {
        if (gathered === undefined) {
          gathered = [];
          for (const set of sets) for (const row of set) gathered.push(row);
        }
        return gathered;
      },
    };
  }

  /** Rows of a carrier at its position: one per box, or its space's empty row when it has none. */
  private place(carrier: CarrierRecord, carrierBoxes: BoxRecord[]): void {
    const cell = positionKey(carrier.level_id, carrier.x, carrier.y);
    this.carrierAt.set(carrier.id, cell);
    this.carrierOn.set(cell, carrier.id);
    const level = this.site.level(carrier.level_id);
    const space = level?.spaceAt(carrier.x, carrier.y);
    let occupancy = 0;
    for (const box of carrierBoxes) occupancy = (occupancy | box.code32) >>> 0;

    const old = this.byCarrier.get(carrier.id) ?? [];
    const list: InventoryRow[] = [];
    if (carrierBoxes.length === 0) {
      if (space) list.push(this.put(this.spaceRow(space, carrier)));
    } else {
      if (space) this.drop(spaceId(space.level_id, space.x, space.y));
      for (const box of carrierBoxes) {
        const texts = codeTexts(box.code32);
        const row: InventoryRow = {
          id: `box-${box.id}`,
          level_id: carrier.level_id,
          position_x: carrier.x,
          position_y: carrier.y,
          depth: space?.depth ?? null,
          carrier_id: carrier.id,
          box_id: box.id,
          code32: box.code32,
          section_code: texts.section_code,
          box_size_string: texts.box_size_string,
          occupancy,
          eta: null,
          sku_id: box.load?.sku_id ?? null,
          sku: box.load ? this.slot(box.load.sku_id) : null,
          item_count: box.load?.item_count ?? null,
          item_count_max: box.load?.item_count_max ?? null,
          box_height_max: this.boxHeight.get(carrier.level_id) ?? DEFAULT_BOX_HEIGHT_MAX,
          updated_at: box.updated_at,
          seq: 0,
        };
        list.push(this.put(row));
      }
    }
    if (old.length > 0) {
      // A row may have moved to another carrier already (a swap refreshes both): leave it there.
      const keep = new Set(list.map((row) => row.id));
      for (const row of old) if (!keep.has(row.id) && this.boxRowOf(row.id, carrier.id)) this.drop(row.id);
    }
    this.byCarrier.set(carrier.id, list);
    if (!space) {
      const eta = this.etas.get(carrier.level_id)?.offLane(carrier.x, carrier.y);
      for (const row of list) this.setEta(row, eta ?? null);
    }
  }

  /** Takes a carrier off the cell it stood on, restoring that space's empty row. */
  private leave(carrierId: string, cell: string, lanes: Set<string>): void {
    for (const row of this.byCarrier.get(carrierId) ?? []) if (this.boxRowOf(row.id, carrierId)) this.drop(row.id);
    this.byCarrier.delete(carrierId);
    this.carrierAt.delete(carrierId);
    if (this.carrierOn.get(cell) === carrierId) this.carrierOn.delete(cell);
    const [level, x, y] = cell.split(':').map(Number) as [number, number, number];
    const space = this.site.level(level)?.spaceAt(x, y);
    if (space) this.put(this.spaceRow(space, null));
    this.noteLane(level, x, y, lanes);
  }

  /** Whether the view's row `id` is a box row of this carrier now (a list may hold an older copy). */
  private boxRowOf(id: string, carrierId: string): boolean {
    const row = this.rows.get(id);
    return row !== undefined && row.box_id !== null && row.carrier_id === carrierId;
  }

  private noteLane(levelId: number, x: number, y: number, lanes: Set<string>): void {
    const space = this.site.level(levelId)?.spaceAt(x, y);
    if (space) lanes.add(`${levelId}:${space.lane}`);
  }

  /** Sets `eta` on every row of a lane: it depends on the carriers standing in front. */
  private refreshLane(level: SiteLevel, laneIndex: number): void {
    const lane = level.lanes[laneIndex]!;
    const model = this.etas.get(level.id)!;
    // Seconds to set aside the carriers met so far, nearest the highway first.
    let aside: number | undefined = 0;
    for (const space of lane.spaces) {
      const carrierId = this.carrierOn.get(positionKey(level.id, space.x, space.y));
      if (carrierId === undefined) {
        const row = this.rows.get(spaceId(level.id, space.x, space.y));
        if (row) this.setEta(row, null);
        continue;
      }
      const eta = laneEta(model.fetch(lane, space.depth), aside);
      for (const row of this.byCarrier.get(carrierId) ?? []) this.setEta(row, eta);
      const cost = model.setAside(lane, space.depth);
      aside = aside === undefined || cost === undefined ? undefined : aside + cost;
    }
  }

  private spaceRow(space: StorageSpace, carrier: CarrierRecord | null): InventoryRow {
    return {
      id: spaceId(space.level_id, space.x, space.y),
      level_id: space.level_id,
      position_x: space.x,
      position_y: space.y,
      depth: space.depth,
      carrier_id: carrier?.id ?? null,
      box_id: null,
      code32: null,
      section_code: null,
      box_size_string: null,
      occupancy: 0,
      eta: null,
      sku_id: null,
      sku: null,
      item_count: null,
      item_count_max: null,
      box_height_max: this.boxHeight.get(space.level_id) ?? DEFAULT_BOX_HEIGHT_MAX,
      updated_at: carrier?.updated_at ?? null,
      seq: 0,
    };
  }

  /** Gives a row its eta: a copy in its place, or the row itself during build (none handed out yet). */
  private setEta(row: InventoryRow, eta: number | null): void {
    if (row.eta === eta) return;
    if (this.building) row.eta = eta;
    else this.replace(row, { ...row, eta });
  }

  /** Puts a changed copy where a row was (indexes, eta order, its carrier's list); an older copy is left alone. */
  private replace(old: InventoryRow, next: InventoryRow): void {
    if (this.rows.get(old.id) !== old) return;
    this.unindex(old, next);
    this.rows.set(next.id, next);
    this.index(next);
    const list = old.carrier_id === null ? undefined : this.byCarrier.get(old.carrier_id);
    const i = list ? list.indexOf(old) : -1;
    if (i >= 0) list![i] = next;
  }

  /** Inserts a row, or puts it in place of the row with its id, keeping that row's place in scan order. */
  private put(row: InventoryRow): InventoryRow {
    const old = this.rows.get(row.id);
    if (old) {
      row.seq = old.seq;
      this.unindex(old, row);
    } else row.seq = this.nextSeq++;
    this.rows.set(row.id, row);
    this.index(row);
    return row;
  }

  private drop(id: string): void {
    const row = this.rows.get(id);
    if (!row) return;
    this.unindex(row);
    this.rows.delete(id);
  }

  private index(row: InventoryRow): void {
    if (row.sku_id !== null) addTo(this.bySku, row.sku_id, row);
    addTo(this.byLevel, row.level_id, row);
    if (row.box_id !== null) this.byBox.set(row.box_id, row);
    if (!this.building) this.etaOrder.add(row);
  }

  /** Takes a row out of the indexes; `next`, the row about to take its place, if any. */
  private unindex(row: InventoryRow, next?: InventoryRow): void {
    if (row.sku_id !== null) this.bySku.get(row.sku_id)?.delete(row);
    this.byLevel.get(row.level_id)?.delete(row);
    // A box that keeps its row is overwritten, not deleted and added: a Map walks the chain of
    // every earlier delete of a key when it is added again.
    if (row.box_id !== null && row.box_id !== next?.box_id && this.byBox.get(row.box_id) === row) this.byBox.delete(row.box_id);
    if (!this.building) this.etaOrder.remove(row);
  }
}

function spaceId(level: number, x: number, y: number): string {
  return `space-${level}-${x}-${y}`;
}

function addTo<K>(index: Map<K, Set<InventoryRow>>, key: K, row: InventoryRow): void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(row);
}

/**
 * The text forms of a section code, shared by every row with that code: a site has few
 * distinct codes, so each row holds two references instead of two strings of its own.
 */
const codeTextCache = new Map<number, { section_code: string; box_size_string: string }>();
const CODE_TEXT_CACHE_MAX = 4096;

function codeTexts(code32: number): { section_code: string; box_size_string: string } {
  let texts = codeTextCache.get(code32);
  if (!texts) {
    // Bounded for a store full of unusual codes; refilling costs microseconds.
    if (codeTextCache.size >= CODE_TEXT_CACHE_MAX) codeTextCache.clear();
    texts = { section_code: codeDigits(legacyCode(code32), 8), box_size_string: boxSizeKey(code32) };
    codeTextCache.set(code32, texts);
  }
  return texts;
}

function sameFacts(a: SkuFacts | undefined, b: SkuFacts | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.name === b.name && a.measurement_unit === b.measurement_unit && a.on_empty_sku_action === b.on_empty_sku_action);
}

function factsOf(sku: SkuRecord): SkuFacts {
  return { name: sku.name, measurement_unit: sku.measurement_unit, on_empty_sku_action: sku.on_empty_sku_action };
}
