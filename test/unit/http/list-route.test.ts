// listRoute's kept items for sources with immutable rows: same bytes as JSON.stringify, a new
// row object serialized anew, rows frozen, and the test-time check that catches a lying source.
import t from 'tap';
import Type from 'typebox';
import type { FieldTable, ListSource, Page } from '../../../src/domain/list/index.js';
import { ItemMemo, KEPT_ANSWERS, listRoute } from '../../../src/http/list-route.js';
import { JsonReply, route } from '../../../src/http/route.js';
import { startServer } from '../../helpers/server.js';

interface Row {
  id: number;
  name: string;
  level: number;
  tags: string[];
  note: string | null;
}

const TABLE: FieldTable<Row> = {
  id: { type: 'integer', filters: ['eq', 'in'] },
  name: { type: 'string', filters: ['eq', 'ilike'], search: true },
  level: { type: 'integer', filters: ['in'] },
};
const OPTIONS = { maxPageSize: 100, timeZone: 'Europe/Berlin' };
const Item = Type.Object({ id: Type.Integer(), name: Type.String(), level: Type.Integer(), tags: Type.Array(Type.String()), note: Type.Union([Type.String(), Type.Null()]) });

// Names that JSON.stringify must escape, outside the BMP, or lone surrogates.
const NAMES = ['plain', 'quote " and \\ backslash', 'tab\tnew\nline', 'ctrl \u0001\u001f', 'umlaut äöü €', 'astral 😀 𝄞', 'lone \ud800 surrogate', '</script>', ''];

function makeRows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({ id: i + 1, name: NAMES[i % NAMES.length]!, level: 1 + (i % 3), tags: i % 2 ? ['a', `t${i}`] : [], note: i % 4 ? `n${i}` : null }));
}

const view = (r: Row) => ({ id: r.id, name: r.name, level: r.level, tags: r.tags, note: r.note });

/** An in-memory source over a replaceable array of rows. */
function memorySource(rows: Row[], rowsImmutable: boolean): ListSource<Row> & { rows: Row[]; rowsImmutable: boolean } {
  return {
    rows,
    rowsImmutable,
    lookup(field, values) {
      return field === 'level' ? this.rows.filter((r) => values.includes(r.level)) : undefined;
    },
    scan() {
      return this.rows;
    },
  };
}

const pageOf = (items: Row[], total = items.length): Page<Row> => ({ items, total, page: 1, size: 50, pages: Math.ceil(total / 50) });

