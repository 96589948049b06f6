// The list engine of spec 4.0.1: filters, search grammar, sort, paging, index use, errors.
import t from 'tap';
import fc from 'fast-check';
import { ValidationError } from '../../../src/domain/errors.js';
import { executeList, listQuerySchema, OrderedIndex, parseListQuery, SubstringIndex, type FieldTable, type GatheredRows, type ListSource } from '../../../src/domain/list/index.js';
import { legacyTime } from '../../../src/domain/time.js';

interface Row {
  id: number;
  name: string;
  sku: string | null;
  depth: number;
  ratio: number;
  created_at: number;
}

const TABLE: FieldTable<Row> = {
  id: { type: 'integer', filters: ['eq', 'ilike', 'in'], search: true },
  name: { type: 'string', filters: ['eq', 'ilike', 'in'], search: true },
  sku: { type: 'string', filters: ['eq', 'ilike', 'in'], none: true, search: true },
  depth: { type: 'integer', filters: ['eq', 'gte', 'lte', 'ilike', 'in'], paramTypes: { ilike: 'string' } },
  ratio: { type: 'number', filters: ['eq', 'gte', 'lte'], search: true },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  secret: { type: 'string', sort: false, get: () => 'x' },
};

const ZONE = 'Europe/Berlin';
const OPTIONS = { maxPageSize: 100, timeZone: ZONE };
const T0 = Date.parse('2026-03-29T00:00:00Z');

const ROWS: Row[] = [
  { id: 1, name: 'Red apple', sku: 'APL-1', depth: 1, ratio: 0.5, created_at: T0 },
  { id: 2, name: 'Green apple', sku: 'APL-2', depth: 2, ratio: 0.25, created_at: T0 + 3600_000 },
  { id: 3, name: 'Banana, ripe', sku: null, depth: 3, ratio: 1, created_at: T0 + 2 * 3600_000 },
  { id: 4, name: 'AND gate', sku: 'EL-AND', depth: 1, ratio: 0, created_at: T0 + 3 * 3600_000 },
  { id: 12, name: 'cherry (dark)', sku: 'CHR:12', depth: 2, ratio: 0.75, created_at: T0 + 4 * 3600_000 },
];

/** A source that proves whether it was scanned. */
function source(rows: Row[], allowScan = true): ListSource<Row> & { scans: number; lookups: number } {
  const s = {
    scans: 0,
    lookups: 0,
    lookup(field: string, values: readonly unknown[]) {
      if (field !== 'id' && field !== 'sku') return undefined;
      s.lookups++;
      return rows.filter((r) => values.includes(r[field]));
    },
    scan() {
      if (!allowScan) throw new Error('scanned');
      s.scans++;
      return rows;
    },
  };
  return s;
}

const list = (params: Record<string, unknown>, rows = ROWS, extra = {}) =>
  executeList(TABLE, source(rows), parseListQuery(TABLE, params, { ...OPTIONS, ...extra }));
const ids = (params: Record<string, unknown>, extra = {}) => list(params, ROWS, extra).items.map((r) => r.id);

function issues(params: Record<string, unknown>): { loc: (string | number)[]; type: string; msg: string }[] {
  try {
    parseListQuery(TABLE, params, OPTIONS);
  } catch (err) {
    if (err instanceof ValidationError) return err.issues;
    throw err;
  }
  return [];
}

t.test('filters of every kind', async (t) => {
  t.same(ids({ name__eq: 'Red apple' }), [1]);
  t.same(ids({ name__eq: 'red apple' }), [], '__eq is exact');
  t.same(ids({ name__ilike: 'APPLE' }), [1, 2], '__ilike is partial and case-insensitive');
  t.same(ids({ name__ilike: 'r%apple' }), [1], '% is a wildcard');
  t.same(ids({ name__in: ['Red apple', 'Banana, ripe'] }), [1, 3], 'commas inside an __in value stay');
  t.same(ids({ depth__eq: 2 }), [2, 12]);
  t.same(ids({ depth__eq: '2' }), [2, 12], 'numeric strings are numbers for numeric fields');
  t.same(ids({ depth__gte: 2, depth__lte: 2 }), [2, 12], 'bounds are inclusive');
  t.same(ids({ depth__ilike: '3' }), [3], '__ilike on a number matches its text');
  t.same(ids({ depth__in: [1, 3] }), [1, 3, 4]);
  t.same(ids({ ratio__gte: 0.5 }), [1, 3, 12]);
  t.same(ids({ id__ilike: '2' }), [2, 12]);
  t.same(ids({ sku__eq: 'none' }), [3], '`none` matches rows without a value');
  t.same(ids({ sku__eq: 'APL-2' }), [2]);
  t.same(ids({ sku__in: ['APL-1', 'CHR:12'] }), [1, 12]);
  t.same(ids({ depth__eq: 1, name__ilike: 'gate' }), [4], 'filters combine with AND');
  t.same(ids({ unknown: 'x', other_param: 'y' }), [1, 2, 3, 4, 12], 'parameters that are no filter are ignored');
});

