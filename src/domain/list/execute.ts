/**
 * Runs a ListQuery over a source: candidates from an index when an `eq`/`in` filter allows it
 * (so such a filter never scans), then the other filters and the search, then sort and page.
 * Predicates are built once per query; the per-row path does no parsing and no allocation
 * beyond what the sort needs.
 */
import { valueOf, type FieldTable, type Filter, type ListQuery, type ListSource, type Page, type SearchNode, type SortKey } from './fields.js';

type Predicate<T> = (row: T) => boolean;

/** One page of rows of `source` matching `query`. */
export function executeList<T>(table: FieldTable<T>, source: ListSource<T>, query: ListQuery): Page<T> {
  const { rows, used } = candidates(table, source, query.filters);
  const tests: Predicate<T>[] = query.filters.filter((f) => f !== used).map((f) => filterPredicate(table, f));
  if (query.search) tests.push(searchPredicate(table, query.search));
  const matches = (row: T): boolean => {
    for (const test of tests) if (!test(row)) return false;
    return true;
  };

  const start = (query.page - 1) * query.size;
  const end = start + query.size;
  let items: T[];
  let total = 0;
  if (query.sort.length === 0) {
    // No sort: keep only the requested page, count the rest.
    items = [];
    for (const row of rows) {
      if (!matches(row)) continue;
      if (total >= start && total < end) items.push(row);
      total++;
    }
  } else {
    const all: T[] = [];
    for (const row of rows) if (matches(row)) all.push(row);
    total = all.length;
    all.sort(comparator(table, query.sort));
    items = all.slice(start, end);
  }
  return { items, total, page: query.page, size: query.size, pages: Math.ceil(total / query.size) };
}

function candidates<T>(table: FieldTable<T>, source: ListSource<T>, filters: Filter[]): { rows: Iterable<T>; used?: Filter } {
  const usable = filters
    .filter((f) => (f.op === 'eq' || f.op === 'in') && table[f.field]!.indexed && f.values.every((v) => v !== null))
    .sort((a, b) => a.values.length - b.values.length);
  for (const f of usable) {
    const rows = source.lookup(f.field, f.values);
    if (rows !== undefined) return { rows: f.values.length > 1 ? new Set(rows) : rows, used: f };
  }
  return { rows: source.scan() };
}

function filterPredicate<T>(table: FieldTable<T>, filter: Filter): Predicate<T> {
  const field = table[filter.field]!;
  const get = (row: T): unknown => valueOf(field, filter.field, row);
  const [value] = filter.values;
  switch (filter.op) {
    case 'eq':
      return value === null ? (row) => get(row) == null : (row) => get(row) === value;
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
      if (needle.includes('%')) {
        const pattern = new RegExp(`^${needle.split('%').map(escapeRegExp).join('.*')}$`, 's');
        return (row) => {
          const v = get(row);
          return v != null && pattern.test(String(v).toLowerCase());
        };
      }
      return (row) => {
        const v = get(row);
        return v != null && String(v).toLowerCase().includes(needle);
      };
    }
  }
}

function searchPredicate<T>(table: FieldTable<T>, node: SearchNode): Predicate<T> {
  if (node.kind === 'term') {
    const getters = node.fields.map((name) => (row: T) => valueOf(table[name]!, name, row));
    const needle = node.needle;
    return (row) => {
      for (const get of getters) {
        const v = get(row);
        if (v != null && String(v).toLowerCase().includes(needle)) return true;
      }
      return false;
    };
  }
  const parts = node.items.map((item) => searchPredicate(table, item));
  return node.kind === 'and' ? (row) => parts.every((p) => p(row)) : (row) => parts.some((p) => p(row));
}

/** Ascending puts rows without a value last; descending puts them first (the exact reverse). */
function comparator<T>(table: FieldTable<T>, keys: SortKey[]): (a: T, b: T) => number {
  const getters = keys.map((k) => ({ get: (row: T) => valueOf(table[k.field]!, k.field, row), sign: k.descending ? -1 : 1 }));
  return (a, b) => {
    for (const { get, sign } of getters) {
      const x = get(a);
      const y = get(b);
      if (x === y) continue;
      if (x == null) return sign;
      if (y == null) return -sign;
      if (x < (y as typeof x)) return -sign;
      if (x > (y as typeof x)) return sign;
    }
    return 0;
  };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
