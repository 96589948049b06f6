/**
 * Runs a ListQuery over a source: candidates from an index when an `eq`/`in` filter allows it
 * (so such a filter never scans), then the other filters and the search, then sort and page.
 * A sort on a field the source keeps in order reads rows in that order until the page is full
 * (orderedPage) when that reads fewer rows than sorting the candidates would. Predicates are
 * built once per query; the per-row path does no parsing and no allocation beyond what the
 * sort needs.
 */
import { valueOf, type FieldTable, type Filter, type GatheredRows, type ListQuery, type OrderedRows, type ListSource, type Page, type SearchMatches, type SearchNode, type SortKey } from './fields.js';
import { likeMatcher } from './like.js';
import { compareKeys } from '../../store/collection.js';

type Predicate<T> = (row: T) => boolean;

/** How a sorted list is ordered: by expected cost (`auto`), or forced, so tests can compare the two ways. */
export type OrderPlan = 'auto' | 'walk' | 'sort';

interface Candidates<T> {
  rows: Iterable<T>;
  /** The rows are exactly these matches of the search (a single term, from the source's substring index). */
  searched?: SearchMatches<T>;
  /** The filters an index answered: the rows are exactly those they match, so none is tested again. */
  answered?: Answered<T>;
}

interface Answered<T> {
  filters: readonly Filter[];
  /** How many rows the index gives, when it knows without reading them. */
  count(): number | undefined;
  /** Whether a row is one of them (for a walk in another order). */
  has: Predicate<T>;
}

/** One page of rows of `source` matching `query`; `plan` forces one way of sorting (tests). */
export function executeList<T>(table: FieldTable<T>, source: ListSource<T>, query: ListQuery, plan: OrderPlan = 'auto'): Page<T> {
  const found = candidates(table, source, query.filters, query.search);
  const { rows, answered } = found;
  const tests: Predicate<T>[] = query.filters.filter((f) => !answered?.filters.includes(f)).map((f) => filterPredicate(table, f));
  if (query.search && !found.searched) tests.push(searchPredicate(table, query.search, source));
  const matches = (row: T): boolean => {
    for (const test of tests) if (!test(row)) return false;
    return true;
  };

  const start = (query.page - 1) * query.size;
  const end = start + query.size;
  let items: T[];
  let total = 0;
  const counted = tests.length === 0 && query.sort.length === 0 ? countedRows(source, found) : undefined;
  if (counted !== undefined) {
    // Nothing to test, no sort: the index, the search's matches or the source counts the
    // rows; read just the rows up to the page.
    items = [];
    // A page past the end reads nothing.
    if (counted > start) {
      for (const row of rows) {
        if (total >= start) items.push(row);
        if (++total >= end) break;
      }
    }
    total = counted;
  } else if (query.sort.length === 0) {
    // No sort: keep only the requested page, count the rest.
    items = [];
    for (const row of every(rows)) {
      if (!matches(row)) continue;
      if (total >= start && total < end) items.push(row);
      total++;
    }
  } else {
    const [first] = query.sort as [SortKey];
    // The candidates' own order (a lookup's, a search's) reads just them: walk it whatever the share of matches.
    const own = answered ? (rows as Partial<OrderedRows<T>>).inOrderOf?.(first.field, first.descending) : found.searched?.ordered?.(first.field, first.descending);
    const kept = own ?? (source.rank ? source.ordered?.(first.field, first.descending) : undefined);
    const walked = plan === 'sort' || kept === undefined ? { rowsRead: false } : orderedPage(table, source, query, kept, found, matches, tests.length, start, end, plan === 'walk' || own !== undefined, own !== undefined);
    if ('items' in walked) {
      ({ items, total } = walked);
    } else {
      // The candidates may have been read (counted) already: an iterator is then spent.
      const again = walked.rows ?? (walked.rowsRead ? every(candidates(table, source, query.filters, query.search).rows) : every(rows));
      let all: readonly T[];
      if (tests.length === 0) {
        all = Array.isArray(again) ? (again as readonly T[]) : Array.from(again);
      } else {
        const hits: T[] = [];
        for (const row of again) if (matches(row)) hits.push(row);
        all = hits;
      }
      total = all.length;
      // Rows found through an index come in the index's order. Where the source also keeps
      // this sort's order, the answer may come from either way: ties must keep the store's.
      items = sortedPage(table, all, query.sort, start, end, answered && kept && !own ? source.rank!.bind(source) : undefined);
    }
  }
  return { items, total, page: query.page, size: query.size, pages: Math.ceil(total / query.size) };
}