t.test('date-time bounds: naive is the configured zone, offsets are absolute', async (t) => {
  // T0 + 1 h = 2026-03-29T01:00Z = 03:00 Berlin summer time, right after the spring-forward gap.
  t.same(ids({ created_at__gte: '2026-03-29T03:00:00' }), [2, 3, 4, 12]);
  t.same(ids({ created_at__gte: '2026-03-29T02:30' }), [3, 4, 12], 'a time in the gap moves forward by the gap: 03:30');
  t.same(ids({ created_at__lte: '2026-03-29T01:00:00Z' }), [1, 2]);
  t.same(ids({ created_at__gte: legacyTime(T0 + 2 * 3600_000, ZONE), created_at__lte: legacyTime(T0 + 2 * 3600_000, ZONE) }), [3]);
});

t.test('search grammar', async (t) => {
  t.same(ids({ search: 'name:apple' }), [1, 2]);
  t.same(ids({ search: 'name:APPLE AND sku:2' }), [2]);
  t.same(ids({ search: 'name:red OR name:green' }), [1, 2]);
  t.same(ids({ search: 'name:apple AND sku:1 OR name:banana' }), [1, 3], 'AND binds tighter than OR');
  t.same(ids({ search: '(name:red OR name:banana) AND id:1' }), [1]);
  t.same(ids({ search: 'name:"Banana, ripe"' }), [3], 'quoted values hold spaces and commas');
  t.same(ids({ search: 'sku:"CHR:12"' }), [12], 'quoted values hold colons');
  t.same(ids({ search: '*:apl' }), [1, 2], '*: searches every searchable field');
  t.same(ids({ search: '*:0.75' }), [12], 'numbers are searched as text');
  t.same(ids({ search: 'cherry' }), [12], 'a bare word is *:word');
  t.same(ids({ search: 'name:and' }), [4], 'lowercase and is an ordinary value');
  t.same(ids({ search: 'name:"(dark)"' }), [12]);
  t.same(ids({ search: '' }), [1, 2, 3, 4, 12], 'an empty search is no search');
});

t.test('malformed search, sort and paging answer with the parameter named', async (t) => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ search: 'nope:x' }, 'search', /Cannot search field "nope"/],
    [{ search: 'depth:1' }, 'search', /Cannot search field "depth"/],
    [{ search: 'name:' }, 'search', /Empty value/],
    [{ search: 'name:a AND' }, 'search', /ends after an operator/],
    [{ search: 'OR name:a' }, 'search', /Expected a term/],
    [{ search: '(name:a' }, 'search', /Missing closing parenthesis/],
    [{ search: 'name:a)' }, 'search', /Unbalanced/],
    [{ search: '((name:a))' }, 'search', /one level/],
    [{ search: 'name:"a' }, 'search', /Unclosed/],
    [{ search: 'name:a name:b' }, 'search', /Expected AND or OR/],
    [{ search: '()' }, 'search', /Expected a term/],
    [{ unknown__eq: 'x' }, 'unknown__eq', /Unknown filter unknown__eq; this list filters by: .*name/],
    [{ name__zz: 'y' }, 'name__zz', /name has no zz filter; its filters: .*name__ilike/],
    [{ depth__gt: 1 }, 'depth__gt', /depth has no gt filter/],
    [{ sort_by: 'nope' }, 'sort_by', /Cannot sort by "nope"/],
    [{ sort_by: 'secret' }, 'sort_by', /Cannot sort by "secret"/],
    [{ sort_by: 'id,-id' }, 'sort_by', /twice/],
    [{ sort_by: 'id,' }, 'sort_by', /Empty sort field/],
    [{ page: 0 }, 'page', /greater than or equal to 1/],
    [{ size: 0 }, 'size', /greater than or equal to 1/],
    [{ size: 101 }, 'size', /less than or equal to 100/],
    [{ page: 'two' }, 'page', /valid integer/],
    [{ depth__eq: 'deep' }, 'depth__eq', /valid integer/],
    [{ depth__eq: '1.5' }, 'depth__eq', /valid integer/],
    [{ ratio__gte: 'lots' }, 'ratio__gte', /valid number/],
    [{ created_at__gte: 'last tuesday' }, 'created_at__gte', /not a date/],
  ];
  for (const [params, param, msg] of cases) {
    const found = issues(params);
    t.equal(found.length, 1, JSON.stringify(params));
    t.same(found[0]?.loc, ['query', param]);
    t.match(found[0]?.msg, msg);
  }
  t.equal(issues({ page: 0, sort_by: 'x', search: 'y:z' }).length, 3, 'every bad parameter is reported at once');
});

t.test('sort on several fields, both directions, missing values last ascending', async (t) => {
  t.same(ids({ sort_by: '-depth,+id' }), [3, 2, 12, 1, 4]);
  t.same(ids({ sort_by: 'depth,-id' }), [4, 1, 12, 2, 3]);
  t.same(ids({ sort_by: 'sku' }), [1, 2, 12, 4, 3], 'null last');
  t.same(ids({ sort_by: '-sku' }), [3, 4, 12, 2, 1], 'null first when descending');
  t.same(ids({}, { defaultSort: '-created_at' }), [12, 4, 3, 2, 1], 'the endpoint default applies');
  t.same(ids({ sort_by: 'id' }, { defaultSort: '-created_at' }), [1, 2, 3, 4, 12], 'sort_by wins over the default');
});

