// Ids of requests and jobs (src/domain/requests/record-id.ts): UUIDs of version 7 whose key
// order is the order they were made, within a millisecond too, across refills of the pool.
import t from 'tap';
import { newRecordId } from '../../../src/domain/requests/record-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('ids made in a tight loop are version 7, distinct, in the order they were made, and carry the time', (t) => {
  const before = Date.now();
  // Many per millisecond, and a hundred times the pool of random bytes.
  const ids = Array.from({ length: 25_600 }, () => newRecordId());
  const after = Date.now();
  t.equal(ids.filter((id) => !V7.test(id)).length, 0, 'every id is a uuid of version 7');
  t.equal(new Set(ids).size, ids.length, 'no id twice');
  let outOfOrder = 0;
  for (let i = 1; i < ids.length; i++) if (ids[i - 1]! >= ids[i]!) outOfOrder++;
  t.equal(outOfOrder, 0, 'each id sorts after the one before');
  const ms = (id: string) => parseInt(id.replace('-', '').slice(0, 12), 16);
  t.ok(ms(ids[0]!) >= before && ms(ids.at(-1)!) <= after + 1, `the first 48 bits are the time (${ms(ids[0]!)} in ${before}..${after})`);
  t.end();
});
