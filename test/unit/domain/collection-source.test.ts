// A store collection as a list source: which fields it can look up comes from the collection's
// own indexes, so a field table naming an index the collection lacks is refused when the
// route is built, not found out as a scan (or a wrong page) on a site.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/store/store.js';
import { collectionSource } from '../../../src/domain/list/collection-source.js';
import { executeList, parseListQuery, type FieldTable } from '../../../src/domain/list/index.js';
import { things, type Thing } from '../../fixtures/things.js';

t.test('lookups follow the collection\'s indexes; an index it lacks is refused at once', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'collection-source-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open({ dir }, [things]);
  t.teardown(() => store.close());
  const c = store.collection(things);
  await store.write(() => {
    for (let i = 0; i < 9; i++) c.put({ id: `t${i}`, group: i % 3, tags: [] });
  });
  t.throws(() => collectionSource(c, { id: null, colour: 'colour' }), /collection things has no index colour/);
  t.throws(() => collectionSource(c, { id: null }, { created_at: 'created_at' }), /no index created_at/, 'an order index too');

  const source = collectionSource(c, { id: null, group: 'group' });
  t.equal(source.lookup('tags', ['a']), undefined, 'a field the source was not given is no lookup');
  t.same([...source.lookup('group', [1])!].map((r) => r.id), ['t1', 't4', 't7']);
  const table: FieldTable<Thing> = { id: { type: 'string', filters: ['eq'] }, group: { type: 'integer', filters: ['eq', 'in'] } };
  const options = { maxPageSize: 100, timeZone: 'UTC' };
  let scanned = 0;
  const counting = { ...source, scan: () => { scanned++; return source.scan(); } };
  t.equal(executeList(table, counting, parseListQuery(table, { group__eq: '2' }, options)).total, 3);
  t.equal(scanned, 0, 'a filter on an indexed field is answered by its index, with no flag in the field table');
});