t.test('one numeric sort key: ties keep row order, missing values last (first descending), any span', async (t) => {
  // A single integer key is sorted natively (packed rank and position); other keys and spans
  // too wide to pack take the comparator. Both must give the same order.
  type N = { id: number; v: number | null };
  const table: FieldTable<N> = { id: { type: 'integer' }, v: { type: 'number' } };
  const run = (rows: N[], sort_by: string) =>
    executeList(table, { lookup: () => undefined, scan: () => rows }, parseListQuery(table, { sort_by, size: 100 }, OPTIONS)).items.map((r) => r.id);
  const rows: N[] = [{ id: 1, v: 5 }, { id: 2, v: null }, { id: 3, v: -2 }, { id: 4, v: 5 }, { id: 5, v: null }, { id: 6, v: 0 }];
  t.same(run(rows, 'v'), [3, 6, 1, 4, 2, 5]);
  t.same(run(rows, '-v'), [2, 5, 1, 4, 6, 3]);
  const wide = rows.map((r, i) => ({ ...r, v: r.v === null ? null : r.v * 2 ** 50 + (i === 0 ? 1 : 0) }));
  t.same(run(wide, 'v'), [3, 6, 4, 1, 2, 5], 'a span too wide to pack');
  const fractions = rows.map((r) => ({ ...r, v: r.v === null ? null : r.v + 0.5 }));
  t.same(run(fractions, '-v'), [2, 5, 1, 4, 6, 3], 'non-integers');
  t.same(run([{ id: 1, v: null }, { id: 2, v: null }], '-v'), [1, 2], 'no values at all');
});

t.test('sorting leaves the source\'s own array as it was', async (t) => {
  // The engine sorts positions over the array a source returns, without copying it first.
  const rows = [...ROWS];
  t.same(list({ sort_by: '-id' }, rows).items.map((r) => r.id), [12, 4, 3, 2, 1]);
  t.same(list({ sort_by: 'name,-depth' }, rows).items.map((r) => r.id), [4, 3, 2, 1, 12]);
  t.same(rows, ROWS);
});

t.test('pagination envelope', async (t) => {
  t.same(list({ size: 2 }), { items: ROWS.slice(0, 2), total: 5, page: 1, size: 2, pages: 3 });
  t.same(list({ size: 2, page: 3 }).items.map((r) => r.id), [12]);
  t.same(list({ size: 2, page: 4 }), { items: [], total: 5, page: 4, size: 2, pages: 3 }, 'past the end: empty page, right total');
  t.same(list({ size: 2, page: 2, sort_by: '-id' }).items.map((r) => r.id), [3, 2]);
  t.same(list({ name__eq: 'none of these' }), { items: [], total: 0, page: 1, size: 50, pages: 0 });
});

t.test('an indexed __eq or __in uses the index, never a scan', async (t) => {
  const noScan = source(ROWS, false);
  const q = parseListQuery(TABLE, { sku__eq: 'APL-1', depth__gte: 1 }, OPTIONS);
  t.same(executeList(TABLE, noScan, q).items.map((r) => r.id), [1]);
  t.equal(noScan.lookups, 1);
  const qin = parseListQuery(TABLE, { id__in: [2, 12, 99] }, OPTIONS);
  t.same(executeList(TABLE, noScan, qin).items.map((r) => r.id), [2, 12]);
  const scanning = source(ROWS);
  executeList(TABLE, scanning, parseListQuery(TABLE, { sku__eq: 'none' }, OPTIONS));
  t.equal(scanning.scans, 1, '`none` is not looked up in an index');
});

t.test('the query schema documents every parameter', async (t) => {
  const schema = listQuerySchema(TABLE, OPTIONS) as any;
  t.match(schema.properties.depth__in, { type: 'array', items: { type: 'integer' } });
  t.match(schema.properties.depth__ilike, { type: 'string' });
  t.match(schema.properties.sku__eq, { anyOf: [{ type: 'string' }, { const: 'none' }] });
  t.match(schema.properties.size, { maximum: 100, default: 50 });
  t.match(schema.properties.search.description, /id, name, sku, ratio/);
  t.notOk(schema.properties.secret__eq);
});