/**
 * A sorted page read from the source's order of the first sort key (ListSource.ordered): rows
 * in that order, tested against every filter, until the page is full; further sort keys
 * order each run of equal first-key values. The total comes from the index, the search's
 * matches or the source's size when no other filter applies, else from one pass over the
 * candidates.
 *
 * Tried when the rows it expects to read (the page's end over the share of rows that match)
 * are at most an eighth of the candidates a sort reads (at most as many, for a search's
 * matches not listed yet); it gives up after reading half as many rows as there are
 * candidates (as many, for those matches: an order that puts the matches last), and the
 * caller sorts. Both ways give the same answer: ties keep the store's order (`rank`).
 *
 * With `onlyCandidates`, `runs` are the candidates' own order (OrderedRows, SearchMatches):
 * every row in them is a candidate, so none is tested for it, and the walk never gives up
 * for a sort.
 */
function orderedPage<T>(
  table: FieldTable<T>, source: ListSource<T>, query: ListQuery, runs: Iterable<readonly T[]>, found: Candidates<T>, matches: Predicate<T>,
  testCount: number, start: number, end: number, force: boolean, onlyCandidates: boolean,
): { items: T[]; total: number } | { rowsRead: boolean; rows?: readonly T[] } {
  const rest = query.sort.slice(1);
  // The source's size is needed to judge whether walking pays, which a forced walk does not
  // ask: a collection counts its records from LMDB's statistics, 9 % of the API thread in
  // `GET /jobs?status__eq=…`, whose page comes from the status's own order.
  const size = force ? undefined : source.size;
  if (size === undefined && !force) return { rowsRead: false };

  // A search answered by the source's substring index dropped its test: the walk tests
  // membership in its matches instead, and their number is the total when nothing else
  // applies; they are never listed.
  const searched = found.searched;
  // A forced walk reads the source's size only where it is the total.
  let candidates = found.answered ? found.answered.count() : searched ? searched.size : (size ?? (testCount === 0 ? source.size : undefined));
  let total = testCount === 0 ? candidates : undefined;
  let rowsRead = false;
  let rows: readonly T[] | undefined;
  if (total === undefined) {
    rowsRead = true;
    candidates = 0;
    total = 0;
    const list = every(found.rows);
    // Kept for the sort if the walk gives up: an array can be read twice.
    if (Array.isArray(list)) rows = list as readonly T[];
    for (const row of list) {
      candidates++;
      if (matches(row)) total++;
    }
  }
  if (total <= start) return { items: [], total };
  let budget = Infinity;
  if (!force) {
    const expected = (end * size!) / total;
    // Rows in hand sort fast: walk only when it reads far fewer. A search's matches not
    // listed yet would first cost a pass over them all: walk while it reads no more.
    const unlisted = searched !== undefined && !rowsRead;
    if (expected * (unlisted ? 1 : 8) > candidates!) return { rowsRead, rows };
    budget = unlisted ? candidates! : candidates! / 2;
  }

  const inIndex = onlyCandidates ? undefined : found.answered ? found.answered.has : searched ? (row: T) => searched.has(row) : undefined;
  const keep = inIndex === undefined ? matches : (row: T) => inIndex(row) && matches(row);
  const items: T[] = [];
  let passed = 0;
  let read = 0;
  if (rest.length === 0) {
    for (const run of runs) {
      for (const row of run) {
        if (++read > budget) return { rowsRead, rows };
        if (!keep(row)) continue;
        if (passed >= start) items.push(row);
        if (++passed >= end) return { items, total };
      }
    }
    return { items, total };
  }
  // More sort keys: order the matches of each first-key value by them. A value's rows may
  // come in several runs one after the other (an OrderedIndex's chunks): they are gathered
  // until the value changes. Runs are in rank order, so ties in the rest of the keys keep it.
  const first = table[query.sort[0]!.field]!;
  const firstName = query.sort[0]!.field;
  let hits: T[] = [];
  let value: unknown;
  const flush = (): void => {
    if (passed + hits.length > start) items.push(...sortedPage(table, hits, rest, Math.max(0, start - passed), end - passed));
    passed += hits.length;
    hits = [];
  };
  for (const run of runs) {
    if (run.length === 0) continue;
    read += run.length;
    if (read > budget) return { rowsRead, rows };
    const runValue = valueOf(first, firstName, run[0]!);
    if (runValue !== value) {
      flush();
      if (passed >= end) return { items, total };
      value = runValue;
    }
    for (const row of run) if (keep(row)) hits.push(row);
  }
  flush();
  return { items, total };
}

