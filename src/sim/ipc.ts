/**
 * The messages between the daemon and its simulator child over the Node IPC channel. The
 * child announces its devices once ("ready"), then answers requests by id.
 */
import type { Heading } from '../link/protocol/messages.js';
import type { LevelSnapshot } from './gateway.js';
import type { LinkKnobs } from './knobs.js';
import type { LevelDevice, SimulatorOptions } from './simulator.js';

export type SimRequest =
  | { op: 'knobs'; knobs: Partial<LinkKnobs>; level_id?: number }
  | { op: 'fault'; level_id: number; bot: number; code: number; detail?: number; clear_after_ms?: number }
  | { op: 'snapshot' }
  /** pulls a level's gateway cable for down_ms; the reply's result is the level's snapshot once it is back (new path) */
  | { op: 'unplug'; level_id: number; down_ms: number }
  /** people's hands (hands.ts); a refusal is a reply with ok false and the reason */
  | { op: 'place_carrier'; level_id: number; carrier_id: string; x: number; y: number }
  /** the reply's carrier_id is the carrier taken */
  | { op: 'remove_carrier'; level_id: number; x: number; y: number }
  | { op: 'take_bot'; level_id: number; bot_id: number }
  | { op: 'put_bot'; level_id: number; bot_id: number; x: number; y: number; heading: Heading; battery_permille?: number }
  | { op: 'stop' };

export type ToChild = { type: 'request'; id: number; request: SimRequest };

export type ToParent =
  | { type: 'ready'; seed: number; levels: LevelDevice[] }
  | { type: 'failed'; error: string }
  | { type: 'reply'; id: number; ok: true; result?: LevelSnapshot[]; carrier_id?: string }
  | { type: 'reply'; id: number; ok: false; error: string };

/** Command-line flag carrying the SimulatorOptions as JSON. */
export const OPTIONS_FLAG = '--options=';

export function optionsArg(options: SimulatorOptions): string {
  return OPTIONS_FLAG + JSON.stringify(options);
}
