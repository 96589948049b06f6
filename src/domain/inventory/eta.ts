/**
 * The estimate behind the inventory view's `eta`: seconds for a free bot standing at the
 * carrier's lane access cell to bring the carrier to the nearest balcony port of its level.
 * It counts what the position and depth cost: relocating each carrier standing in front of
 * it in its lane, driving into the lane and out again, lifting, the shortest highway drive
 * to a port, and setting down. It does not count waiting for a bot or for a busy balcony,
 * which depend on work the inventory cannot know. docs/inventory.md gives the figures.
 */
import type { SiteLevel } from '../site/load.js';

/** Seconds a bot needs per grid cell driven (1 m cells at 1 m/s, with turns averaged in). */
export const CELL_SECONDS = 1.2;
/** Seconds to lift a carrier, and to set it down. */
export const LIFT_SECONDS = 4;
/** Seconds to take one blocking carrier out of the lane to a free space nearby. */
export const RELOCATE_SECONDS = 30;

/** Shortest highway distances (in cells) from every cell of a level to its nearest balcony port. */
export class PortDistances {
  private readonly dist: Int32Array;
  private readonly width: number;

  constructor(private readonly level: SiteLevel) {
    this.width = level.width;
    this.dist = new Int32Array(level.width * level.rows).fill(-1);
    // Multi-source breadth-first search from the ports over cells a bot drives on.
    const queue: number[] = [];
    for (const p of level.ports) {
      const i = p.y * this.width + p.x;
      this.dist[i] = 0;
      queue.push(i);
    }
    for (let head = 0; head < queue.length; head++) {
      const i = queue[head]!;
      const x = i % this.width;
      const y = (i - x) / this.width;
      for (const [nx, ny] of [[x + 1, y], [x - 1, y], [x, y + 1], [x, y - 1]] as const) {
        const kind = level.kindAt(nx, ny);
        if (kind !== 'highway' && kind !== 'port' && kind !== 'charger') continue;
        const j = ny * this.width + nx;
        if (this.dist[j] !== -1) continue;
        this.dist[j] = this.dist[i]! + 1;
        queue.push(j);
      }
    }
  }

  /**
   * Cells from (x, y) to the nearest port: the cell's own distance when bots drive on it,
   * else one more than its best driveable neighbour's; undefined when no port is reachable.
   */
  from(x: number, y: number): number | undefined {
    const own = this.at(x, y);
    if (own !== undefined) return own;
    let best: number | undefined;
    for (const [nx, ny] of [[x + 1, y], [x - 1, y], [x, y + 1], [x, y - 1]] as const) {
      const d = this.at(nx, ny);
      if (d !== undefined && (best === undefined || d + 1 < best)) best = d + 1;
    }
    return best;
  }

  private at(x: number, y: number): number | undefined {
    if (x < 0 || y < 0 || x >= this.width || y >= this.level.rows) return undefined;
    const d = this.dist[y * this.width + x]!;
    return d < 0 ? undefined : d;
  }
}

/**
 * Seconds to bring a carrier to a port. `depth` is its lane depth (0 off a lane), `blocking`
 * the carriers in front of it in the lane, `distance` the highway cells from its lane's
 * access cell (or from its own cell off a lane) to the nearest port.
 */
export function etaSeconds(depth: number, blocking: number, distance: number): number {
  return blocking * RELOCATE_SECONDS + 2 * depth * CELL_SECONDS + 2 * LIFT_SECONDS + distance * CELL_SECONDS;
}
