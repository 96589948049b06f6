/**
 * Every SKU (deleted ones too) in memory, in the store's key order, kept current on every
 * commit (this thread's and, through the commit bridge, the brain's): the SKU list's source.
 * A search (`search=name:bolt`) reads every SKU; from LMDB that decoded each record on every
 * call, 7 ms a request with 1,000 SKUs and 26 ms with 4,400, here it is a pass over
 * objects already decoded.
 *
 * A changed SKU is read anew from the store and replaces its object, never written in place,
 * so the list route may keep each row's serialized item (`rowsImmutable`) and a search text is
 * kept by row identity.
 *
 * A list sorted by a stock count (`sort_by=-total_quantity`) reads the SKUs in that order
 * until its page is full (`ordered`) instead of sorting every SKU or every match of its
 * search: about 20 rows read for a page of 20, at 1,000 SKUs as at 10,000.
 */
import { OrderedIndex, SortedChunks, SubstringIndex, type GatheredRows, type KeysHolding, type ListSource, type SearchMatches } from '../list/index.js';
import type { CommitNotice, Store } from '../../store/store.js';
import { compareKeys } from '../../store/collection.js';
import { skus, type SkuRecord } from './records.js';

type OrderedField = 'total_quantity' | 'max_quantity' | 'load_count';

/**
 * A searched text's substring index, and the matches of some of its needles in the order of
 * a field (ANSWER_ORDERS of them, the least recently used dropped first), all kept current on
 * commit: `search=name:bolt&sort_by=-total_quantity` reads its page of 20 from the top of its
 * own matches. Walking every SKU in that order and testing each against the matches read ten
 * rows a hit, and each test missed the processor's caches (a tenth of the main thread under
 * load).
 */
interface Substrings {
  index: SubstringIndex<string>;
  compute: (row: SkuRecord) => string;
  /** By field and needle. */
  orders: Map<string, { needle: string; index: OrderedIndex<SkuRecord> }>;
}

/** Needle and field pairs whose matches are kept in order, per searched text. */
const ANSWER_ORDERS = 32;

/** The integer fields a sorted list may read in order: the record's own, never null. */
const ORDERED_FIELDS = new Set<string>(['total_quantity', 'max_quantity', 'load_count'] satisfies OrderedField[]);

export class SkuTable implements ListSource<SkuRecord> {
  readonly rowsImmutable = true;
  private readonly byId = new Map<string, SkuRecord>();
  /** Ids in the store's key order (UTF-8 byte order, as LMDB sorts them), in chunks: a new id moves one chunk, not every id after it. */
  private readonly ids = new SortedChunks<string>(compareKeys);
  /** The rows in key order as one array, made when a list reads them all and dropped on a change. */
  private rows: SkuRecord[] | undefined;
  /** Ids per measurement unit, in key order, in chunks (a new SKU of a unit moves one chunk). */
  private readonly byUnit = new Map<string, SortedChunks<string>>();
  private readonly searchTexts = new WeakMap<SkuRecord, string>();
  /** Lower-cased text of single fields by row (`search=name:bolt`), kept as long as the row. */
  private readonly fieldTexts = new WeakMap<SkuRecord, Map<string, string>>();
  /** Substring indexes of the texts searched so far (a field, or `*`), built on the first search of each and kept current on commit. */
  private readonly substrings = new Map<string, Substrings>();
  /** The rows in the order of each field of ORDERED_FIELDS sorted on so far, kept current on commit. */
  private readonly orders = new Map<string, OrderedIndex<SkuRecord>>();
  private readonly stop: () => void;

  /** Reads every SKU of the store and follows its commits from then on. */
  constructor(private readonly store: Store) {
    const ids: string[] = [];
    const byUnit = new Map<string, string[]>();
    for (const sku of store.collection(skus).scan()) {
      this.byId.set(sku.id, sku);
      ids.push(sku.id);
      let unit = byUnit.get(sku.measurement_unit);
      if (!unit) byUnit.set(sku.measurement_unit, (unit = []));
      unit.push(sku.id);
    }
    this.ids.load(ids);
    for (const [unit, unitIds] of byUnit) this.unitOf(unit).load(unitIds);
    this.stop = store.onCommit((notice) => this.apply(notice));
  }

