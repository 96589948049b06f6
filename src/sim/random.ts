/**
 * A small seeded generator (mulberry32) so that a simulator run is reproducible: the same seed
 * gives the same node sessions, battery levels, retransmission jitter and injected noise.
 * Math.random cannot be seeded, and crypto is overkill for test noise.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in lo..hi inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** A child generator for one part (a level, a node), independent of how much others draw. */
  fork(salt: number): Random {
    return new Random(Math.imul(this.state ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35));
  }
}