t.test('property: the engine agrees with a naive reference', async (t) => {
  const row = fc.record({
    id: fc.integer({ min: 1, max: 40 }),
    name: fc.constantFrom('alpha', 'Beta', 'gamma ray', 'delta,x', 'EPSILON'),
    sku: fc.option(fc.constantFrom('A', 'B', 'C'), { nil: null }),
    depth: fc.integer({ min: 1, max: 3 }),
    ratio: fc.constantFrom(0, 0.5, 1),
    created_at: fc.integer({ min: T0, max: T0 + 10 * 3600_000 }),
  });
  const params = fc.record({
    sku__eq: fc.option(fc.constantFrom('A', 'B', 'none'), { nil: undefined }),
    depth__gte: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    name__ilike: fc.option(fc.constantFrom('a', 'ET', 'ray'), { nil: undefined }),
    search: fc.option(fc.constantFrom('name:a', 'name:a OR sku:b', '(name:e OR name:g) AND sku:a', '*:1'), { nil: undefined }),
    sort_by: fc.option(fc.constantFrom('id', '-depth,id', 'sku,-id', '-created_at', 'depth', '-depth', 'ratio'), { nil: undefined }),
    size: fc.integer({ min: 1, max: 7 }),
    page: fc.integer({ min: 1, max: 4 }),
  }, { requiredKeys: ['size', 'page'] });

  const reference = (rows: Row[], p: any): number[] => {
    const has = (v: unknown, n: string) => v != null && String(v).toLowerCase().includes(n);
    const term = (r: Row, s: string): boolean => {
      const [f, n] = s.split(':') as [string, string];
      const fields = f === '*' ? ['id', 'name', 'sku', 'ratio'] : [f];
      return fields.some((x) => has((r as any)[x], n.toLowerCase()));
    };
    const search = (r: Row): boolean => {
      switch (p.search) {
        case 'name:a': return term(r, 'name:a');
        case 'name:a OR sku:b': return term(r, 'name:a') || term(r, 'sku:b');
        case '(name:e OR name:g) AND sku:a': return (term(r, 'name:e') || term(r, 'name:g')) && term(r, 'sku:a');
        case '*:1': return term(r, '*:1');
        default: return true;
      }
    };
    let out = rows.filter((r) =>
      (p.sku__eq === undefined || (p.sku__eq === 'none' ? r.sku === null : r.sku === p.sku__eq)) &&
      (p.depth__gte === undefined || r.depth >= p.depth__gte) &&
      (p.name__ilike === undefined || r.name.toLowerCase().includes(p.name__ilike.toLowerCase())) &&
      search(r));
    if (p.sort_by) {
      const keys = p.sort_by.split(',').map((k: string) => ({ f: k.replace(/^[+-]/, ''), s: k.startsWith('-') ? -1 : 1 }));
      out = [...out].sort((a: any, b: any) => {
        for (const { f, s } of keys) {
          if (a[f] === b[f]) continue;
          if (a[f] == null) return s;
          if (b[f] == null) return -s;
          return a[f] < b[f] ? -s : s;
        }
        return 0;
      });
    }
    return out.slice((p.page - 1) * p.size, p.page * p.size).map((r) => r.id);
  };

  fc.assert(fc.property(fc.uniqueArray(row, { selector: (r) => r.id, maxLength: 25 }), params, (rows, p) => {
    const clean = Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined));
    const page = executeList(TABLE, source(rows), parseListQuery(TABLE, clean, OPTIONS));
    const expected = reference(rows, p);
    return JSON.stringify(page.items.map((r) => r.id)) === JSON.stringify(expected);
  }), { numRuns: 1500 });
  t.pass('1500 random lists agree');
});

t.test('early pages of large lists (the bounded heap) match a full sort, ties in source order', async (t) => {
  const sortKeys = ['sku,-depth', '-sku', 'depth', '-created_at,name'];
  fc.assert(fc.property(fc.integer({ min: 4096, max: 9000 }), fc.integer({ min: 1, max: 3 }), fc.constantFrom(...sortKeys), fc.integer(), (n, page, sort_by, seed) => {
    let s = seed >>> 0;
    const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
    const rows: Row[] = Array.from({ length: n }, (_, i) => ({
      id: i + 1, name: ['alpha', 'Beta', 'gamma'][next() % 3]!, sku: next() % 4 === 0 ? null : ['A', 'B', 'C'][next() % 3]!,
      depth: 1 + (next() % 3), ratio: 0, created_at: T0 + (next() % 50) * 1000,
    }));
    const size = 1 + (next() % 60);
    const got = list({ sort_by, page, size }, rows).items.map((r) => r.id);
    const keys = sort_by.split(',').map((k) => ({ f: k.replace(/^[+-]/, ''), sign: k.startsWith('-') ? -1 : 1 }));
    const expected = [...rows].sort((a: any, b: any) => {
      for (const { f, sign } of keys) {
        if (a[f] === b[f]) continue;
        if (a[f] == null) return sign;
        if (b[f] == null) return -sign;
        return a[f] < b[f] ? -sign : sign;
      }
      return a.id - b.id;
    }).slice((page - 1) * size, page * size).map((r) => r.id);
    return JSON.stringify(got) === JSON.stringify(expected);
  }), { numRuns: 40 });
  t.pass('40 large lists agree');
});

// ------------------------------------------------------------------ rows kept in order

interface Timed {
  id: number;
  level: number;
  sku: string | null;
  eta: number | null;
  /** Place in the store's order. */
  seq: number;
}

const TIMED: FieldTable<Timed> = {
  id: { type: 'integer', filters: ['eq'] },
  level: { type: 'integer', filters: ['in'] },
  sku: { type: 'string', filters: ['eq'], none: true, search: true },
  eta: { type: 'number', filters: ['gte', 'lte'] },
  eta_int: { type: 'integer', get: (r) => (r.eta === null ? null : Math.round(r.eta)) },
};

/**
 * A source that keeps its rows in eta order as the inventory view does. Lookups come in
 * reverse store order and are one-shot iterators (gathered rows for several values), so a sort that forgets `rank`, or a second
 * pass over spent candidates, shows. It counts how many rows were read through lookups and scans.
 */
class TimedSource implements ListSource<Timed> {
  readonly rows: Timed[] = [];
  readonly order: OrderedIndex<Timed>;
  candidatesRead = 0;
  private next = 0;

  /** `chunk`: rows a chunk of the order holds (small: a key's rows come in several runs). */
  constructor(chunk?: number) {
    this.order = new OrderedIndex<Timed>((r) => r.eta, (a, b) => a.seq - b.seq, chunk);
  }

