// What the balcony screen's Pack step lists, from the request's picks (browser/console/pack.ts).
import t from 'tap';
import { packLines, type PickForPacking } from '../../browser/console/pack.js';

const pick = (sku_id: string | null, status: string, quantity: number | null, booked?: number | null): PickForPacking => ({
  status, sku_id, sku_name: sku_id ? `name of ${sku_id}` : null, quantity, measurement_unit: 'PIECE', details: booked === undefined ? {} : { booked_quantity: booked },
});

const cases: { name: string; picks: PickForPacking[]; want: [string, number][] }[] = [
  { name: 'one pick, booked as planned', picks: [pick('A', 'SUCCEEDED', 3, 3)], want: [['A', 3]] },
  { name: 'a short pick packs what was booked', picks: [pick('A', 'SUCCEEDED', 5, 2)], want: [['A', 2]] },
  { name: 'no booked quantity recorded: the planned one', picks: [pick('A', 'SUCCEEDED', 4)], want: [['A', 4]] },
  { name: 'the same SKU from two boxes is one line', picks: [pick('A', 'SUCCEEDED', 2, 2), pick('B', 'SUCCEEDED', 1, 1), pick('A', 'SUCCEEDED', 3, 3)], want: [['A', 5], ['B', 1]] },
  { name: 'cancelled, open and empty picks pack nothing', picks: [pick('A', 'CANCELLED', 2), pick('B', 'EXECUTING', 1), pick('C', 'SUCCEEDED', 1, 0), pick(null, 'SUCCEEDED', 1, 1)], want: [] },
  { name: 'no picks', picks: [], want: [] },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const lines = packLines(c.picks);
    t.same(lines.map((l) => [l.sku_id, l.quantity]), c.want);
    for (const l of lines) t.equal(l.sku_name, `name of ${l.sku_id}`, 'the SKU keeps its name');
  });
}
