/**
 * What the site's radio lines tell (main thread) and what the brain's worker hears of them
 * through messages: bot states and events, line states, command outcomes. Types only, so either
 * thread may import them.
 */
import type { LiveBot } from '../domain/system/control.js';
import type { Fault, Result, Telemetry } from '../link/protocol/messages.js';

/** A bot as its radio line last heard it (what GET /bots shows), with its latched fault flags. */
export interface BotState extends LiveBot {
  faults: number;
  updated_at: number | null;
}

/** What the brain hears of its bots. */
export type BotEvent =
  | { kind: 'telemetry'; bot: BotState; telemetry: Telemetry }
  | { kind: 'fault'; bot: BotState; fault: Fault }
  | { kind: 'online' | 'offline'; bot: BotState; reason: string };

/** How a command ended: acknowledged with a result (an RFID_READ with the tag's bytes), or not delivered. */
export type CommandOutcome = { delivered: true; result: Result; detail: number; data?: number[] } | { delivered: false; reason: string };

/**
 * A level's radio line: `up` while its device is open and a node answers (or the level has no
 * bots); otherwise `reason` says what is wrong, in words a technician can act on.
 */
export interface LineStatus {
  level_id: number;
  device: string;
  up: boolean;
  reason: string | null;
  /** When it last changed (epoch ms). */
  since: number;
}
