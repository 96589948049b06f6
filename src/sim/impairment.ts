/**
 * What the radio does to frames on one direction of a level's link, as the knobs say: drops
 * whole frames, damages bytes, delays frames (in order). Works on wire frames (COBS bytes and
 * their delimiter), before the receiver's decoder, so damage is found the way a real receiver
 * finds it: by COBS and CRC checks.
 */
import type { LinkDirection, LinkKnobs } from './knobs.js';
import type { Random } from './random.js';

export interface ImpairmentCounters {
  frames: number;
  dropped: number;
  corrupted_bytes: number;
}

export class Impairment {
  readonly counters: ImpairmentCounters = { frames: 0, dropped: 0, corrupted_bytes: 0 };
  private lastDue = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly direction: Exclude<LinkDirection, 'both'>,
    private readonly rng: Random,
    private readonly knobs: () => LinkKnobs,
    private readonly deliver: (wire: Buffer) => void,
  ) {}

  /** Passes one wire frame on, damaged, late or not at all. */
  pass(wire: Buffer): void {
    const k = this.knobs();
    this.counters.frames++;
    if (k.direction !== 'both' && k.direction !== this.direction && this.timers.size === 0) {
      this.deliver(wire);
      return;
    }
    if (this.rng.chance(k.drop_frame_rate)) {
      this.counters.dropped++;
      return;
    }
    let out = wire;
    if (k.corrupt_byte_rate > 0) {
      out = Buffer.from(wire);
      for (let i = 0; i < out.length; i++) {
        if (this.rng.chance(k.corrupt_byte_rate)) {
          out[i] = out[i]! ^ this.rng.int(1, 255);
          this.counters.corrupted_bytes++;
        }
      }
    }
    if (k.latency_ms <= 0 && this.timers.size === 0) {
      this.deliver(out);
      return;
    }
    // Never before a frame delayed earlier: the gateway MUST NOT reorder (PROTOCOL.md 1).
    const due = Math.max(performance.now() + k.latency_ms, this.lastDue);
    this.lastDue = due;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.deliver(out);
    }, Math.max(0, due - performance.now()));
    this.timers.add(timer);
  }

  /** Drops frames still in flight (the level is shutting down). */
  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/**
 * Cuts a byte stream into wire frames at each 0x00 (the delimiter stays with its frame). A run
 * without a delimiter longer than any frame is passed on as it is, so the receiver still sees
 * and counts the oversize frame.
 */
export class WireSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  constructor(private readonly onFrame: (wire: Buffer) => void) {}

  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      const zero = chunk.indexOf(0, pos);
      if (zero === -1) {
        this.pending.push(chunk.subarray(pos));
        this.pendingLength += chunk.length - pos;
        if (this.pendingLength > 512) this.flush();
        return;
      }
      this.pending.push(chunk.subarray(pos, zero + 1));
      this.flush();
      pos = zero + 1;
    }
  }

  private flush(): void {
    const wire = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingLength = 0;
    this.onFrame(wire);
  }
}
