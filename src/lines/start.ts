/**
 * The site's radio lines as the app wiring starts them: every level on its serial device, and
 * the levels whose layout says "sim" on the supervised simulator's ptys, with its simulated
 * people. Line changes become events a technician reads (one per change of a line).
 */
import type { Config } from '../config/config.js';
import { EVENT } from '../domain/events/catalogue.js';
import type { Events } from '../domain/events/events.js';
import { carriers } from '../domain/inventory/records.js';
import type { Site } from '../domain/site/load.js';
import { botRecords } from '../domain/bots/records.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';
import type { LineStatus } from './events.js';
import type { LineChange } from './line-health.js';
import { SiteLines } from './site-lines.js';
import { simulatePeople } from './simulated-people.js';
import { SimulatedSite } from './simulated-site.js';

export interface StartedLines {
  lines: SiteLines;
  /** The supervised simulator, when a level is simulated. */
  simulator: SimulatedSite | undefined;
  close(): Promise<void>;
}

/** Opens every level's line (starting the simulator first when a level needs it). */
export async function startLines(config: Config, site: Site, store: Store, events: Events, logger: Logger): Promise<StartedLines> {
  const lines = new SiteLines(site, logger);
  // One event when a line goes down (not one per retry of its device), one when it is back.
  const stopEvents = lines.onLine((s, change) => {
    if (!change) return;
    const kind = change.kind === 'up' ? EVENT.lineUp : EVENT.lineDown;
    events.emit(kind, lineEventText(s, change), { level_id: s.level_id }).catch((err: unknown) => logger.error({ err }, 'could not record a line event'));
  });
  let simulator: SimulatedSite | undefined;
  let stopPeople = () => undefined as void;
  if (site.levels.some((l) => l.serial_device === 'sim')) {
    const opened = new Set<number>();
    simulator = await SimulatedSite.start({
      site, stateDir: config.state_dir, logger, speed: config.sim_speed, battery: config.sim_battery_permille,
      carriers: () => [...store.collection(carriers).scan()],
      bots: () => lines.list(),
      absentBots: () => [...store.collection(botRecords).scan()].filter((b) => b.level_id === null).map((b) => b.id),
      onDevice: async (levelId, path) => {
        if (opened.has(levelId)) await lines.repoint(levelId, path);
        else lines.open(levelId, path);
        opened.add(levelId);
      },
      onRestart: (code, attempt) => {
        events.emit(EVENT.simulatorRestarted, `the simulated site ended (${code}) and was started again (restart ${attempt}); its bots reconnect`)
          .catch((err: unknown) => logger.error({ err }, 'could not record the simulator restart'));
      },
    });
    stopPeople = simulatePeople(store, site, simulator, () => lines.list(), logger.child({ component: 'simulated-people' }));
  }
  for (const level of site.levels) if (level.serial_device !== 'sim') lines.open(level.id, level.serial_device);
  return {
    lines, simulator,
    async close() {
      stopEvents();
      stopPeople();
      await lines.close();
      await simulator?.stop();
    },
  };
}

/** The description of a line's 0x7009 / 0x700A event: the level, the device, and why (or how long it was down). */
export function lineEventText(s: LineStatus, change: NonNullable<LineChange>): string {
  if (change.kind === 'down') return `radio line of level ${s.level_id} down on ${s.device}: ${s.reason ?? 'no reason given'}`;
  return `radio line of level ${s.level_id} up again on ${s.device} after ${Math.max(1, Math.round(change.downMs / 1000))} s down`;
}
