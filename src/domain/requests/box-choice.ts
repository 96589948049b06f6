/**
 * Which boxes an entity of a request takes its items (or its room) from, best first, in the
 * plan's order (docs/requests.md): fewest carrier moves, then the least open work on the
 * carrier's level, then the oldest box, then the box id.
 *
 * Judging a box (reading its carrier, whether other work holds it, what stands in front of it
 * in its lane) is what costs, and a putaway on a site of 100,000 spaces judged every empty box
 * there. So the boxes come in the plan's order as far as it is known before
 * judging: oldest first, or level by level from the least open work and oldest first within
 * equal work (a putaway's and a replenishment's: on a site whose boxes have one age, as
 * seeded, age alone put the boxes of the busier levels first). Judging stops once the quantity
 * is covered by boxes on carriers the plan brings already (no move) and boxes that need one
 * move on a level of the least work: a later box needs a move at least, stands on a level of
 * no less work, and on one of equal work is younger, so it cannot come before any of them. The
 * choice is the same as judging every box.
 */

/** A box with what it can give (items to pick, room to fill). */
export interface Offer<B> {
  box: B;
  free: number;
}

/** A usable box's place: the open work of its level (and what else the caller keeps of it). */
export interface Weighed {
  work: number;
}

export type Judged<B, W extends Weighed> = Offer<B> & W & { moves: number; order: number };

/**
 * The judged boxes, best first, and what all of them can give. Every offer was judged when
 * `available` is under `quantity`; otherwise `best` holds every box that can come first.
 * `brought` are the offers on carriers the plan brings already, oldest first (then by id),
 * `rest` the others, oldest first or by their level's work and then oldest first (see above);
 * `rest` is read only as far as needed. Judging has two steps: `weigh`
 * reads where the box stands (undefined: it cannot be used), `moves` counts the carrier moves
 * it needs (undefined: other work holds it), which is what costs: a box on a level of more
 * than `leastWork()` (the least open work of the levels a box may stand on, asked once a box
 * stands on one) is counted only when the others do not settle the choice.
 */
export function chooseBoxes<B, W extends Weighed>(
  brought: readonly Offer<B>[], rest: Iterable<Offer<B>>, quantity: number, leastWork: () => number,
  weigh: (box: B) => W | undefined, moves: (box: B, weighed: W) => number | undefined,
): { best: Judged<B, W>[]; available: number } {
  const best: Judged<B, W>[] = [];
  let available = 0;
  /** What the boxes no later box can come before give. */
  let settled = 0;
  let least: number | undefined;
  const take = (offer: Offer<B>, weighed: W, order: number): void => {
    const n = moves(offer.box, weighed);
    if (n === undefined) return;
    best.push({ ...offer, ...weighed, moves: n, order });
    available += offer.free;
    if (n === 0 || (n === 1 && weighed.work <= (least ??= leastWork()))) settled += offer.free;
  };
  let order = 0;
  for (const offer of brought) {
    const weighed = weigh(offer.box);
    if (weighed) take(offer, weighed, order);
    order++;
  }
  const later: { offer: Offer<B>; weighed: W; order: number }[] = [];
  if (settled < quantity) {
    for (const offer of rest) {
      const weighed = weigh(offer.box);
      if (weighed && weighed.work > (least ??= leastWork())) later.push({ offer, weighed, order });
      else if (weighed) take(offer, weighed, order);
      order++;
      if (settled >= quantity) break;
    }
  }
  // Boxes on busier levels come after every settled one: judged only when those did not settle it.
  if (settled < quantity) for (const l of later) take(l.offer, l.weighed, l.order);
  best.sort((a, b) => a.moves - b.moves || a.work - b.work || a.order - b.order);
  return { best, available };
}

/** The plan's order of age: the box whose load changed longest ago first, then the lower id. */
export function olderFirst(a: { updated_at: number; id: number }, b: { updated_at: number; id: number }): number {
  return a.updated_at - b.updated_at || a.id - b.id;
}

/** Boxes of several sources, each oldest first (then by id), as one such list; read as far as taken. */
export function* oldestFirst<B extends { updated_at: number; id: number }>(sources: readonly Iterable<B>[]): Iterable<B> {
  const heads = sources.map((source) => source[Symbol.iterator]()).map((it) => ({ it, next: it.next() }));
  for (;;) {
    let first: (typeof heads)[number] | undefined;
    for (const head of heads) {
      if (!head.next.done && (!first || olderFirst(head.next.value, first.next.value!) < 0)) first = head;
    }
    if (!first) return;
    yield first.next.value!;
    first.next = first.it.next();
  }
}
