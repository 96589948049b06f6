/**
 * The people of the simulated site: what a person's trigger says was done by hand also happens
 * in the simulator, so the demo goes on as a real site would. A carrier onboarded at a balcony
 * is put on the position the store gave it; a bot onboarded is put on a free position of its
 * balcony; a bot offboarded is taken off its level. It follows the store's commits, whichever
 * thread made them, and acts once per job.
 */
import { jobs, type JobRecord } from '../domain/requests/records.js';
import { carriers } from '../domain/inventory/records.js';
import type { Site } from '../domain/site/load.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import type { BotState } from './events.js';
import type { SimulatedSite } from './simulated-site.js';

/** Acts in the simulator on the triggers of the simulated levels' people; returns the function that stops it. */
export function simulatePeople(store: Store, site: Site, sim: SimulatedSite, bots: () => readonly BotState[], logger: Logger): () => void {
  const done = new Set<string>();
  const act = async (job: JobRecord): Promise<void> => {
    const level = job.level_id === null ? undefined : site.level(job.level_id);
    if (!level || level.serial_device !== 'sim') return;
    if (job.type === 'ONBOARDING' && job.carrier_id) {
      const c = store.collection(carriers).get(job.carrier_id);
      if (c) await sim.placeCarrier(c.level_id, c.id, c.x, c.y);
    } else if (job.type === 'ONBOARDING' && job.bot_id !== null) {
      const ports = site.balconies.find((b) => b.id === job.balcony_id)?.ports ?? [];
      const taken = (x: number, y: number) => bots().some((b) => b.level_id === level.id && b.x === x && b.y === y && b.id !== job.bot_id)
        || store.collection(carriers).findOne('position', `${level.id}:${x}:${y}`) !== undefined;
      const port = ports.find((p) => !taken(p.x, p.y));
      if (!port) throw new Error(`every position of balcony ${job.balcony_id} is taken`);
      await sim.putBot(level.id, job.bot_id, port.x, port.y, 'N');
    } else if (job.type === 'OFFBOARDING_BD' && job.bot_id !== null) {
      await sim.takeBot(level.id, job.bot_id);
    }
  };
  return store.onCommit((notice) => {
    for (const key of notice['jobs'] ?? []) {
      const id = String(key);
      if (done.has(id)) continue;
      const job = store.collection(jobs).get(id);
      if (!job || job.status !== 'SUCCEEDED' || (job.type !== 'ONBOARDING' && job.type !== 'OFFBOARDING_BD')) continue;
      done.add(id);
      act(job).then(
        () => logger.info({ job_id: id, job_type: job.type, bot_id: job.bot_id, carrier_id: job.carrier_id }, 'simulated person did it by hand'),
        (err: unknown) => logger.warn({ err, job_id: id, job_type: job.type }, 'the simulated person could not do it'),
      );
    }
  });
}