/** Rows to read every one of: a lookup's gathered array where it offers one (GatheredRows). */
function every<T>(rows: Iterable<T>): Iterable<T> {
  const gathered = (rows as Partial<GatheredRows<T>>).toArray;
  return typeof gathered === 'function' ? gathered.call(rows) : rows;
}

/** How many candidates there are, known without reading them: from the index, the search's matches or the source's size. */
function countedRows<T>(source: ListSource<T>, { answered, searched }: Candidates<T>): number | undefined {
  if (answered) return answered.count();
  return searched ? searched.size : source.size;
}

/**
 * The rows to test: those of the `eq`/`in` filter whose index gives the fewest, else those the
 * search may match by the source's substring index, else every row.
 */
function candidates<T>(table: FieldTable<T>, source: ListSource<T>, filters: Filter[], search: SearchNode | undefined): Candidates<T> {
  const usable = filters
    .filter((f) => (f.op === 'eq' || f.op === 'in') && f.values.every((v) => v !== null))
    .sort((a, b) => a.values.length - b.values.length);
  let looked: Candidates<T> | undefined;
  for (const f of usable) {
    // List fields hold one value per row, so distinct values find distinct rows: removing
    // repeated values is enough, where a Set of 140,000 rows cost ~27 ms and much garbage.
    const values = f.values.length > 1 ? [...new Set(f.values)] : f.values;
    const rows = source.lookup(f.field, values);
    if (rows === undefined) continue;
    looked = { rows, answered: { filters: [f], count: countedOnce(() => source.countLookup?.(f.field, values)), has: filterPredicate(table, f) } };
    break;
  }
  const ranged = source.within ? rangeCandidates(table, source, filters) : undefined;
  if (looked && ranged) {
    // The fewer, when both counts are known without reading the rows; else the lookup's.
    const [a, b] = [looked.answered!.count(), ranged.answered!.count()];
    return a !== undefined && b !== undefined && b < a ? ranged : looked;
  }
  if (looked ?? ranged) return (looked ?? ranged)!;
  const narrowed = search && source.searchCandidates ? searchCandidates(table, source, search) : undefined;
  if (narrowed === undefined) return { rows: source.scan() };
  // Listed only when read: a page read in order tests membership instead.
  const rows: GatheredRows<T> = { [Symbol.iterator]: () => narrowed.rows()[Symbol.iterator](), toArray: () => narrowed.rows() };
  // A term's rows are its matches; an AND's still go through every term.
  return { rows, searched: search!.kind === 'term' ? narrowed : undefined };
}

