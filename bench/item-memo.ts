// `npm run bench:item-memo`: pages of 100 rows never seen before through the list route's ItemMemo
// (10,000 kept), against the same memo dropping its oldest with `kept.keys().next()` (the code
// before `35d6224`), in the same run: µs a page and the ratio. docs/benchmarks.md, "Kept items dropped from a ring".
import { ItemMemo, KEPT_ITEMS } from '../src/http/list-route.js';

class MapHeadMemo<T> {
  private readonly kept = new Map<object, string>();
  constructor(private readonly view: (row: T) => unknown, private readonly limit: number) {}
  item(row: T & object): string {
    let json = this.kept.get(row);
    if (json === undefined) {
      json = JSON.stringify(this.view(row));
      Object.freeze(row);
      if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(row, json);
    }
    return json;
  }
}

const view = (r: { id: number; name: string }) => ({ id: r.id, name: r.name, qty: r.id % 7 });
let next = 0;
const page = () => Array.from({ length: 100 }, () => ({ id: ++next, name: `sku ${next}` }));
function run(label: string, item: (row: { id: number; name: string }) => string): number {
  for (let i = 0; i < 300; i++) for (const r of page()) item(r); // fill and warm
  const pages = 3000;
  const t = performance.now();
  for (let i = 0; i < pages; i++) for (const r of page()) item(r);
  const us = ((performance.now() - t) * 1000) / pages;
  console.log(`${label}: ${us.toFixed(1)} µs a page of 100 new items`);
  return us;
}
for (let round = 1; round <= 2; round++) {
  const before = new MapHeadMemo(view, KEPT_ITEMS);
  const after = new ItemMemo(view, KEPT_ITEMS);
  const b = run(`round ${round}, Map head`, (r) => before.item(r));
  const a = run(`round ${round}, ring    `, (r) => after.item(r));
  console.log(`round ${round}: ring / Map head = ${(a / b).toFixed(2)}`);
}