  add(row: Omit<Timed, 'seq'>): void {
    const r = { ...row, seq: this.next++ };
    this.rows.push(r);
    this.order.add(r);
  }

  setEta(row: Timed, eta: number | null): void {
    if (!this.order.remove(row)) throw new Error(`row ${row.id} is not found under its key`);
    row.eta = eta;
    this.order.add(row);
  }

  drop(row: Timed): void {
    this.order.remove(row);
    this.rows.splice(this.rows.indexOf(row), 1);
  }

  get size(): number {
    return this.rows.length;
  }

  lookup(field: string, values: readonly unknown[]): Iterable<Timed> | GatheredRows<Timed> | undefined {
    if (field !== 'level' && field !== 'sku') return undefined;
    const hits = this.rows.filter((r) => values.includes(r[field])).reverse();
    if (values.length === 1) return this.counted(hits);
    // Several values: rows the engine may take all at once, as the inventory view gives them.
    return {
      [Symbol.iterator]: () => this.counted(hits),
      toArray: () => {
        this.candidatesRead += hits.length;
        return hits;
      },
    };
  }

  countLookup(field: string, values: readonly unknown[]): number | undefined {
    if (field !== 'level' && field !== 'sku') return undefined;
    return this.rows.filter((r) => values.includes(r[field])).length;
  }

  scan(): Iterable<Timed> {
    return this.counted(this.rows);
  }

  private *counted(rows: Timed[]): Generator<Timed> {
    for (const r of rows) {
      this.candidatesRead++;
      yield r;
    }
  }

  ordered(field: string, descending: boolean): Iterable<readonly Timed[]> | undefined {
    if (field === 'eta') return this.order.ordered(descending);
    if (field === 'eta_int') return this.order.ordered(descending, Math.round);
    return undefined;
  }

  rank(row: Timed): number {
    return row.seq;
  }
}

/** Brute force: filter, then sort by every key with missing values last ascending, first descending, ties in store order. */
function timedReference(rows: Timed[], p: Record<string, unknown>): { ids: number[]; total: number } {
  const levels = p.level__in as number[] | undefined;
  const out = rows.filter((r) =>
    (levels === undefined || levels.includes(r.level)) &&
    (p.sku__eq === undefined || (p.sku__eq === 'none' ? r.sku === null : r.sku === p.sku__eq)) &&
    (p.eta__gte === undefined || (r.eta !== null && r.eta >= (p.eta__gte as number))) &&
    (p.search === undefined || (r.sku !== null && r.sku.toLowerCase().includes(String(p.search).slice(2).toLowerCase()))));
  const value = (r: Timed, f: string): number | string | null => (f === 'eta_int' ? (r.eta === null ? null : Math.round(r.eta)) : (r as any)[f]);
  const keys = String(p.sort_by).split(',').map((k) => ({ f: k.replace(/^[+-]/, ''), s: k.startsWith('-') ? -1 : 1 }));
  out.sort((a, b) => {
    for (const { f, s } of keys) {
      const x = value(a, f);
      const y = value(b, f);
      if (x === y) continue;
      if (x == null) return s;
      if (y == null) return -s;
      return x < y ? -s : s;
    }
    return a.seq - b.seq;
  });
  const size = p.size as number;
  const page = p.page as number;
  return { ids: out.slice((page - 1) * size, page * size).map((r) => r.id), total: out.length };
}

t.test('SubstringIndex: exactly the keys whose text holds the needle, through sets, replacements and removals, kept answers too', async (t) => {
  // Texts of two letters and a space: most needles have every trigram in texts that do not hold them.
  const text = fc.stringMatching(/^[ab ]{0,12}$/);
  const step = fc.record({ key: fc.integer({ min: 0, max: 7 }), text: fc.option(text, { nil: undefined }) });
  const needles = fc.array(fc.stringMatching(/^[ab ]{3,6}$/), { minLength: 1, maxLength: 5 });
  // Needles asked between the steps too: a kept answer must follow every later change. Three
  // kept answers at most, so some are dropped and found anew.
  fc.assert(fc.property(fc.array(fc.tuple(step, needles), { maxLength: 40 }), needles, (steps, last) => {
    const index = new SubstringIndex<number>(3);
    const texts = new Map<number, string>();
    const agrees = (needle: string) => {
      const want = [...texts].filter(([, v]) => v.includes(needle)).map(([k]) => k).sort();
      return JSON.stringify([...index.holding(needle)!].sort()) === JSON.stringify(want);
    };
    for (const [s, asked] of steps) {
      index.set(s.key, s.text);
      if (s.text === undefined) texts.delete(s.key);
      else texts.set(s.key, s.text);
      if (!asked.every(agrees)) return false;
    }
    return last.every(agrees);
  }), { numRuns: 1000 });
  t.equal(new SubstringIndex<number>().holding('ab'), undefined, 'a needle shorter than a trigram gets no answer');
  t.pass('1000 random indexes agree with a scan');
});

