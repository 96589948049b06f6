
/**
 * What the dispatcher needs from the bots of a level: who is there and idle, and "take this
 * bot to that cell, then lift / lower / charge / write a tag". How the bots get there (the
 * planner, the ordering of bots through cells, the motion segments on the radio line) is the
 * business of the implementation behind this interface.
 */
import type { LevelPlannerStats } from '../../../native/planner.js';

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

/** Where a bot stands by its last report, and whether it holds a carrier up. */
export interface Standing {
  x: number;
  y: number;
  lifted: boolean;
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
  /**
   * It stays where it is whatever happens (a fault, a refusal, the link lost, parked for
   * offboarding): the planner holds its cell, so no goal may be set there.
   */
  stuck: boolean;
}

/**
 * Why a goal failed. `lost`: the bot went off the radio line. `stopping`: the brain stops.
 * `no_carrier`: the bot found nothing to lift. `unreachable`: no path for the bot as it is.
 * `refused`: the bot (or the planner) refused a command. `fault`: the bot raised a fault.
 * `not_delivered`: a command went unacknowledged. `cancelled`: the goal was abandoned (abandon()).
 * `misplaced`: the bot stands with its carrier on a cell where the store has another carrier
 * (a record made from a report the bot had already moved on from).
 */
export type FailureCause = 'lost' | 'stopping' | 'no_carrier' | 'unreachable' | 'refused' | 'fault' | 'not_delivered' | 'cancelled' | 'misplaced';

/** How a goal ended; a failure's `clearingInMs` is the recovery policy's (`Failure`). */
export type GoalOutcome = { ok: true } | { ok: false; reason: string; cause: FailureCause; clearingInMs?: number };

export interface LevelMotion {
  readonly levelId: number;
  /** The level planner's counters and step times, where a native planner moves the bots. */
  plannerStats?(): LevelPlannerStats;
  /** The bots of the level now (those the planner has placed). */
  bots(): MotionBot[];
  /**
   * Bots of the level that report but that the planner has not placed yet (just after a brain
   * start, a bot still finishing a move, or one whose cell the planner refused): they stand
   * where they report, some holding a carrier up, though bots() does not list them.
   */
  unplaced(): Standing[];
  /** Sets the planner's flags of one cell again from the store (a carrier lifted or set down without this brain seeing it). */
  refreshCell(x: number, y: number): void;
  /**
   * Hears each bot that went off the radio line holding a carrier as it answers again: where it
   * stands and whether it still holds it (a lift movement under way completes off the line,
   * protocol section 11). Returns the function that stops listening.
   */
  onBackOnLine(listener: (botId: number, standing: Standing) => void): () => void;
  /** Where a bot's telemetry last put it and whether it holds a carrier, placed by the planner or not. */
  lastSeen(botId: number): { x: number; y: number; lifted: boolean } | undefined;
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
  addBot(botId: number): void;
  removeBot(botId: number): void;
  /**
   * Drops a bot's goal before it lifts anything (its job was cancelled): the goal ends with
   * cause `cancelled`. False when it is too late (lifting, or holding a carrier) or it has none.
   */
  abandon(botId: number): boolean;
  /** Keeps a bot where it stands, out of dispatch, until it is removed (offboarding). */
  park(botId: number): void;
  /** Plans the level again from the store's carriers and the bots' telemetry (REFRESH_LEVEL). */
  refresh(): void;
  close(): Promise<void>;
}
