/**
 * Balcony LEDs from the work waiting there: a port whose carrier has a job waiting for a
 * person shows green (blue for a refill, white for a check or packing), the others are dark.
 * Only changes are sent; a controller that did not acknowledge is tried again next pass.
 */
import type { LedStep } from '../../link/protocol/messages.js';
import type { CarrierPlaces } from '../../domain/inventory/carrier-places.js';
import type { OpenWork } from '../../domain/requests/open-work.js';
import type { JobRecord } from '../../domain/requests/records.js';
import type { Site } from '../../domain/site/load.js';
import type { SendCommand } from './radio.js';

/** Node address of a balcony's LED controller: this plus the balcony id (PROTOCOL.md). */
export const LED_NODE_BASE = 0x1000;
const DARK: LedStep = { r: 0, g: 0, b: 0, duration_ms: 1000 };
const COLOUR: Partial<Record<JobRecord['type'], LedStep>> = {
  PICKING: { r: 0, g: 200, b: 0, duration_ms: 1000 },
  REFILLING: { r: 0, g: 80, b: 220, duration_ms: 1000 },
  CHECKING: { r: 200, g: 200, b: 200, duration_ms: 1000 },
  PACKING: { r: 200, g: 200, b: 200, duration_ms: 1000 },
};

export class BalconyLights {
  /** `balcony:channel` -> the colour last acknowledged. */
  private readonly shown = new Map<string, string>();
  private readonly sending = new Set<string>();

  constructor(
    private readonly site: Site,
    private readonly send: SendCommand,
  ) {}

  /** Follows the person jobs that wait at each port now. */
  showWork(work: OpenWork, carriers: CarrierPlaces): void {
    const waiting: { job: JobRecord; x: number; y: number }[] = [];
    for (const level of this.site.levels) {
      for (const job of work.jobsOn(level.id)) {
        if (job.status !== 'EXECUTING' || job.wait?.waiting_for !== 'trigger' || !job.carrier_id) continue;
        const c = carriers.of(job.carrier_id);
        if (c) waiting.push({ job, x: c.x, y: c.y });
      }
    }
    this.update(waiting);
  }

  /** Sets every port's colour from the person jobs waiting now (with the carrier's cell). */
  private update(waiting: { job: JobRecord; x: number; y: number }[]): void {
    const want = new Map<string, LedStep>();
    for (const b of this.site.balconies) b.ports.forEach((_, channel) => want.set(`${b.id}:${channel}`, DARK));
    for (const { job, x, y } of waiting) {
      const balcony = this.site.balconies.find((b) => b.id === job.balcony_id);
      const channel = balcony?.ports.findIndex((p) => p.x === x && p.y === y) ?? -1;
      const colour = COLOUR[job.type];
      if (balcony && channel >= 0 && colour) want.set(`${balcony.id}:${channel}`, colour);
    }
    for (const [key, step] of want) {
      const text = `${step.r},${step.g},${step.b}`;
      if (this.shown.get(key) === text || this.sending.has(key)) continue;
      if (!this.shown.has(key) && text === '0,0,0') {
        this.shown.set(key, text); // controllers start dark
        continue;
      }
      const [balconyId, channel] = key.split(':').map(Number) as [number, number];
      const levelId = this.site.balconies.find((b) => b.id === balconyId)!.level_id;
      this.sending.add(key);
      void this.send(levelId, LED_NODE_BASE + balconyId, { type: 'LED_SEQUENCE', channel, repeat: 0, steps: [step] }).then((outcome) => {
        this.sending.delete(key);
        if (outcome.delivered && outcome.result === 'OK') this.shown.set(key, text);
      });
    }
  }
}
