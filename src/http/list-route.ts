/**
 * A list endpoint in one declaration: the query schema comes from the field table, the list
 * engine does the work, and `view` turns each row into its response item.
 *
 * Serializing the items is most of a list request's cost (JSON.stringify of a 50-row page is
 * ~30 to 40 µs, the rest of the request ~50; docs/benchmarks.md). A source whose rows never
 * change may say so with `rowsImmutable` (ListSource); its routes then keep each row's
 * serialized item and assemble the envelope from those pieces. The answer is still computed
 * from the rows on every request: the engine filters, sorts and pages them, and an item is
 * serialized anew whenever its row is another object.
 *
 * The promise is checked, not trusted: each row is frozen when its item is first kept, so
 * writing one in place throws at the writer, and with `checkResponses` (tests) every
 * assembled answer must equal `JSON.stringify` of the freshly computed page, byte for byte.
 */
import type { TSchema } from 'typebox';
import { executeList, listQuerySchema, parseListQuery, type FieldTable, type ListOptions, type ListSource, type Page as PageOf } from '../domain/list/index.js';
import { JsonReply, route, type AnyRoute } from './route.js';
import { Page } from './schemas/common.js';

export interface ListRouteSpec<T> {
  path: string;
  tag: string;
  summary: string;
  description?: string;
  permission: string;
  fields: FieldTable<T>;
  source: ListSource<T>;
  item: TSchema;
  view(row: T): unknown;
  options: ListOptions;
}

/**
 * Serialized items kept per route; past this many the oldest are dropped. An entry keeps its
 * row object as well as its JSON: 1-2 KiB together for a job (docs/benchmarks.md, the soak).
 */
export const KEPT_ITEMS = 10_000;

/**
 * Whole answers kept per route, one per envelope, and their characters at most in all: a page
 * of 100 inventory rows is ~45 KB, one of 1,000 (the default largest size) ~450 KB.
 */
export const KEPT_ANSWERS = { count: 32, chars: 4 * 1024 * 1024 };

/** Declares `GET path` answering the paginated envelope of `item`. */
export function listRoute<T>(spec: ListRouteSpec<T>): AnyRoute {
  const { fields, source, options, view } = spec;
  const items = source.rowsImmutable === true ? new ItemMemo<T>(view, KEPT_ITEMS) : undefined;
  return route({
    method: 'GET', path: spec.path, tag: spec.tag, permission: spec.permission, summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    query: listQuerySchema(fields, options),
    responses: { 200: Page(spec.item) },
    handler: ({ query }) => {
      const page = executeList(fields, source, parseListQuery(fields, query, options));
      const answer = () => ({ ...page, items: page.items.map(view) });
      if (!items) return answer();
      const json = items.envelope(page);
      return json === undefined ? answer() : new JsonReply(json, answer);
    },
  });
}

/** Serialized items by row object, for a source with immutable rows. */
export class ItemMemo<T> {
  private readonly kept = new Map<object, string>();
  /**
   * The kept rows in the order they came, a ring once full: the oldest is dropped from here,
   * not found with `kept.keys().next()`, which skips every slot the Map's drops left at its
   * head since it last rehashed (5 µs a drop at 10,000 items, against 0.4; issue 22).
   */
  private readonly order: object[] = [];
  private oldest = 0;
  /**
   * Recent answers by the envelope's other fields (page, size, total), with the rows each was
   * made of: a page of the same row objects is the same bytes. An integration pages through the
   * same few pages again and again, and an answer assembled anew is a 45 KB string for a page
   * of 100: its copy and its garbage were a quarter of such a request (issue 22).
   */
  private readonly answers = new Map<string, { rows: T[]; json: string }>();
  private answerChars = 0;

  constructor(
    private readonly view: (row: T) => unknown,
    private readonly limit: number,
    private readonly keptAnswers = KEPT_ANSWERS,
  ) {}

  /** Number of items kept. */
  get size(): number {
    return this.kept.size;
  }

  /** The row's item as JSON: kept from an earlier request while the row is the same object. */
  item(row: T): string {
    if (typeof row !== 'object' || row === null) return serialize(this.view(row));
    let json = this.kept.get(row);
    if (json === undefined) {
      json = serialize(this.view(row));
      Object.freeze(row);
      this.keep(row, json);
    }
    return json;
  }

  private keep(row: object, json: string): void {
    if (this.limit <= 0) return;
    if (this.order.length < this.limit) this.order.push(row);
    else {
      this.kept.delete(this.order[this.oldest]!);
      this.order[this.oldest] = row;
      this.oldest = (this.oldest + 1) % this.limit;
    }
    this.kept.set(row, json);
  }

  /**
   * `JSON.stringify({ ...page, items: page.items.map(view) })` from the kept items, or
   * undefined when the envelope does not start with `items` (then the caller serializes it).
   */
  envelope(page: PageOf<T>): string | undefined {
    // JSON.stringify writes keys in the object's order: the pieces go first, so items must be.
    if (firstKey(page) !== 'items') return undefined;
    // The other fields of the envelope as JSON.stringify writes them, whatever the engine adds.
    const rest = JSON.stringify({ ...page, items: undefined });
    const kept = this.answers.get(rest);
    if (kept !== undefined && sameRows(page.items, kept.rows)) return kept.json;
    const head = '{"items":[';
    const tail = rest === '{}' ? ']}' : `],${rest.slice(1)}`;
    const rows = page.items;
    const n = rows.length;
    if (n === 0) return head + tail;
    const parts = new Array<string>(n);
    for (let i = 0; i < n; i++) parts[i] = this.item(rows[i]!);
    // One join writes the whole answer into one flat string: concatenating the head and tail
    // around a joined middle would copy the 10 KB again when uWS flattens it (~2 µs a page).
    parts[0] = head + parts[0]!;
    parts[n - 1] = parts[n - 1]! + tail;
    const json = parts.join(',');
    // Rows are frozen once kept, so equal identities mean equal items (a dropped item's row too).
    this.keepAnswer(rest, rows, json);
    return json;
  }

  /** Keeps an answer last in the Map's order, dropping the least recently made past the limits. */
  private keepAnswer(rest: string, rows: T[], json: string): void {
    this.dropAnswer(rest);
    if (json.length > this.keptAnswers.chars) return;
    while (this.answers.size >= this.keptAnswers.count || this.answerChars + json.length > this.keptAnswers.chars) {
      this.dropAnswer(this.answers.keys().next().value!);
    }
    this.answers.set(rest, { rows: rows.slice(), json });
    this.answerChars += json.length;
  }

  private dropAnswer(rest: string): void {
    const kept = this.answers.get(rest);
    if (kept === undefined) return;
    this.answers.delete(rest);
    this.answerChars -= kept.json.length;
  }
}

function sameRows<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function firstKey(value: object): string | undefined {
  for (const key in value) return key;
  return undefined;
}

/** An array element as JSON.stringify writes it (nothing serializable becomes null). */
function serialize(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}