/** The rows of a `gte`/`lte` range (a query has at most one of each a field) that the source keeps an index for in the field's order. */
function rangeCandidates<T>(table: FieldTable<T>, source: ListSource<T>, filters: Filter[]): Candidates<T> | undefined {
  for (const f of filters) {
    if ((f.op !== 'gte' && f.op !== 'lte') || f.values[0] == null) continue;
    const bounding = filters.filter((g) => g.field === f.field && (g.op === 'gte' || g.op === 'lte') && g.values[0] != null);
    const bound = (op: 'gte' | 'lte') => bounding.find((g) => g.op === op)?.values[0];
    const rows = source.within!(f.field, bound('gte'), bound('lte'));
    if (rows === undefined) continue;
    const tests = bounding.map((g) => filterPredicate(table, g));
    return { rows, answered: { filters: bounding, count: countedOnce(() => rows.size), has: (row) => tests.every((test) => test(row)) } };
  }
  return undefined;
}

/** `count` asked once a query: an index's count walks its keys, and a query may ask it when choosing candidates and again for the total. */
function countedOnce(count: () => number | undefined): () => number | undefined {
  let known: { n: number | undefined } | undefined;
  return () => (known ??= { n: count() }).n;
}

/** Rows to test for the search, by the source's substring index: a term's matches; the fewest of an AND's terms' matches; none for an OR. */
function searchCandidates<T>(table: FieldTable<T>, source: ListSource<T>, node: SearchNode): SearchMatches<T> | undefined {
  if (node.kind === 'term') {
    const text = termText(table, node, source);
    return text && source.searchCandidates!(text.name, node.needle, text.compute);
  }
  if (node.kind === 'or') return undefined;
  let best: SearchMatches<T> | undefined;
  for (const item of node.items) {
    const matches = searchCandidates(table, source, item);
    if (matches && (!best || matches.size < best.size)) best = matches;
  }
  return best;
}

/**
 * The text a term is tested against when the source keeps it per row: every searchable field
 * joined (`*`), or one field's; undefined when the term tests field by field.
 */
function termText<T>(table: FieldTable<T>, node: SearchNode & { kind: 'term' }, source: ListSource<T>): { name: string; compute: (row: T) => string } | undefined {
  const getters = node.fields.map((name) => (row: T) => valueOf(table[name]!, name, row));
  const lower = lowerCaser();
  if (node.all && source.searchText && !node.needle.includes(FIELD_BREAK)) {
    return {
      name: '*',
      compute: (row) => getters.map((get) => {
        const v = get(row);
        return v == null ? '' : lower(v);
      }).join(FIELD_BREAK),
    };
  }
  if (node.fields.length === 1 && source.fieldText) {
    const [get] = getters as [(row: T) => unknown];
    // '' holds no needle (never empty): a row without a value does not match.
    return { name: node.fields[0]!, compute: (row) => {
      const v = get(row);
      return v == null ? '' : lower(v);
    } };
  }
  return undefined;
}

function filterPredicate<T>(table: FieldTable<T>, filter: Filter): Predicate<T> {
  const field = table[filter.field]!;
  const get = (row: T): unknown => valueOf(field, filter.field, row);
  const [value] = filter.values;
  switch (filter.op) {
    case 'eq':
      if (value === null) return field.isNone ?? ((row) => get(row) == null);
      return (row) => get(row) === value;
    case 'in': {
      const set = new Set(filter.values);
      return (row) => set.has(get(row));
    }
    case 'gte':
      return (row) => {
        const v = get(row);
        return v != null && (v as number) >= (value as number);
      };
    case 'lte':
      return (row) => {
        const v = get(row);
        return v != null && (v as number) <= (value as number);
      };
    case 'ilike': {
      const needle = value as string;
      const lower = lowerCaser();
      if (needle.includes('%')) {
        const matches = likeMatcher(needle);
        return (row) => {
          const v = get(row);
          return v != null && matches(lower(v));
        };
      }
      return (row) => {
        const v = get(row);
        return v != null && lower(v).includes(needle);
      };
    }
  }
}

/** Separates fields in a row's search text; a needle holding it falls back to field by field. */
const FIELD_BREAK = '\u0001';

