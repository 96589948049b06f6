/**
 * What a person may do by hand on a simulated level: put a carrier down or take one away, take
 * a bot off the grid or put one on. Each rule here only checks and throws HandRefused with the
 * reason, so a refused action changes nothing; SimLevel does the change once every check passed.
 */
import { HEADINGS, type Heading } from '../domain/site/layout.js';
import { ADDRESS } from '../link/protocol/messages.js';
import type { SimBot } from './bot.js';
import type { LevelWorld } from './world.js';

/** A person's action that cannot be done; nothing was changed. */
export class HandRefused extends Error {
  override readonly name = 'HandRefused';
}

/** What the rules read of a level. */
export interface Floor {
  readonly id: number;
  readonly world: LevelWorld;
  readonly bots: ReadonlyMap<number, SimBot>;
}

/** The carrier id a layout allows (1..64 characters); its RFID tag holds it. */
export function checkCarrierId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length < 1 || id.length > 64) throw new HandRefused(`carrier id ${JSON.stringify(id)} is not 1..64 characters`);
}

/** A bot id is its node address: 1..4095 (PROTOCOL.md, addresses). */
export function checkBotId(id: unknown): asserts id is number {
  if (!Number.isInteger(id) || (id as number) < ADDRESS.BOT_FIRST || (id as number) > ADDRESS.BOT_LAST) {
    throw new HandRefused(`bot id ${JSON.stringify(id)} is not an integer in ${ADDRESS.BOT_FIRST}..${ADDRESS.BOT_LAST}`);
  }
}

export function checkHeading(heading: unknown): asserts heading is Heading {
  if (!HEADINGS.includes(heading as Heading)) throw new HandRefused(`heading ${JSON.stringify(heading)} is not N, E, S or W`);
}

export function checkBattery(permille: unknown): asserts permille is number {
  if (!Number.isInteger(permille) || (permille as number) < 0 || (permille as number) > 1000) {
    throw new HandRefused(`battery ${JSON.stringify(permille)} is not an integer in 0..1000 ‰`);
  }
}

/** The bot taking up a cell (standing on it, or driving into or out of it), if any. */
export function botOn(floor: Floor, x: number, y: number, now: number): SimBot | undefined {
  for (const bot of floor.bots.values()) if (bot.cells(now).some((c) => c.x === x && c.y === y)) return bot;
  return undefined;
}

function checkCell(floor: Floor, x: number, y: number): void {
  if (!Number.isInteger(x) || !Number.isInteger(y)) throw new HandRefused(`level ${floor.id}: (${String(x)}, ${String(y)}) is not a cell`);
  if (floor.world.kindAt(x, y) === undefined) throw new HandRefused(`level ${floor.id}: (${x}, ${y}) is outside the grid`);
}

/** A person may set a carrier down on a free storage space, buffer or balcony port. */
export function checkCarrierCell(floor: Floor, x: number, y: number, now: number): void {
  checkCell(floor, x, y);
  const kind = floor.world.kindAt(x, y);
  if (!floor.world.carrierPlace(x, y)) throw new HandRefused(`level ${floor.id}: (${x}, ${y}) is a ${kind} cell; a carrier stands only on a storage space, a buffer or a balcony port`);
  const there = floor.world.carrierAt(x, y);
  if (there !== undefined) throw new HandRefused(`level ${floor.id}: carrier ${there} already stands at (${x}, ${y})`);
  // Under a bot there is no room for a carrier, whatever its lift does.
  const bot = botOn(floor, x, y, now);
  if (bot) throw new HandRefused(`level ${floor.id}: bot ${bot.id} is at (${x}, ${y})`);
}

/**
 * A person may set a bot down on a cell bots can drive that no bot takes up and no carrier
 * stands on: the bot goes down from above, and a carrier leaves no room for it.
 */
export function checkBotCell(floor: Floor, x: number, y: number, now: number): void {
  checkCell(floor, x, y);
  if (!floor.world.drivable(x, y)) throw new HandRefused(`level ${floor.id}: (${x}, ${y}) is a ${floor.world.kindAt(x, y)} cell, where no bot can stand`);
  const bot = botOn(floor, x, y, now);
  if (bot) throw new HandRefused(`level ${floor.id}: bot ${bot.id} is at (${x}, ${y})`);
  const carrier = floor.world.carrierAt(x, y);
  if (carrier !== undefined) throw new HandRefused(`level ${floor.id}: carrier ${carrier} stands at (${x}, ${y})`);
}

/**
 * A person takes a bot off only when it holds no carrier: a carrier leaving the level on a bot
 * would vanish from the site unseen. Its lift must be still, and a carrier it holds up must be
 * set down first (LOWER), or taken off it by hand (removeCarrier on its cell).
 */
export function checkBotTakeable(floor: Floor, bot: SimBot): void {
  if (bot.lift === 'LIFTING' || bot.lift === 'LOWERING') throw new HandRefused(`level ${floor.id}: bot ${bot.id}'s lift is ${bot.lift.toLowerCase()}; wait until it stops`);
  if (bot.carrier !== undefined) throw new HandRefused(`level ${floor.id}: bot ${bot.id} holds carrier ${bot.carrier}; set it down or take it off the bot first`);
}

/**
 * Where a person takes a carrier from: the cell it stands on, or else a bot standing still on
 * that cell with its lift up (a bot that cannot lower it, say after a FATAL fault, must still
 * be emptied by hand). Returns the bot in the second case.
 */
export function carrierToTake(floor: Floor, x: number, y: number, now: number): { carrier: string; bot?: SimBot } {
  checkCell(floor, x, y);
  const bot = botOn(floor, x, y, now);
  // Mid-lift the carrier is half on the bot: neither the cell's nor the bot's to give.
  if (bot && (bot.lift === 'LIFTING' || bot.lift === 'LOWERING')) throw new HandRefused(`level ${floor.id}: bot ${bot.id}'s lift is ${bot.lift.toLowerCase()} at (${x}, ${y}); wait until it stops`);
  const standing = floor.world.carrierAt(x, y);
  if (standing !== undefined) return { carrier: standing };
  if (bot?.carrier !== undefined) {
    if (bot.motion === 'MOVING' || bot.lift !== 'UP') throw new HandRefused(`level ${floor.id}: bot ${bot.id} holding carrier ${bot.carrier} is not standing still with its lift up`);
    return { carrier: bot.carrier, bot };
  }
  throw new HandRefused(`level ${floor.id}: no carrier at (${x}, ${y})`);
}
