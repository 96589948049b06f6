/**
 * Where each simulated bot starts. From the layout by default; after a restart, where the site
 * stood: the daemon lists the bots' last known states (`bots`) and the bots people had taken
 * off (`absentBots`), while the carriers standing on cells come from the site file it writes.
 * Everything is checked before any pty opens, and every problem is reported at once.
 */
import type { Site } from '../domain/site/load.js';
import type { BotStart } from './bot.js';
import { checkBattery, checkBotId, checkCarrierId, checkHeading } from './hands.js';

/** A bot's state to start in, overriding its layout start (`carrier`: held up, its lift up). */
export interface BotRestart {
  id: number;
  level_id: number;
  x: number;
  y: number;
  heading: 'N' | 'E' | 'S' | 'W';
  battery_permille?: number;
  carrier?: string;
}

/** The bots one simulated level starts with, and the ones of its layout that are off it. */
export interface LevelStart {
  bots: BotStart[];
  absent: number[];
}

/**
 * The start of every simulated level. A listed bot starts on its listed level (a bot id the
 * layout lacks is one a person put on earlier); bots listed for a level not simulated here are
 * ignored, as are absent ids the layout does not have (there is nothing to leave out).
 */
export function startState(site: Site, simulated: number[], bots: BotRestart[] = [], absentBots: number[] = []): Map<number, LevelStart> {
  const problems: string[] = [];
  const check = (what: string, fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`);
      return false;
    }
  };
  const absent = new Set<number>();
  absentBots.forEach((id, i) => {
    if (check(`absentBots[${i}]`, () => checkBotId(id))) absent.add(id);
  });
  const standing = new Map(site.layout.carriers.map((c) => [c.id, c]));
  const listed = new Map<number, BotRestart>();
  const held = new Map<string, number>();
  bots.forEach((b, i) => {
    const at = `bots[${i}]`;
    if (!check(at, () => checkBotId(b.id))) return;
    if (listed.has(b.id)) problems.push(`${at}: bot ${b.id} is listed twice`);
    if (absent.has(b.id)) problems.push(`${at}: bot ${b.id} is also in absentBots`);
    listed.set(b.id, b);
    check(at, () => checkHeading(b.heading));
    if (b.battery_permille !== undefined) check(at, () => checkBattery(b.battery_permille));
    const level = site.level(b.level_id);
    if (!level) problems.push(`${at}: site ${site.name} has no level ${String(b.level_id)}`);
    else if (!Number.isInteger(b.x) || !Number.isInteger(b.y) || !level.kindAt(b.x, b.y) || level.kindAt(b.x, b.y) === 'wall') {
      problems.push(`${at}: (${String(b.x)}, ${String(b.y)}) on level ${b.level_id} is not a cell a bot can stand on`);
    }
    if (b.carrier === undefined) return;
    if (!check(at, () => checkCarrierId(b.carrier))) return;
    const other = held.get(b.carrier);
    if (other !== undefined) problems.push(`${at}: carrier ${b.carrier} is also held by bot ${other}`);
    held.set(b.carrier, b.id);
    const c = standing.get(b.carrier);
    if (c) problems.push(`${at}: carrier ${b.carrier} held by bot ${b.id} also stands at (${c.x}, ${c.y}) on level ${c.level_id} in the site file`);
    const under = site.layout.carriers.find((s) => s.level_id === b.level_id && s.x === b.x && s.y === b.y);
    if (under) problems.push(`${at}: bot ${b.id} holds carrier ${b.carrier} up under carrier ${under.id}`);
  });

  const out = new Map<number, LevelStart>(simulated.map((id) => [id, { bots: [], absent: [] }]));
  const cells = new Map<string, number>();
  const place = (levelId: number, start: BotStart): void => {
    const key = `${levelId}:${start.x},${start.y}`;
    const other = cells.get(key);
    if (other !== undefined) problems.push(`bots ${other} and ${start.id} would both start at (${start.x}, ${start.y}) on level ${levelId}`);
    cells.set(key, start.id);
    out.get(levelId)!.bots.push(start);
  };
  for (const levelId of simulated) {
    for (const b of site.level(levelId)!.bots) {
      if (absent.has(b.id)) out.get(levelId)!.absent.push(b.id);
      else if (!listed.has(b.id)) place(levelId, { id: b.id, x: b.start.x, y: b.start.y, heading: b.heading });
    }
  }
  for (const b of listed.values()) {
    if (!out.has(b.level_id)) continue;
    place(b.level_id, {
      id: b.id, x: b.x, y: b.y, heading: b.heading,
      ...(b.battery_permille === undefined ? {} : { battery: b.battery_permille }),
      ...(b.carrier === undefined ? {} : { carrier: b.carrier }),
    });
  }
  if (problems.length > 0) throw new RangeError(`simulator start state:\n  - ${problems.join('\n  - ')}`);
  for (const level of out.values()) level.bots.sort((a, b) => a.id - b.id);
  return out;
}