  /** Stops following the store. */
  close(): void {
    this.stop();
  }

  /** Number of SKUs held. */
  get size(): number {
    return this.byId.size;
  }

  /** The SKU with this id as the last commit left it (deleted ones too). */
  get(id: string): SkuRecord | undefined {
    return this.byId.get(id);
  }

  /**
   * The SKUs (deleted ones too) of `id`s or of measurement units, read as they are iterated:
   * an unsorted page of a unit reads its page, not all of the unit's SKUs.
   */
  lookup(field: string, values: readonly unknown[]): GatheredRows<SkuRecord> | undefined {
    let ids: () => Iterable<string>;
    if (field === 'id') ids = () => values as string[];
    else if (field === 'measurement_unit') ids = () => this.idsWithUnits([...new Set(values as string[])]);
    else return undefined;
    const read = () => this.skusOf(ids());
    return { [Symbol.iterator]: read, toArray: () => [...read()] };
  }

  /** Ids of the SKUs of these units, each unit's in key order. */
  private *idsWithUnits(units: readonly string[]): Generator<string> {
    for (const unit of units) for (const part of this.byUnit.get(unit)?.parts ?? []) yield* part;
  }

  private *skusOf(ids: Iterable<string>): Generator<SkuRecord> {
    for (const id of ids) {
      const sku = this.byId.get(id);
      if (sku) yield sku;
    }
  }

  countLookup(field: string, values: readonly unknown[]): number | undefined {
    if (field === 'id') return (values as string[]).filter((id) => this.byId.has(id)).length;
    if (field === 'measurement_unit') return [...new Set(values as string[])].reduce((n, unit) => n + (this.byUnit.get(unit)?.size ?? 0), 0);
    return undefined;
  }

  /**
   * Every SKU in key order, read as it is iterated (an unsorted page reads its page), or as
   * one array for a list that reads them all, kept until the next change.
   */
  scan(): GatheredRows<SkuRecord> {
    return { [Symbol.iterator]: () => this.skusOf(this.allIds()), toArray: () => (this.rows ??= this.allRows()) };
  }

  private *allIds(): Generator<string> {
    for (const part of this.ids.parts) yield* part;
  }

  /** Every SKU in key order, without generators: a sort of them all reads this after each change. */
  private allRows(): SkuRecord[] {
    const rows: SkuRecord[] = [];
    for (const part of this.ids.parts) for (const id of part) rows.push(this.byId.get(id)!);
    return rows;
  }

  searchText(row: SkuRecord, compute: (row: SkuRecord) => string): string {
    let text = this.searchTexts.get(row);
    if (text === undefined) this.searchTexts.set(row, (text = compute(row)));
    return text;
  }

  fieldText(row: SkuRecord, field: string, compute: (row: SkuRecord) => string): string {
    let texts = this.fieldTexts.get(row);
    if (texts === undefined) this.fieldTexts.set(row, (texts = new Map()));
    let text = texts.get(field);
    if (text === undefined) texts.set(field, (text = compute(row)));
    return text;
  }