function searchPredicate<T>(table: FieldTable<T>, node: SearchNode, source: ListSource<T>): Predicate<T> {
  if (node.kind === 'term') {
    const needle = node.needle;
    // A source that keeps each row's lower-cased text: no lower-casing per row and query
    // (10,000 SKU names took 20 ms a search).
    const text = termText(table, node, source);
    if (text?.name === '*') return (row) => source.searchText!(row, text.compute).includes(needle);
    if (text) return (row) => source.fieldText!(row, text.name, text.compute).includes(needle);
    const getters = node.fields.map((name) => (row: T) => valueOf(table[name]!, name, row));
    const lower = lowerCaser();
    return (row) => {
      for (const get of getters) {
        const v = get(row);
        if (v != null && lower(v).includes(needle)) return true;
      }
      return false;
    };
  }
  const parts = node.items.map((item) => searchPredicate(table, item, source));
  return node.kind === 'and' ? (row) => parts.every((p) => p(row)) : (row) => parts.some((p) => p(row));
}

/**
 * Rows `start` to `end` of `rows` in sort order; `rows` is not changed (it may be the source's own
 * array). Ascending puts rows without a value last; descending puts them first (the exact
 * reverse). Ties keep the order of `rank` when given, else the order of `rows`.
 *
 * The sort keys are read once per row into columns and the rows' positions are sorted, not the
 * rows: a comparison is then two array reads, where reading through the field table on every
 * comparison cost ~30 ns each (n log n of them).
 */
function sortedPage<T>(table: FieldTable<T>, rows: readonly T[], keys: SortKey[], start: number, end: number, rank?: (row: T) => number | string): T[] {
  const n = rows.length;
  const columns = keys.map((k) => {
    const field = table[k.field]!;
    const column = new Array<unknown>(n);
    for (let i = 0; i < n; i++) column[i] = valueOf(field, k.field, rows[i]!);
    return column;
  });
  const tie = rank === undefined ? undefined : storeOrder(rows, rank);
  // An early page of many rows: keep the best `end` positions in a heap (n log end) instead
  // of sorting them all. Small inputs stay with the built-in sort, which is linear on rows
  // already in key order.
  const early = n >= 4096 && end * 16 <= n;
  // One numeric key without ranks (the usual sort by id, depth or a timestamp): sorted natively.
  const packed = !early && tie === undefined && columns.length === 1 ? packedOrder(columns[0]!, keys[0]!.descending) : undefined;
  if (packed !== undefined) {
    const page: T[] = [];
    for (let i = start; i < end && i < n; i++) page.push(rows[packed[i]! % n]!);
    return page;
  }
  const compare = positionOrder(columns, keys, tie);
  const order = early ? firstInOrder(n, end, compare) : allInOrder(n, compare);
  const page: T[] = [];
  for (let i = start; i < end && i < order.length; i++) page.push(rows[order[i]!]!);
  return page;
}

type Order = (a: number, b: number) => number;

/**
 * Positions in sort order as `rank × n + position` in a Float64Array, sorted by the typed
 * array's own numeric sort (no JS comparator: a 50-row page's sort took ~3 µs with one). The
 * position in the low digits keeps ties in row order. Only for integer keys whose span times
 * n stays exact in a double; undefined otherwise (the caller compares). Ascending puts missing
 * values last, descending first, as positionOrder does.
 */
function packedOrder(column: unknown[], descending: boolean): Float64Array | undefined {
  const n = column.length;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = column[i];
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) return undefined;
      if (v < min) min = v;
      if (v > max) max = v;
    } else if (v != null) {
      return undefined;
    }
  }
  if (min === Infinity) min = max = 0;
  // Ranks run from 0 to span + 1 (the missing values' rank included).
  const span = max - min;
  if ((span + 2) * n > Number.MAX_SAFE_INTEGER) return undefined;
  const missing = descending ? 0 : span + 1;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = column[i];
    const rank = typeof v === 'number' ? (descending ? max - v + 1 : v - min) : missing;
    out[i] = rank * n + i;
  }
  return out.sort();
}

/**
 * Orders row positions as the store orders the rows, for ties. Ranks that are numbers are read
 * into a Float64Array in a plain loop (Float64Array.from(rows, rank) took 5 ms for 70,000
 * rows, this 0.7); keys are compared as the store compares them, only where a tie asks.
 */