t.test('SubstringIndex: with hundreds of keys (postings and answers that become bitmaps), renames back and forth agree with a scan', async (t) => {
  // Short texts of two letters: most trigrams are held by a share of the keys large enough
  // for a bitmap, and a key renamed leaves and joins them again and again.
  const text = fc.stringMatching(/^[ab]{3,7}$/);
  const step = fc.record({ key: fc.integer({ min: 0, max: 299 }), text: fc.option(text, { nil: undefined, freq: 10 }) });
  const needle = fc.stringMatching(/^[ab]{3,5}$/);
  let answers = 0;
  fc.assert(fc.property(fc.array(step, { minLength: 300, maxLength: 1500 }), fc.array(needle, { minLength: 1, maxLength: 6 }), (steps, needles) => {
    const index = new SubstringIndex<number>(4);
    const texts = new Map<number, string>();
    for (const [i, s] of steps.entries()) {
      index.set(s.key, s.text);
      if (s.text === undefined) texts.delete(s.key);
      else texts.set(s.key, s.text);
      if (i % 100 !== 99 && i !== steps.length - 1) continue;
      for (const n of needles) {
        const want = [...texts].filter(([, v]) => v.includes(n)).map(([k]) => k).sort((a, b) => a - b);
        const got = index.holding(n)!;
        if ([...got].sort((a, b) => a - b).join() !== want.join() || got.size !== want.length) return false;
        for (let k = 0; k < 300; k++) if (got.has(k) !== want.includes(k)) return false;
        answers++;
      }
    }
    return true;
  }), { numRuns: 60 });
  t.ok(answers > 500, `${answers} answers agreed with a scan, their size and has too`);
});

t.test('OrderedIndex: runs in key order, ties in tie order, through adds, key changes and removals', async (t) => {
  type Item = { k: number | null; r: number };
  const key = fc.option(fc.constantFrom(1.2, 1.4, 2.5, 3.4, 3.5, 7, 0), { nil: null });
  const step = fc.oneof(
    key.map((k) => ({ op: 'add' as const, k, at: 0 })),
    fc.tuple(key, fc.nat()).map(([k, at]) => ({ op: 'key' as const, k, at })),
    fc.nat().map((at) => ({ op: 'remove' as const, k: null, at })),
  );
  fc.assert(fc.property(fc.array(step, { maxLength: 80 }), fc.boolean(), fc.constantFrom(2, 3, 512), (steps, grouped, chunk) => {
    const index = new OrderedIndex<Item>((i) => i.k, (a, b) => a.r - b.r, chunk);
    let held: Item[] = [];
    let rank = 0;
    for (const s of steps) {
      if (s.op === 'add') {
        const item = { k: s.k, r: rank++ };
        held.push(item);
        index.add(item);
      } else if (held.length > 0) {
        const item = held[s.at % held.length]!;
        if (!index.remove(item)) return false;
        if (s.op === 'key') {
          item.k = s.k;
          index.add(item);
        } else {
          held = held.filter((h) => h !== item);
          if (index.remove(item)) return false;
        }
      }
      if (index.size !== held.length) return false;
      const group = grouped ? Math.round : (k: number) => k;
      for (const descending of [false, true]) {
        const runs = [...index.ordered(descending, grouped ? Math.round : undefined)];
        const expected = [...held].sort((a, b) => {
          if (a.k === null || b.k === null) return a.k === b.k ? a.r - b.r : (a.k === null ? 1 : -1) * (descending ? -1 : 1);
          const d = group(a.k) - group(b.k);
          return d !== 0 ? (descending ? -d : d) : a.r - b.r;
        });
        if (JSON.stringify(runs.flat()) !== JSON.stringify(expected)) return false;
        // One (grouped) key a run, none empty, at most a chunk unless joined by `group`; a key's runs one after the other.
        const runKeys = runs.map((run) => (run[0]!.k === null ? null : group(run[0]!.k)));
        if (runs.some((run, r) => run.length === 0 || run.some((i) => (i.k === null ? null : group(i.k)) !== runKeys[r]))) return false;
        if (!grouped && runs.some((run) => run.length > chunk)) return false;
        if (runKeys.some((k, r) => r > 0 && k !== runKeys[r - 1] && runKeys.indexOf(k) < r)) return false;
      }
      const loaded = new OrderedIndex<Item>((i) => i.k, (a, b) => a.r - b.r, chunk);
      loaded.load([...held].sort((a, b) => a.r - b.r));
      if (JSON.stringify([...loaded.ordered(false)].flat()) !== JSON.stringify([...index.ordered(false)].flat())) return false;
    }
    return true;
  }), { numRuns: 400 });
  const index = new OrderedIndex<Item>((i) => i.k, (a, b) => a.r - b.r);
  t.throws(() => index.load([{ k: 1, r: 2 }, { k: 1, r: 1 }]), /tie order/);
  t.throws(() => index.add({ k: NaN, r: 1 }), /NaN/);
});

