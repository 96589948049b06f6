/** The vocabulary of the list engine: field tables, sources, queries and pages. */
import type { TSchema } from 'typebox';

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'datetime';
export type FilterOp = 'eq' | 'gte' | 'lte' | 'ilike' | 'in';

/** One listable field of a resource. */
export interface ListField<T> {
  type: FieldType;
  /** Which `<name>__<op>` query parameters exist. */
  filters?: readonly FilterOp[];
  /** `<name>__eq=none` matches rows without a value. */
  none?: boolean;
  /** Which rows `none` matches, where it is narrower than "no value" (e.g. boxes without a load, not empty spaces). */
  isNone?: (row: T) => boolean;
  /** May be named in `search` terms, and is searched by `*:value`. */
  search?: boolean;
  /** May appear in `sort_by` (default true). */
  sort?: boolean;
  /** Reads the value from a row (default: the property of the same name). */
  get?: (row: T) => unknown;
  /**
   * The schema of one value where the field takes fewer than its type (an enum): an `eq` or
   * `in` value outside it is a 422 naming the allowed values, not a silently empty page.
   */
  values?: TSchema;
  /** Per-operator parameter type where the spec types a parameter apart from its field. */
  paramTypes?: Partial<Record<FilterOp, FieldType>>;
  description?: string;
}

export type FieldTable<T> = Record<string, ListField<T>>;

/**
 * Rows a lookup gathers when asked (e.g. the rows of several index entries): iterating streams
 * them, so a page can stop early; `toArray` gives them all at once where the engine reads
 * every one, without an iterator call per row (~35 ns each, five times the gathering).
 */
export interface GatheredRows<T> extends Iterable<T> {
  toArray(): readonly T[];
}

/**
 * A lookup's rows that it can also give in a field's order, as `ListSource.ordered` gives all
 * of the source's (runs of equal values, each in the order the rows come in): a sorted page
 * of them is then read from the top instead of sorting them all. Undefined for a field the
 * lookup does not keep in order.
 */
export interface OrderedRows<T> extends GatheredRows<T> {
  inOrderOf(field: string, descending: boolean): Iterable<readonly T[]> | undefined;
}

/**
 * The rows a search term matches, as a source's substring index knows them: how many and
 * whether a row is one cost nothing however many match; listing them in the order `scan`
 * gives costs a pass over them, so a sorted page read in order (ListSource.ordered) never does.
 */
export interface SearchMatches<T> {
  readonly size: number;
  has(row: T): boolean;
  /** The matches in the order `scan` gives. */
  rows(): readonly T[];
  /** The matches alone in the order of `field`, as `ListSource.ordered` gives every row; undefined when not kept. */
  ordered?(field: string, descending: boolean): Iterable<readonly T[]> | undefined;
}

/** Where rows come from. */
export interface ListSource<T> {
  /**
   * Rows whose indexed field equals one of `values` (exactly the rows an `eq`/`in` filter on
   * the field matches); undefined when the field has no index. The source alone says which
   * fields it can look up (a store collection's from its definition's indexes), so a field
   * table never restates it.
   */
  lookup(field: string, values: readonly unknown[]): Iterable<T> | GatheredRows<T> | OrderedRows<T> | undefined;
  /**
   * Rows whose `field` lies from `low` to `high`, both included, either absent (exactly the
   * rows `gte`/`lte` filters on it match), from an index that keeps the field in order;
   * `size` when known without reading them. Undefined when the source keeps no such index.
   */
  within?(field: string, low: unknown, high: unknown): (OrderedRows<T> & { readonly size?: number }) | undefined;
  /** Every row. */
  scan(): Iterable<T>;
  /** How many rows `lookup` would give, without reading them (lets an unsorted page stop early). */
  countLookup?(field: string, values: readonly unknown[]): number | undefined;
  /**
   * A row's lower-cased searchable text for `*:value` terms, which `compute` builds; a source
   * whose rows live in memory may keep it until the row changes, so a full-text search does
   * one `includes` per row instead of one per field.
   */
  searchText?(row: T, compute: (row: T) => string): string;
  /** As searchText, for a `field:value` term: the row's lower-cased text of one field. */
  fieldText?(row: T, field: string, compute: (row: T) => string): string;
  /**
   * Exactly the rows that hold `needle` in the text `compute` gives (`text` names it: a field,
   * or `*` for searchText's), from a substring index the source keeps. Undefined when the
   * source cannot tell (a needle too short for its index). One field table per source:
   * `compute` is taken as the same function for the same `text` on every call.
   */
  searchCandidates?(text: string, needle: string, compute: (row: T) => string): SearchMatches<T> | undefined;
  /** Number of rows `scan` gives (lets the engine judge whether reading rows in order pays). */
  readonly size?: number;
  /**
   * Every row in the order of `field` as the field table reads it, as runs of rows with equal
   * values, each run in the store's order (`rank`): ascending with the rows without a value
   * last, or descending with them first. Undefined when the source keeps no such order. A
   * sorted list then reads rows in order until its page is full instead of sorting them all.
   */
  ordered?(field: string, descending: boolean): Iterable<readonly T[]> | undefined;
  /**
   * The row's place in the store's order, the order `scan` gives: ties of a sort keep it,
   * whichever way the rows were found. Required with `ordered`. A number, or the row's key
   * where the store orders rows by string keys (compared as the store compares them).
   */
  rank?(row: T): number | string;
  /**
   * The source's promise that a row object, and everything a view reads through it, never
   * changes after the source hands it out: a changed row is a new object. Its list routes may
   * then keep each row's serialized item (src/http/list-route.ts). Sources that write rows in
   * place must not set it; sources whose rows are read anew on every call (LMDB collections)
   * gain nothing from it.
   */
  readonly rowsImmutable?: boolean;
}

/** The paginated envelope of spec 2.1. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

export interface Filter {
  field: string;
  op: FilterOp;
  /** Typed value(s): one for eq/gte/lte/ilike, several for in; null for `none`. */
  values: unknown[];
}

export type SearchNode =
  | { kind: 'term'; fields: string[]; needle: string; /** `*:value`: every searchable field. */ all?: boolean }
  | { kind: 'and' | 'or'; items: SearchNode[] };

export interface SortKey {
  field: string;
  descending: boolean;
}

/** A parsed and checked list query. */
export interface ListQuery {
  filters: Filter[];
  search?: SearchNode;
  sort: SortKey[];
  page: number;
  size: number;
}

export interface ListOptions {
  maxPageSize: number;
  /** Zone of naive date-time bounds. */
  timeZone: string;
  /** Used when the caller gives no sort_by (e.g. `-created_at`). */
  defaultSort?: string;
}

/** Default page size (spec 8). */
export const DEFAULT_PAGE_SIZE = 50;

/** The parameter type of a filter operator on a field. */
export function paramType<T>(field: ListField<T>, op: FilterOp): FieldType {
  const override = field.paramTypes?.[op];
  if (override) return override;
  if (op === 'ilike') return 'string';
  return field.type;
}

/** A field's value in a row. */
export function valueOf<T>(field: ListField<T>, name: string, row: T): unknown {
  return field.get ? field.get(row) : (row as Record<string, unknown>)[name];
}