t.test('ItemMemo', async (t) => {
  t.test('the envelope is byte for byte JSON.stringify of the viewed page', async (t) => {
    const rows = makeRows(40);
    const memo = new ItemMemo(view, 1000);
    for (const items of [rows, rows.slice(3, 17), rows.slice(0, 1), []]) {
      const page = pageOf(items, 123);
      const expected = JSON.stringify({ ...page, items: page.items.map(view) });
      t.equal(memo.envelope(page), expected, `${items.length} rows, first pass`);
      t.equal(memo.envelope(page), expected, `${items.length} rows, from kept items`);
    }
    t.equal(memo.size, 40);
  });

  t.test('a view answering nothing serializable gives null, as in an array', async (t) => {
    const memo = new ItemMemo<Row>((r) => (r.id % 2 ? undefined : view(r)), 10);
    const page = pageOf(makeRows(4));
    t.equal(memo.envelope(page), JSON.stringify({ ...page, items: page.items.map((r) => (r.id % 2 ? undefined : view(r))) }));
    t.match(memo.envelope(page), /^\{"items":\[null,\{/);
  });

  t.test('a row replaced by a new object is serialized anew; the same object is not', async (t) => {
    let calls = 0;
    const memo = new ItemMemo<Row>((r) => (calls++, view(r)), 10);
    const rows = makeRows(3);
    memo.envelope(pageOf(rows));
    t.equal(calls, 3);
    memo.envelope(pageOf(rows));
    t.equal(calls, 3, 'same row objects: kept items');
    const changed = { ...rows[1]!, name: 'renamed', tags: ['new'] };
    const next = [rows[0]!, changed, rows[2]!];
    const answer = memo.envelope(pageOf(next))!;
    t.equal(calls, 4, 'only the new object is viewed');
    t.equal(answer, JSON.stringify({ ...pageOf(next), items: next.map(view) }));
    t.match(answer, /"name":"renamed","level":\d,"tags":\["new"\]/);
  });

  t.test('a page of the same row objects reuses its answer; any other row, order or envelope does not', async (t) => {
    const memo = new ItemMemo(view, 10);
    const rows = makeRows(4);
    const first = memo.envelope(pageOf(rows, 9))!;
    t.equal(memo.envelope(pageOf(rows.slice(), 9)), first, 'same rows in a new array: the same string');
    const swapped = [rows[1]!, rows[0]!, rows[2]!, rows[3]!];
    t.equal(memo.envelope(pageOf(swapped, 9)), JSON.stringify({ ...pageOf(swapped, 9), items: swapped.map(view) }), 'another order');
    t.equal(memo.envelope(pageOf(rows, 10)), JSON.stringify({ ...pageOf(rows, 10), items: rows.map(view) }), 'another total');
    const replaced = [rows[0]!, { ...rows[1]!, name: 'new' }, rows[2]!, rows[3]!];
    t.match(memo.envelope(pageOf(replaced, 10)), /"name":"new"/, 'a replaced row');
    t.equal(memo.envelope(pageOf(rows.slice(0, 3), 10)), JSON.stringify({ ...pageOf(rows.slice(0, 3), 10), items: rows.slice(0, 3).map(view) }), 'fewer rows');
  });

  t.test('pages asked in turn reuse their answers, up to KEPT_ANSWERS.count of them, the oldest made dropped first', async (t) => {
    const memo = new ItemMemo(view, 1000);
    const count = KEPT_ANSWERS.count;
    const rows = makeRows(3 * (count + 1));
    const pageAt = (n: number) => ({ ...pageOf(rows.slice(3 * n, 3 * n + 3), rows.length), page: n + 1 });
    let assembled = 0;
    const item = memo.item.bind(memo);
    memo.item = (row) => (assembled++, item(row));
    for (const n of [0, 1, 0, 1]) t.equal(memo.envelope(pageAt(n)), JSON.stringify({ ...pageAt(n), items: pageAt(n).items.map(view) }), `page ${n + 1}`);
    t.equal(assembled, 6, 'each page assembled once');
    for (let n = 2; n < count; n++) memo.envelope(pageAt(n));
    assembled = 0;
    for (let n = 0; n < count; n++) memo.envelope(pageAt(n));
    t.equal(assembled, 0, `${count} pages: every answer kept`);
    memo.envelope(pageAt(count));
    memo.envelope(pageAt(1));
    t.equal(assembled, 3, 'one more page drops the first made, not the second');
    memo.envelope(pageAt(0));
    t.equal(assembled, 6, 'the first page is assembled again');
  });

  t.test('kept answers hold at most their characters\' limit: the oldest made go first, and one larger than it is not kept', async (t) => {
    const rows = makeRows(12);
    const pageAt = (n: number, size = 3) => ({ ...pageOf(rows.slice(size * n, size * n + size), rows.length), page: n + 1, size });
    const chars = (memo: ItemMemo<Row>, page: Page<Row>) => memo.envelope(page)!.length;
    const probe = new ItemMemo(view, 1000);
    const limit = chars(probe, pageAt(0)) + chars(probe, pageAt(1)) + 10;
    const memo = new ItemMemo(view, 1000, { count: 32, chars: limit });
    let assembled = 0;
    const item = memo.item.bind(memo);
    memo.item = (row) => (assembled++, item(row));
    for (const n of [0, 1, 0, 1]) memo.envelope(pageAt(n));
    t.equal(assembled, 6, 'two pages fit');
    memo.envelope(pageAt(2));
    memo.envelope(pageAt(1));
    t.equal(assembled, 9, 'a third drops the first made only');
    memo.envelope(pageAt(0));
    t.equal(assembled, 12, 'the first is assembled again');
    const whole = { ...pageOf(rows, rows.length), size: 12 };
    t.ok(chars(probe, whole) > limit);
    t.equal(memo.envelope(whole), JSON.stringify({ ...whole, items: rows.map(view) }));
    memo.envelope(whole);
    t.equal(assembled, 36, 'an answer over the limit is assembled each time');
    assembled = 0;
    memo.envelope(pageAt(2));
    memo.envelope(pageAt(0));
    t.equal(assembled, 0, 'and drops none of the kept');
  });

  t.test('a kept row is frozen: writing it in place throws at the writer', async (t) => {
    const memo = new ItemMemo(view, 10);
    const [row] = makeRows(1);
    memo.item(row!);
    t.ok(Object.isFrozen(row));
    t.throws(() => {
      row!.name = 'changed in place';
    }, TypeError);
  });

  t.test('past its limit the oldest items go; answers stay right', async (t) => {
    const memo = new ItemMemo(view, 3);
    const rows = makeRows(5);
    for (const r of rows) t.equal(memo.item(r), JSON.stringify(view(r)));
    t.equal(memo.size, 3);
    t.equal(memo.envelope(pageOf(rows)), JSON.stringify({ ...pageOf(rows), items: rows.map(view) }));
  });

  t.test('over many rounds past its limit it keeps exactly the newest items, the oldest going first', async (t) => {
    let calls = 0;
    const limit = 7;
    const memo = new ItemMemo<Row>((r) => (calls++, view(r)), limit);
    const rows = makeRows(40);
    // Rows come in rounds of different lengths, so the oldest kept wraps around at every place.
    let seen: Row[] = [];
    for (const length of [3, 7, 11, 2, 9, 8]) {
      const round = rows.slice(seen.length, seen.length + length);
      for (const r of round) memo.item(r);
      seen = [...seen, ...round];
      t.equal(memo.size, Math.min(limit, seen.length), `after ${seen.length} rows`);
      const newest = seen.slice(-limit);
      calls = 0;
      for (const r of newest) t.equal(memo.item(r), JSON.stringify(view(r)));
      t.equal(calls, 0, `the newest ${newest.length} of ${seen.length} are kept`);
      const dropped = seen.at(-limit - 1);
      if (dropped) {
        memo.item(dropped);
        t.equal(calls, 1, 'the one before them was dropped');
        // Asking for it again made it the newest; the memo is now a row further on.
        seen = [...seen.filter((r) => r !== dropped), dropped];
      }
    }
    t.equal(memo.size, limit);
    t.equal(new ItemMemo(view, 0).item(rows[0]!), JSON.stringify(view(rows[0]!)), 'a limit of 0 keeps nothing and still answers');
  });

  t.test('an envelope whose first field is not items is left to the caller', async (t) => {
    const memo = new ItemMemo(view, 10);
    const rows = makeRows(2);
    t.equal(memo.envelope({ total: 2, items: rows, page: 1, size: 50, pages: 1 }), undefined);
  });

  t.test('envelope fields the engine may add are written as JSON.stringify writes them', async (t) => {
    const memo = new ItemMemo(view, 10);
    const page = { ...pageOf(makeRows(2)), cursor: 'x"y', extra: undefined };
    t.equal(memo.envelope(page), JSON.stringify({ ...page, items: page.items.map(view) }));
    t.equal(memo.envelope({ items: [] } as unknown as Page<Row>), '{"items":[]}');
  });
});

t.test('listRoute over HTTP', async (t) => {
  const immutable = memorySource(makeRows(30), true);
  const mutable = memorySource(makeRows(30), false);
  const spec = { tag: 'test', permission: 'things:view', summary: 'rows', fields: TABLE, item: Item, view, options: OPTIONS };
  const s = await startServer([
    listRoute({ ...spec, path: '/api/v2/kept', source: immutable }),
    listRoute({ ...spec, path: '/api/v2/fresh', source: mutable }),
    route({
      method: 'GET', path: '/api/v2/bad_reply', tag: 'test', permission: null, summary: 'a reply off its schema',
      responses: { 200: Item }, handler: () => new JsonReply('{"id":"one"}'),
    }),
  ]);
  t.teardown(() => s.close());
  const c = s.client;
  const expected = (src: { rows: Row[] }, filter: (r: Row) => boolean, page = 1, size = 50) => {
    const all = src.rows.filter(filter);
    return JSON.stringify({ items: all.slice((page - 1) * size, page * size).map(view), total: all.length, page, size, pages: Math.ceil(all.length / size) });
  };

  t.test('answers are the bytes of JSON.stringify of the viewed page, kept items or not', async (t) => {
    for (const path of ['/api/v2/kept', '/api/v2/fresh']) {
      const src = path.endsWith('kept') ? immutable : mutable;
      for (let i = 0; i < 2; i++) {
        const all = await c.get(path);
        t.equal(all.status, 200);
        t.equal(all.text, expected(src, () => true));
        const some = await c.get(`${path}?level__in=2&page=2&size=4&sort_by=-id`);
        const level2 = src.rows.filter((r) => r.level === 2).sort((a, b) => b.id - a.id);
        t.equal(some.text, JSON.stringify({ items: level2.slice(4, 8).map(view), total: level2.length, page: 2, size: 4, pages: Math.ceil(level2.length / 4) }));
      }
    }
    t.ok(immutable.rows.every((r) => Object.isFrozen(r)), 'rows of the immutable source are frozen once listed');
    t.notOk(mutable.rows.some((r) => Object.isFrozen(r)), 'rows of other sources are left alone');
  });

  t.test('a row replaced by the source shows its new values at once', async (t) => {
    await c.get('/api/v2/kept');
    immutable.rows = immutable.rows.map((r) => (r.id === 5 ? { ...r, name: 'five, renamed', tags: ['x'] } : r));
    const r = await c.get('/api/v2/kept');
    t.equal(r.text, expected(immutable, () => true));
    t.equal(r.json.items[4].name, 'five, renamed');
  });

  t.test('a source without the promise may change rows in place', async (t) => {
    await c.get('/api/v2/fresh');
    mutable.rows[2]!.name = 'changed in place';
    const r = await c.get('/api/v2/fresh');
    t.equal(r.json.items[2].name, 'changed in place');
  });

  t.test('with checkResponses, a stale kept item fails the request (a source breaking its promise)', async (t) => {
    await c.get('/api/v2/kept');
    // Freezing is shallow: a nested array changed in place is what only the byte check sees.
    immutable.rows[0]!.tags.push('sneaked in');
    const r = await c.get('/api/v2/kept');
    t.equal(r.status, 500);
    const logged = s.lines.find((l) => l.msg === 'request failed' && l.url === '/api/v2/kept');
    t.match(logged?.err?.message, /differs from JSON\.stringify of its value/);
    immutable.rows[0]!.tags.pop();
    t.equal((await c.get('/api/v2/kept')).status, 200);
  });

  t.test('with checkResponses, a JsonReply is checked against the response schema', async (t) => {
    const r = await c.get('/api/v2/bad_reply');
    t.equal(r.status, 500);
    const logged = s.lines.find((l) => l.msg === 'request failed' && l.url === '/api/v2/bad_reply');
    t.match(logged?.err?.message, /does not match its schema/);
  });
});
