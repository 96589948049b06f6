/**
 * The estimate behind the inventory view's `eta`: seconds for a free bot to bring a carrier to
 * the nearest balcony port of its level, counted in the actions the brain plans (a cell, a
 * quarter turn, a lift) at the durations it gives them (site/motion-figures.ts). It counts
 * what the position and depth cost: setting each carrier in front of it in its lane aside on
 * the nearest buffer (as the brain's BUFFERING jobs do), driving into the lane and out again
 * with the turns, lifting, the quickest drive (turns included) to a port, and setting down.
 * It does not count waiting for a bot, a buffer or a busy balcony, which depend on work the
 * inventory cannot know. docs/inventory.md gives the formula.
 */
import type { Cell, Lane, SiteLevel } from '../site/load.js';
import type { Heading } from '../site/layout.js';
import { actionMs, type ActionMs } from '../site/motion-figures.js';

/** Milliseconds of each planned action, as the brain executes them. */
export const ACTION_MS: Readonly<ActionMs> = actionMs();

// Headings in the order of site/layout.ts HEADINGS: N is towards row 0.
const DX = [0, 1, 0, -1];
const DY = [-1, 0, 1, 0];
const HEADING_INDEX: Record<Heading, number> = { N: 0, E: 1, S: 2, W: 3 };
const UNREACHED = -1;

/**
 * The quickest time (ms) from every cell and heading of a level to the nearest of some goal
 * cells, driving over highway, port and charger cells and turning in quarter turns; bots drive
 * forwards only, so an about-turn is two quarter turns.
 */
export class DriveTimes {
  private readonly ms: Float64Array;
  private readonly width: number;

  constructor(private readonly level: SiteLevel, goals: readonly Cell[], private readonly a: ActionMs = ACTION_MS) {
    this.width = level.width;
    this.ms = new Float64Array(level.width * level.rows * 4).fill(UNREACHED);
    this.search(goals);
  }

  /** Ms from (x, y) facing `heading` (0..3, N E S W) to a goal; undefined when none is reachable. */
  from(x: number, y: number, heading: number): number | undefined {
    if (x < 0 || y < 0 || x >= this.width || y >= this.level.rows) return undefined;
    const t = this.ms[(y * this.width + x) * 4 + heading]!;
    return t === UNREACHED ? undefined : t;
  }

  /** The best over every heading at (x, y): for a bot whose heading is not known. */
  fromAnyHeading(x: number, y: number): number | undefined {
    let best: number | undefined;
    for (let h = 0; h < 4; h++) {
      const t = this.from(x, y, h);
      if (t !== undefined && (best === undefined || t < best)) best = t;
    }
    return best;
  }

  /**
   * From a cell bots do not drive through (a storage space, a buffer): turn to a driveable
   * neighbour, drive onto it, and go on from there facing away from the cell.
   */
  leaving(x: number, y: number): number | undefined {
    let best: number | undefined;
    for (let h = 0; h < 4; h++) {
      const rest = this.from(x + DX[h]!, y + DY[h]!, h);
      if (rest === undefined) continue;
      const t = this.a.turn + this.a.move + rest;
      if (best === undefined || t < best) best = t;
    }
    return best;
  }

  /** Dijkstra backwards from the goals; states are (cell, heading), two action lengths only. */
  private search(goals: readonly Cell[]): void {
    const heap = new StateHeap();
    for (const g of goals) {
      for (let h = 0; h < 4; h++) {
        const s = (g.y * this.width + g.x) * 4 + h;
        this.ms[s] = 0;
        heap.push(s, 0);
      }
    }
    const settled = new Uint8Array(this.ms.length);
    while (heap.size > 0) {
      const [s, t] = heap.pop();
      if (settled[s]) continue;
      settled[s] = 1;
      const h = s & 3;
      const cell = s >> 2;
      const x = cell % this.width;
      const y = (cell - x) / this.width;
      // A quarter turn either way at this cell leads into state s.
      for (const other of [(h + 1) & 3, (h + 3) & 3]) this.relax(heap, cell * 4 + other, t + this.a.turn);
      // One move forward, facing h, from the cell behind this one.
      const px = x - DX[h]!;
      const py = y - DY[h]!;
      if (this.driveable(px, py)) this.relax(heap, (py * this.width + px) * 4 + h, t + this.a.move);
    }
  }

  private relax(heap: StateHeap, s: number, t: number): void {
    const now = this.ms[s]!;
    if (now !== UNREACHED && now <= t) return;
    this.ms[s] = t;
    heap.push(s, t);
  }