t.test('property: a list sorted by a kept order equals a brute-force sort, read in order or sorted, as rows change', async (t) => {
  const eta = fc.option(fc.constantFrom(10, 11.2, 12.4, 12.6, 40, 41.2), { nil: null });
  const row = fc.record({ level: fc.integer({ min: 1, max: 3 }), sku: fc.option(fc.constantFrom('A', 'B', 'Cx'), { nil: null }), eta });
  const params = fc.record({
    level__in: fc.option(fc.subarray([1, 2, 3], { minLength: 1 }), { nil: undefined }),
    sku__eq: fc.option(fc.constantFrom('A', 'Cx', 'none'), { nil: undefined }),
    eta__gte: fc.option(fc.constantFrom(11, 40), { nil: undefined }),
    search: fc.option(fc.constantFrom('*:x', '*:b'), { nil: undefined }),
    sort_by: fc.constantFrom('eta', '-eta', 'eta_int', '-eta_int', 'eta,-id', '-eta,sku,id', '-eta_int,-id'),
    size: fc.integer({ min: 1, max: 12 }),
    page: fc.integer({ min: 1, max: 6 }),
  }, { requiredKeys: ['sort_by', 'size', 'page'] });
  const change = fc.tuple(fc.nat(), eta, fc.constantFrom('eta', 'drop', 'add'));
  let walked = 0;
  fc.assert(fc.property(fc.array(row, { maxLength: 150 }), fc.array(fc.tuple(change, params), { minLength: 1, maxLength: 8 }), fc.constantFrom(2, 5, 512), (rows, rounds, chunk) => {
    const source = new TimedSource(chunk);
    rows.forEach((r, i) => source.add({ id: i + 1, ...r }));
    let nextId = rows.length + 1;
    for (const [[at, newEta, kind], p] of rounds) {
      // Move a row (its eta changes), drop one, or add one: the order must follow.
      if (kind === 'add') source.add({ id: nextId++, level: 1 + (at % 3), sku: null, eta: newEta });
      else if (source.rows.length > 0) {
        const target = source.rows[at % source.rows.length]!;
        if (kind === 'eta') source.setEta(target, newEta);
        else source.drop(target);
      }
      const clean = Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined));
      const query = parseListQuery(TIMED, clean, OPTIONS);
      const expected = timedReference(source.rows, clean);
      for (const plan of ['walk', 'sort', 'auto'] as const) {
        const got = executeList(TIMED, source, query, plan);
        if (JSON.stringify([got.items.map((r) => r.id), got.total]) !== JSON.stringify([expected.ids, expected.total])) {
          throw new Error(`${plan} ${JSON.stringify(clean)}: ${JSON.stringify(got.items.map((r) => r.id))}/${got.total}, expected ${JSON.stringify(expected)}`);
        }
      }
      walked++;
    }
    return true;
  }), { numRuns: 300 });
  t.ok(walked > 300, `${walked} lists agree`);
});

t.test('a key whose rows span several chunks of the order is sorted by the other keys as one run', async (t) => {
  const source = new TimedSource(2);
  for (let i = 0; i < 9; i++) source.add({ id: i + 1, level: 1, sku: ['B', 'A', 'C'][i % 3]!, eta: i < 7 ? 5 : 6 });
  for (const sort_by of ['eta,-id', 'eta,sku,id', '-eta,-id']) {
    const p = { sort_by, size: 4, page: 1 };
    const got = executeList(TIMED, source, parseListQuery(TIMED, p, OPTIONS), 'walk');
    t.same(got.items.map((r) => r.id), timedReference(source.rows, p).ids, sort_by);
  }
});

t.test('a large index-only list sorted by a kept order reads none of the looked-up rows', async (t) => {
  const source = new TimedSource();
  for (let i = 0; i < 20_000; i++) source.add({ id: i + 1, level: 1 + (i % 2), sku: null, eta: (i * 7919) % 500 });
  const query = parseListQuery(TIMED, { level__in: [1], sort_by: '-eta' }, OPTIONS);
  const page = executeList(TIMED, source, query);
  t.equal(page.total, 10_000);
  t.equal(source.candidatesRead, 0, 'the page came from the order; the total from the index count');
  t.same(page.items.map((r) => r.id), timedReference(source.rows, { level__in: [1], sort_by: '-eta', size: 50, page: 1 }).ids);
  // Forced to sort, the same query reads every candidate: the check above can fail.
  executeList(TIMED, source, query, 'sort');
  t.equal(source.candidatesRead, 10_000);
});

