/**
 * A simulated balcony LED controller (PROTOCOL.md 0x40 and section 11): one LED channel per
 * port of its balcony, each playing the last LED_SEQUENCE it was given; every bot command is
 * answered UNSUPPORTED. After link loss each channel finishes its current repetition and then
 * blinks the offline pattern until a new sequence arrives after WELCOME.
 */
import type { Frame, LedStep } from '../link/protocol/messages.js';
import type { SiteBalcony } from '../domain/site/load.js';
import { NodeEndpoint, type ExecutedCommand, type NodeModel, type Reply } from './endpoint.js';
import type { Random } from './random.js';

export const LED_ADDRESS_BASE = 0x1000;

/** Amber 500 ms, dark 500 ms (PROTOCOL.md 11). */
export const OFFLINE_PATTERN: LedStep[] = [
  { r: 255, g: 128, b: 0, duration_ms: 500 },
  { r: 0, g: 0, b: 0, duration_ms: 500 },
];

interface Channel {
  steps: LedStep[];
  /** 0 = until replaced */
  repeat: number;
  startedAt: number;
  /** set at link loss: play until this time (end of the current repetition), then offline */
  offlineFrom?: number;
}

export interface BalconySnapshot {
  id: number;
  address: number;
  welcomed: boolean;
  link_lost: boolean;
  sequences: number;
  /** colour each channel shows now, [r, g, b] */
  channels: [number, number, number][];
  /** commands executed since boot, retransmissions answered without executing, the last commands (endpoint.ts) */
  executed: { total: number; duplicates: number; last: ExecutedCommand[] };
}

function cycleMs(steps: LedStep[]): number {
  return steps.reduce((sum, s) => sum + s.duration_ms, 0);
}

function colourAt(steps: LedStep[], t: number): [number, number, number] {
  let at = t % cycleMs(steps);
  for (const s of steps) {
    if (at < s.duration_ms) return [s.r, s.g, s.b];
    at -= s.duration_ms;
  }
  return [0, 0, 0];
}

export class SimBalcony implements NodeModel {
  readonly id: number;
  readonly endpoint: NodeEndpoint;
  private readonly channels: (Channel | undefined)[];
  private sequences = 0;

  constructor(balcony: SiteBalcony, rng: Random, send: ConstructorParameters<typeof NodeEndpoint>[0]['send']) {
    this.id = balcony.id;
    this.channels = balcony.ports.map(() => undefined);
    this.endpoint = new NodeEndpoint({ address: LED_ADDRESS_BASE + balcony.id, kind: 'BALCONY_LED', rng, send });
  }

  start(): void {
    this.endpoint.start(this);
  }

  tick(now: number): void {
    this.endpoint.tick(now);
  }

  command(frame: Frame, now: number): Reply {
    const m = frame.message;
    if (m.type !== 'LED_SEQUENCE') return { result: 'UNSUPPORTED' };
    if (m.channel >= this.channels.length) return { result: 'INVALID', detail: 0 };
    this.channels[m.channel] = { steps: m.steps, repeat: m.repeat, startedAt: now };
    this.sequences++;
    return { result: 'OK' };
  }

  linkLost(now: number): void {
    for (const c of this.channels) {
      if (!c) continue;
      const cycle = cycleMs(c.steps);
      const played = Math.floor((now - c.startedAt) / cycle);
      c.offlineFrom = c.startedAt + (played + 1) * cycle;
    }
  }

  welcomed(): void {
    // The offline pattern stays until a new LED_SEQUENCE replaces it.
  }

  /** The colour a channel shows at `now`. */
  colour(channel: number, now: number): [number, number, number] {
    const c = this.channels[channel];
    if (!c) return this.endpoint.linkLost ? colourAt(OFFLINE_PATTERN, now) : [0, 0, 0];
    if (c.offlineFrom !== undefined && now >= c.offlineFrom) return colourAt(OFFLINE_PATTERN, now - c.offlineFrom);
    const t = now - c.startedAt;
    if (c.repeat !== 0 && t >= c.repeat * cycleMs(c.steps)) return [0, 0, 0];
    return colourAt(c.steps, t);
  }

  snapshot(now: number): BalconySnapshot {
    return {
      id: this.id, address: this.endpoint.address, welcomed: this.endpoint.welcomed, link_lost: this.endpoint.linkLost,
      sequences: this.sequences, channels: this.channels.map((_, i) => this.colour(i, now)),
      executed: { total: this.endpoint.counters.commands, duplicates: this.endpoint.counters.duplicates, last: [...this.endpoint.executed] },
    };
  }
}