  searchCandidates(text: string, needle: string, compute: (row: SkuRecord) => string): SearchMatches<SkuRecord> | undefined {
    let entry = this.substrings.get(text);
    if (!entry) {
      entry = { index: new SubstringIndex(), compute, orders: new Map() };
      for (const sku of this.byId.values()) entry.index.set(sku.id, compute(sku));
      this.substrings.set(text, entry);
    }
    const ids = entry.index.holding(needle);
    if (ids === undefined) return undefined;
    let rows: SkuRecord[] | undefined;
    const searched = entry;
    return {
      size: ids.size,
      has: (row) => ids.has(row.id),
      rows: () => (rows ??= this.inKeyOrder(ids)),
      ordered: (field, descending) => {
        if (!ORDERED_FIELDS.has(field)) return undefined;
        const key = `${field}\u0000${needle}`;
        let order = searched.orders.get(key);
        if (order) {
          searched.orders.delete(key);
        } else {
          order = { needle, index: orderedBy(field as OrderedField) };
          order.index.load(rows ??= this.inKeyOrder(ids));
          if (searched.orders.size >= ANSWER_ORDERS) searched.orders.delete(searched.orders.keys().next().value!);
        }
        // Last in the Map's order: the least recently used is dropped first.
        searched.orders.set(key, order);
        return order.index.ordered(descending);
      },
    };
  }

  /** The SKUs of `ids` in key order, as scan() gives them. */
  private inKeyOrder(ids: KeysHolding<string>): SkuRecord[] {
    let ordered: string[];
    // Sorting a few beats a pass over every id.
    if (ids.size * 8 < this.ids.size) ordered = [...ids].sort(compareKeys);
    else {
      ordered = [];
      for (const part of this.ids.parts) for (const id of part) if (ids.has(id)) ordered.push(id);
    }
    return ordered.map((id) => this.byId.get(id)!);
  }

  /** The SKU's place in key order (the list engine's tie order when it sorts rows itself). */
  rank(row: SkuRecord): number {
    return this.ids.rank(row.id);
  }

  ordered(field: string, descending: boolean): Iterable<readonly SkuRecord[]> | undefined {
    if (!ORDERED_FIELDS.has(field)) return undefined;
    let order = this.orders.get(field);
    if (!order) {
      order = orderedBy(field as OrderedField);
      order.load(this.scan());
      this.orders.set(field, order);
    }
    return order.ordered(descending);
  }

  private apply(notice: CommitNotice): void {
    const changed = notice[skus.name];
    if (!changed) return;
    for (const key of changed) {
      const id = String(key);
      const before = this.byId.get(id);
      const now = this.store.collection(skus).get(id);
      // Out of the orders under its old values; back in under its new ones.
      if (before) for (const order of this.orders.values()) order.remove(before);
      // A unit that stays stays untouched: its ids do not change.
      const unitChanged = before?.measurement_unit !== now?.measurement_unit;
      if (before && unitChanged) this.leaveUnit(id, before.measurement_unit);
      for (const { index, compute, orders } of this.substrings.values()) {
        const text = now && compute(now);
        index.set(id, text);
        for (const { needle, index: order } of orders.values()) {
          if (before) order.remove(before);
          if (now && text!.includes(needle)) order.add(now);
        }
      }
      if (now) {
        if (!before) this.ids.insert(id);
        this.byId.set(id, now);
        if (unitChanged) this.joinUnit(id, now.measurement_unit);
      } else if (before) {
        // SKUs are deleted softly; a record gone from the store (a restore) leaves here too.
        this.byId.delete(id);
        this.ids.remove(id);
      }
      if (now) for (const order of this.orders.values()) order.add(now);
    }
    this.rows = undefined;
  }

  private unitOf(unit: string): SortedChunks<string> {
    let ids = this.byUnit.get(unit);
    if (!ids) this.byUnit.set(unit, (ids = new SortedChunks<string>(compareKeys)));
    return ids;
  }

  private joinUnit(id: string, unit: string): void {
    this.unitOf(unit).insert(id);
  }

  private leaveUnit(id: string, unit: string): void {
    const ids = this.byUnit.get(unit);
    if (!ids) return;
    ids.remove(id);
    if (ids.size === 0) this.byUnit.delete(unit);
  }
}

/** An empty index of SKUs in the order of `field`, ties in key order. */
function orderedBy(field: OrderedField): OrderedIndex<SkuRecord> {
  return new OrderedIndex<SkuRecord>((row) => row[field], (a, b) => compareKeys(a.id, b.id));
}