  private driveable(x: number, y: number): boolean {
    const kind = this.level.kindAt(x, y);
    return kind === 'highway' || kind === 'port' || kind === 'charger';
  }
}

/** A binary min-heap of (state, ms) pairs. */
class StateHeap {
  private readonly states: number[] = [];
  private readonly times: number[] = [];

  get size(): number {
    return this.states.length;
  }

  push(state: number, time: number): void {
    let i = this.states.length;
    this.states.push(state);
    this.times.push(time);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.times[parent]! <= time) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): [number, number] {
    const top: [number, number] = [this.states[0]!, this.times[0]!];
    const lastState = this.states.pop()!;
    const lastTime = this.times.pop()!;
    if (this.states.length > 0) {
      this.states[0] = lastState;
      this.times[0] = lastTime;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.times.length && this.times[l]! < this.times[m]!) m = l;
        if (r < this.times.length && this.times[r]! < this.times[m]!) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }

  private swap(i: number, j: number): void {
    [this.states[i], this.states[j]] = [this.states[j]!, this.states[i]!];
    [this.times[i], this.times[j]] = [this.times[j]!, this.times[i]!];
  }
}

/**
 * The eta model of one level: drive times to its balcony ports and to its buffers, and what a
 * carrier's place in a lane adds. All results are seconds; undefined where the system cannot
 * bring the carrier (no port reachable, or a carrier in front and no buffer to set it aside on).
 */
export class LevelEta {
  private readonly toPort: DriveTimes;
  private readonly toBuffer: DriveTimes;

  constructor(private readonly level: SiteLevel, private readonly a: ActionMs = ACTION_MS) {
    this.toPort = new DriveTimes(level, level.ports, a);
    this.toBuffer = new DriveTimes(level, level.buffers, a);
  }

  /**
   * Seconds to bring the carrier at `depth` of a lane to a port once nothing stands in front
   * of it: a quarter turn into the lane at its access cell, `depth` cells in, lift, about-turn,
   * `depth` cells out, the quickest drive from the access cell to a port, set down.
   */
  fetch(lane: Lane, depth: number): number | undefined {
    const drive = this.fromLane(this.toPort, lane);
    return drive === undefined ? undefined : seconds(this.inAndOut(depth) + drive + this.a.lift);
  }

  /**
   * Seconds to set the carrier at `depth` of a lane aside: into the lane and out with it as
   * for a fetch, the quickest drive to a buffer, set down, and back to the lane (taken to
   * cost as much as the way there).
   */
  setAside(lane: Lane, depth: number): number | undefined {
    const drive = this.fromLane(this.toBuffer, lane);
    return drive === undefined ? undefined : seconds(this.inAndOut(depth) + 2 * drive + this.a.lift);
  }

  /**
   * Seconds for a carrier off the lanes at (x, y): none at a port (it is at a balcony); from
   * a buffer: lift, leave the cell, drive, set down; from a highway or charger cell (on a bot,
   * already lifted): drive, set down. The bot's heading is not known: the best one counts.
   */
  offLane(x: number, y: number): number | undefined {
    const kind = this.level.kindAt(x, y);
    if (kind === 'port') return 0;
    if (kind === 'highway' || kind === 'charger') {
      const drive = this.toPort.fromAnyHeading(x, y);
      return drive === undefined ? undefined : seconds(drive + this.a.lift);
    }
    const drive = this.toPort.leaving(x, y);
    return drive === undefined ? undefined : seconds(this.a.lift + drive + this.a.lift);
  }

  /** Ms of the lane part: turn in, drive in, lift, about-turn, drive out. */
  private inAndOut(depth: number): number {
    return this.a.turn + depth * this.a.move + this.a.lift + 2 * this.a.turn + depth * this.a.move;
  }

  /** Ms from a lane's access cell, facing out of the lane, to the goals of `times`. */
  private fromLane(times: DriveTimes, lane: Lane): number | undefined {
    const out = (HEADING_INDEX[lane.direction] + 2) & 3;
    return times.from(lane.access.x, lane.access.y, out);
  }
}

/** Ms to seconds; sums are kept in whole ms so equal paths give equal etas. */
function seconds(ms: number): number {
  return ms / 1000;
}

/**
 * A lane row's eta: fetching its carrier plus setting aside every carrier in front of it
 * (`aside`, seconds, undefined when one cannot be set aside).
 */
export function laneEta(fetch: number | undefined, aside: number | undefined): number | null {
  return fetch === undefined || aside === undefined ? null : Math.round((fetch + aside) * 1000) / 1000;
}