t.test('property: large lists choose the kept order or a sort by cost, and give up on an order that holds the matches last', async (t) => {
  let fromOrder = 0;
  fc.assert(fc.property(
    fc.integer({ min: 3000, max: 6000 }), fc.integer(), fc.boolean(),
    fc.constantFrom('eta', '-eta', 'eta,-id', '-eta_int,sku'),
    fc.option(fc.subarray([1, 2, 3], { minLength: 1 }), { nil: undefined, freq: 2 }), fc.option(fc.constantFrom('A', 'none'), { nil: undefined, freq: 2 }),
    fc.option(fc.constantFrom(20, 400), { nil: undefined, freq: 2 }),
    fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 20 }),
    (n, seed, adversarial, sort_by, levels, sku, gte, page, size) => {
      let s = seed >>> 0;
      const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
      const source = new TimedSource();
      for (let i = 0; i < n; i++) {
        const level = 1 + (next() % 3);
        // Adversarial: level 1 holds the largest etas, so an ascending walk for it reads every other row first.
        const eta = next() % 10 === 0 ? null : adversarial ? level === 1 ? 500 + (next() % 100) : next() % 450 : (next() % 600) + (next() % 5) / 5;
        source.add({ id: i + 1, level, sku: next() % 3 === 0 ? null : ['A', 'B'][next() % 2]!, eta });
      }
      const p: Record<string, unknown> = { sort_by, page, size };
      if (levels) p.level__in = levels;
      if (sku) p.sku__eq = sku;
      if (gte) p.eta__gte = gte;
      const expected = timedReference(source.rows, p);
      const got = executeList(TIMED, source, parseListQuery(TIMED, p, OPTIONS));
      if (source.candidatesRead === 0) fromOrder++;
      if (JSON.stringify([got.items.map((r) => r.id), got.total]) !== JSON.stringify([expected.ids, expected.total])) {
        throw new Error(`${JSON.stringify(p)} adversarial ${adversarial}: ${JSON.stringify(got.items.map((r) => r.id))}/${got.total}, expected ${JSON.stringify(expected)}`);
      }
      return true;
    },
  ), { numRuns: 60 });
  t.ok(fromOrder > 0, `${fromOrder} of 60 lists read only the kept order`);

  // The order holds level 1 last: the walk gives up after half as many rows as the candidates,
  // then sorts the candidates (read again: the count pass spent the first iterator).
  const source = new TimedSource();
  for (let i = 0; i < 20_000; i++) source.add({ id: i + 1, level: 1 + (i % 2), sku: i % 3 === 0 ? 'A' : null, eta: i % 2 === 0 ? 1000 + (i % 97) : i % 89 });
  for (const p of [{ level__in: [1], sort_by: 'eta' }, { level__in: [1], sku__eq: 'A', sort_by: 'eta' }, { level__in: [1], sort_by: 'eta,-id' }]) {
    source.candidatesRead = 0;
    const got = executeList(TIMED, source, parseListQuery(TIMED, p, OPTIONS));
    const expected = timedReference(source.rows, { ...p, size: 50, page: 1 });
    t.same([got.items.map((r) => r.id), got.total], [expected.ids, expected.total], JSON.stringify(p));
    t.ok(source.candidatesRead >= 10_000, `${JSON.stringify(p)}: fell back to sorting the candidates (${source.candidatesRead} read)`);
  }
});

t.test('an unsorted page with nothing to test reads the rows up to the page, and the source counts them all', async (t) => {
  const source = new TimedSource();
  for (let i = 0; i < 5_000; i++) source.add({ id: i + 1, level: 1 + (i % 2), sku: null, eta: i % 50 });
  const page = executeList(TIMED, source, parseListQuery(TIMED, { page: 3, size: 100 }, OPTIONS));
  t.equal(page.total, 5_000);
  t.equal(page.pages, 50);
  t.same(page.items.map((r) => r.id), source.rows.slice(200, 300).map((r) => r.id), 'the third hundred, in scan order');
  t.equal(source.candidatesRead, 300, 'no row past the page was read');
  source.candidatesRead = 0;
  const past = executeList(TIMED, source, parseListQuery(TIMED, { page: 60, size: 100 }, OPTIONS));
  t.same([past.items.length, past.total, source.candidatesRead], [0, 5_000, 0], 'a page past the end reads no row');
  // With a filter to test, every row is read to count the matches.
  source.candidatesRead = 0;
  const filtered = executeList(TIMED, source, parseListQuery(TIMED, { eta__lte: 24, size: 100 }, OPTIONS));
  t.equal(filtered.total, 2_500);
  t.equal(source.candidatesRead, 5_000);
});

t.test('a page read from a lookup\'s own order does not ask the source its size; an unforced walk does', async (t) => {
  // As the jobs of a status: the lookup keeps its rows in the order of `eta`, and the source
  // counts its rows as a collection does, from LMDB's statistics (a cost on every page).
  const rows: Timed[] = Array.from({ length: 400 }, (_, i) => ({ id: i + 1, level: 1 + (i % 4), sku: null, eta: (i * 37) % 101, seq: i }));
  let sizeReads = 0;
  const byEta = (list: Timed[], descending: boolean) => [...list].sort((a, b) => (descending ? b.eta! - a.eta! : a.eta! - b.eta!) || a.seq - b.seq).map((r) => [r]);
  const kept: ListSource<Timed> = {
    lookup(field, values) {
      if (field !== 'level') return undefined;
      const hits = rows.filter((r) => values.includes(r.level));
      return { [Symbol.iterator]: () => hits[Symbol.iterator](), toArray: () => hits, inOrderOf: (name: string, descending: boolean) => (name === 'eta' ? byEta(hits, descending) : undefined) };
    },
    countLookup: (field, values) => (field === 'level' ? rows.filter((r) => values.includes(r.level)).length : undefined),
    scan: () => rows,
    get size() {
      sizeReads++;
      return rows.length;
    },
    ordered: (field, descending) => (field === 'eta' ? byEta(rows, descending) : undefined),
    rank: (row) => row.seq,
  };
  const p = { level__in: [2], sort_by: '-eta', size: 5, page: 2 };
  const page = executeList(TIMED, kept, parseListQuery(TIMED, p, OPTIONS));
  t.same(page.items.map((r) => r.id), timedReference(rows, p).ids);
  t.equal(page.total, 100);
  t.equal(sizeReads, 0, 'the lookup\'s own order is walked whatever the size');
  // Without a lookup the engine weighs walking the source's order against a sort: that asks it.
  const all = { eta__gte: 10, sort_by: 'eta', size: 5, page: 1 };
  t.same(executeList(TIMED, kept, parseListQuery(TIMED, all, OPTIONS)).items.map((r) => r.id), timedReference(rows, all).ids);
  t.ok(sizeReads > 0, 'an unforced walk reads the size');
});
