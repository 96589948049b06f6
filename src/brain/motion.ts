import type { Result } from '../link/protocol/messages.js';

/**
 * What the dispatcher needs from the bots of a level: who is there and idle, and "take this
 * bot to that cell, then lift / lower / charge / write a tag". How the bots get there (the
 * planner, the ordering of bots through cells, the motion segments on the radio line) is the
 * business of the implementation behind this interface.
 */

/**
 * What a bot does once it stands on its goal cell. `hold`: it stays there with what it carries,
 * an obstacle the others go round, until its next goal (a carrier held up at a balcony
 * position while a person works on it).
 */
export type Arrival = 'none' | 'hold' | 'lift' | 'lower' | 'charge' | 'uncharge' | 'rfid_write' | 'rfid_check';

export interface MotionGoal {
  x: number;
  y: number;
  then: Arrival;
}

/** A bot as the dispatcher sees it. */
export interface MotionBot {
  id: number;
  level_id: number;
  online: boolean;
  /** Not moving and not running a goal. */
  idle: boolean;
  x: number;
  y: number;
  lifted: boolean;
  /** Charging, or told to charge (its telemetry may not say so yet). */
  charging: boolean;
  /** Percent. */
  battery: number;
  /** A latched fault stops the bot until cleared. */
  faulted: boolean;
}

/** `refused`: the bot's own answer when it refused a command (NO_CARRIER: nothing to lift there). */
export type GoalOutcome = { ok: true } | { ok: false; reason: string; refused?: Result };

export interface LevelMotion {
  readonly levelId: number;
  /** The bots of the level now. */
  bots(): MotionBot[];
  /** Sends a bot to a goal; resolves when it got there and did `then`, or why not. */
  go(botId: number, goal: MotionGoal): Promise<GoalOutcome>;
  /**
   * Ends a bot's charge (UNCHARGE) and frees its charger: the bot may be pushed aside. A goal
   * given to a charging bot ends its charge first by itself.
   */
  stopCharging(botId: number): Promise<void>;
  /** Stops giving bots new motion (PAUSE); goals wait. */
  setPaused(paused: boolean): void;
  /** A bot joins (onboarding) or leaves (offboarding, deletion) the level. */
  addBot(botId: number, x: number, y: number): void;
  removeBot(botId: number): void;
  close(): Promise<void>;
}