function storeOrder<T>(rows: readonly T[], rank: (row: T) => number | string): Order {
  const n = rows.length;
  if (n === 0 || typeof rank(rows[0]!) === 'number') {
    const ranks = new Float64Array(n);
    for (let i = 0; i < n; i++) ranks[i] = rank(rows[i]!) as number;
    return (a, b) => ranks[a]! - ranks[b]!;
  }
  const keys = new Array<string>(n);
  for (let i = 0; i < n; i++) keys[i] = rank(rows[i]!) as string;
  return (a, b) => compareKeys(keys[a]!, keys[b]!);
}

/** Orders row positions by the sort keys, then by `tie` (the store's order) or position: a total order. */
function positionOrder(columns: unknown[][], keys: SortKey[], tie: Order = (a, b) => a - b): Order {
  const signs = keys.map((k) => (k.descending ? -1 : 1));
  if (columns.length === 1) {
    const [column] = columns as [unknown[]];
    const [sign] = signs as [number];
    const numbers = numericColumn(column);
    // All numbers (the usual sort by id, depth or a timestamp): compared without type checks.
    if (numbers) return (a, b) => (numbers[a]! < numbers[b]! ? -sign : numbers[a]! > numbers[b]! ? sign : tie(a, b));
    return (a, b) => compareValues(column[a], column[b], sign) || tie(a, b);
  }
  return (a, b) => {
    for (let k = 0; k < columns.length; k++) {
      const c = compareValues(columns[k]![a], columns[k]![b], signs[k]!);
      if (c !== 0) return c;
    }
    return tie(a, b);
  };
}

function allInOrder(n: number, order: Order): number[] {
  const positions = new Array<number>(n);
  for (let i = 0; i < n; i++) positions[i] = i;
  return positions.sort(order);
}

/** The first `k` positions of 0..n-1 in order, with a max-heap of the best k seen so far. */
function firstInOrder(n: number, k: number, order: Order): number[] {
  const heap: number[] = [];
  const siftDown = (): void => {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && order(heap[l]!, heap[worst]!) > 0) worst = l;
      if (r < heap.length && order(heap[r]!, heap[worst]!) > 0) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst]!, heap[i]!];
      i = worst;
    }
  };
  for (let p = 0; p < n; p++) {
    if (heap.length < k) {
      heap.push(p);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (order(heap[i]!, heap[parent]!) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (order(p, heap[0]!) < 0) {
      heap[0] = p;
      siftDown();
    }
  }
  return heap.sort(order);
}

/**
 * The column as a Float64Array when every value is a number or missing, else undefined. A
 * missing value becomes +Infinity: last ascending, first descending, as the rule says (list
 * values come from JSON data, which holds no infinities to be confused with).
 */
function numericColumn(column: unknown[]): Float64Array | undefined {
  const out = new Float64Array(column.length);
  for (let i = 0; i < column.length; i++) {
    const v = column[i];
    if (typeof v === 'number') out[i] = v;
    else if (v == null) out[i] = Infinity;
    else return undefined;
  }
  return out;
}

function compareValues(x: unknown, y: unknown, sign: number): number {
  if (x === y) return 0;
  if (x == null) return sign;
  if (y == null) return -sign;
  if ((x as number) < (y as number)) return -sign;
  if ((x as number) > (y as number)) return sign;
  return 0;
}

/**
 * Lower-cases values for one query, remembering strings it has seen: many rows share a value
 * (an SKU's name on each of its boxes), and a lookup costs less than a new string each time.
 * Bounded, so a column of unique values costs no more than lower-casing.
 */
function lowerCaser(): (v: unknown) => string {
  const seen = new Map<string, string>();
  return (v) => {
    if (typeof v !== 'string') return String(v).toLowerCase();
    let lower = seen.get(v);
    if (lower === undefined) {
      lower = v.toLowerCase();
      if (seen.size < 20_000) seen.set(v, lower);
    }
    return lower;
  };
}
