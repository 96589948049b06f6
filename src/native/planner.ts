/**
 * The realtime planner of one level, run by the C++ addon on its own thread: the lifelong
 * planner (native/planner/planner.h) and the action dependency graph that gives each bot its
 * next actions only once telemetry has confirmed everything they depend on
 * (native/planner/execution.h). Every call only queues an input and returns; the thread plans
 * within its step budget and hands back commands and events in batches. Cells are
 * row * width + col, headings 0 east, 1 south, 2 west, 3 north (the bot protocol counts from
 * north: convert at the edge). docs/planner-realtime.md.
 */
import { addon } from './addon.js';

/** Planner headings, clockwise from east. */
export type PlannerHeading = 0 | 1 | 2 | 3;

export interface PlanState {
  cell: number;
  heading: PlannerHeading;
  lifted: boolean;
}

/** A level: `flags` holds one byte per cell (CELL_BLOCKED, CELL_BARRED_LOADED). */
export interface PlannerGrid {
  width: number;
  height: number;
  flags: Uint8Array;
}

/** Nobody passes. */
export const CELL_BLOCKED = 1;
/** A bot holding a carrier may not enter. */
export const CELL_BARRED_LOADED = 2;

export type PlannerActionName = 'forward' | 'turn_left' | 'turn_right' | 'wait' | 'lift' | 'lower';

/** An action released to a bot: every action of other bots it depends on is confirmed done. */
export interface PlannedAction {
  bot: number;
  action: PlannerActionName;
  from: PlanState;
  /** What telemetry shows once the action is done: report it with reportTelemetry(). */
  to: PlanState;
  durationSteps: number;
  /** The planned step it starts at (its order in the plan; timing is not binding). */
  planStep: number;
}

export interface PlannerGoal {
  cell: number;
  /** Face this way before the goal counts as reached. */
  heading?: PlannerHeading;
  /** Lift (must be empty) or lower (must be loaded) once there; default none. */
  act?: 'none' | 'lift' | 'lower';
  /**
   * Stay there once arrived (others route around it) until the next setGoal or cancelGoal: for
   * work at the goal (charging, tags). Default false: an idle bot may be pushed aside at once.
   */
  stay?: boolean;
}

export type PlannerOp =
  | 'set_map' | 'add_bot' | 'remove_bot' | 'pause_bot' | 'set_stuck' | 'set_goal' | 'cancel_goal' | 'report_telemetry' | 'set_cell_flags';

export type PlannerEvent =
  /** Telemetry confirmed the bot's last action to its goal (and the goal's lift or lower); `goal`: what setGoal returned. */
  | { kind: 'goal_reached'; bot: number; cell: number; goal: number; step: number }
  /** No path for the bot as it is (loaded or not): the goal stays, the bot waits; cancel or change it. */
  | { kind: 'goal_unreachable'; bot: number; cell: number; goal: number; step: number }
  /** The bot stopped getting closer to its goal (deadlock or livelock detected); it gets top priority. */
  | { kind: 'stalled'; bot: number; cell: number; goal: number; step: number }
  /** It got closer again (broken). */
  | { kind: 'unstalled'; bot: number; cell: number; goal: number; step: number }
  /** The bot's stall went on: the `bots` bots around it (itself included) follow a joint plan out of it (an escape). */
  | { kind: 'escaped'; bot: number; cell: number; bots: number; goal: number; step: number }
  /** `dropped` planned actions of the bot were dropped (a fault, pause, goal change, a bot in the way); planned again from `state`. */
  | { kind: 'replanned'; bot: number; dropped: number; state: PlanState; step: number }
  /** Telemetry put the bot where the plan did not; `placed` false: another bot holds that cell, so the bot is held as stuck. */
  | { kind: 'deviation'; bot: number; state: PlanState; placed: boolean; step: number }
  /** A planning step took `ms`, over the budget (or did not finish: every bot waited that step). */
  | { kind: 'over_budget'; step: number; ms: number }
  | { kind: 'bot_added'; bot: number; state: PlanState }
  /** An input was refused: no_map, unknown_bot, bot_exists, cell_blocked, cell_taken; `cell`: the cell it named, `goal`: a refused goal's number. */
  | { kind: 'refused'; op: PlannerOp; bot?: number; cell?: number; goal?: number; reason: string }
  /** With `validate`: the independent validator flagged the plan (a bug: report it). */
  | { kind: 'violation'; step: number; bot: number; other: number; cell: number; rule: string; detail: string }
  /**
   * The plan cannot run further ahead until this bot's `action` (from cell `from` to `to`,
   * planned at `step`) is confirmed by its telemetry; it has held the level's planning for `ms`.
   * `released` false: it waits for nothing more and is about to be given to the bot.
   */
  | { kind: 'held_up'; bot: number; action: PlannerActionName; from: number; to: PlanState; released: boolean; step: number; ms: number };

export interface LevelPlannerOptions {
  /** The level; or call setMap() later (inputs before it are refused with no_map). */
  grid?: PlannerGrid;
  /** Each planning step returns within this (1..60000, default 50). */
  stepBudgetMs?: number;
  /** Plan at most this many steps ahead of the slowest bot's confirmed actions (1..10000, default 8). */
  window?: number;
  /** Actions a bot may hold unconfirmed (1..32, default 1: each action's start is confirmed first). */
  maxReleasedActions?: number;
  /** After a step in which nobody could start anything, wait this long before the next (0..60000, default 100). */
  idleStepMs?: number;
  /** Steps each action takes (1..1000, default 1 each). */
  durations?: { forward?: number; turn?: number; lift?: number; lower?: number };
  /** One-way preference in one-wide corridors (docs/planner.md); default false. */
  corridorGuidance?: boolean;
  /** Steps without getting closer before a bot counts as stalled (default 24). */
  stallSteps?: number;
  /** Most bots in the joint plan out of a stall that priority did not break (0..1000, default 16; below 2 off). */
  escapeBots?: number;
  /** Bound of the distance tables' cache in MB (default 256). */
  heuristicMemoryMb?: number;
  seed?: number;
  /** Replay every planned step in the independent validator (tests, diagnostics); default false. */
  validate?: boolean;
  /** Events waiting for JS beyond this are dropped and counted (default 10000). */
  maxEvents?: number;
  /** An unconfirmed action that holds planning back this long is told, once (a `held_up` event; 0..3600000 ms, default 2000, 0 never). */
  heldUpMs?: number;
}

export interface LevelPlannerStats {
  hasMap: boolean;
  suspended: boolean;
  /** Steps planned since the map was set. */
  step: number;
  bots: number;
  /** Steps the plan is ahead of the slowest bot (at most `window`). */
  lag: number;
  /** Actions planned and not yet confirmed. */
  queuedActions: number;
  inputs: number;
  inputsWaiting: number;
  refused: number;
  steps: number;
  /** Steps in which no bot started anything. */
  idleSteps: number;
  overBudget: number;
  incompleteSteps: number;
  eventsDropped: number;
  /** With `validate`: rules the plan broke (always 0 unless there is a bug). */
  violations: number;
  /** Time a step was wanted but the slowest bot's unconfirmed actions held the window shut (ms). */
  windowWaitMs: number;
  /** The bots the window waited on longest (following the actions they wait on), longest first, up to 3. */
  heldUpBy: { bot: number; ms: number }[];
  actions: { planned: number; released: number; confirmed: number; dropped: number };
  /** Drops of planned actions (each with the actions waiting on them). */
  replans: number;
  deviations: number;
  /** Cells blocked for planning around stuck bots (where they may be besides their own cell). */
  heldCells: number;
  /** Cells of paused, stuck or staying bots, blocked for planning so that the others go round. */
  frozenCells: number;
  goals: { set: number; reached: number; cancelled: number };
  /** Deadlocks or livelocks detected and broken. */
  stalls: { detected: number; broken: number };
  /** Stalls that priority did not break: joint plans by a complete search for the bots around them (docs/planner.md). */
  escapes: { planned: number; done: number; aborted: number; unsolved: number };
  /** Planning time per step over the latest 4096 steps (max since start). */
  stepMs: { samples: number; p50: number; p99: number; max: number; last: number };
  /** CPU time of the level's thread ("wh-planner"). */
  threadCpuMs: number;
  /** CPU time on the JS thread turning batches into objects (the callbacks excluded). */
  deliverCpuMs: number;
}

export interface LevelPlanner {
  /** Replaces the level's map; every bot, plan and goal is dropped (add the bots again). */
  setMap(grid: PlannerGrid): void;
  /** A bot appears at `state` (its telemetry); a `bot_added` or `refused` event follows. */
  addBot(id: number, state: PlanState): void;
  /** The bot left the level: its unexecuted actions, and other bots' actions waiting on them, are dropped. */
  removeBot(id: number): void;
  /** Paused: the actions it holds finish, it gets nothing more, others route around it. */
  pauseBot(id: number, paused: boolean): void;
  /** Stuck (faulted): nothing more for it, cells it may be on are avoided; on release it is placed where telemetry last put it. */
  setStuck(id: number, stuck: boolean): void;
  /**
   * Sets or replaces the bot's goal (a replaced goal drops the bot's unreleased actions). Returns
   * the goal's number, which its events carry: a goal_reached of a goal replaced meanwhile may
   * still arrive, and is told apart by it.
   */
  setGoal(id: number, goal: PlannerGoal): number;
  /** Drops the goal and the bot's unreleased actions; the bot idles (others may push it aside). */
  cancelGoal(id: number): void;
  /** Telemetry: the bot is at rest in `state` (send nothing while it moves); confirms its released actions up to there. */
  reportTelemetry(id: number, state: PlanState): void;
  /** Changes a cell's flags (a carrier set down on storage: CELL_BARRED_LOADED). */
  setCellFlags(cell: number, flags: number): void;
  /** Listens to released actions, in batches; returns the unsubscribe function. */
  onCommands(listener: (actions: PlannedAction[]) => void): () => void;
  /** Listens to events, in batches; returns the unsubscribe function. */
  onEvent(listener: (events: PlannerEvent[]) => void): () => void;
  /** Suspends (true) or resumes the level's thread; inputs keep queueing (diagnostics, tests). */
  suspend(suspended: boolean): void;
  /** Counters and planning times, read without waiting for the thread. */
  stats(): LevelPlannerStats;
  /** Stops the thread; no callback after this call; settles once the thread has ended. Idempotent. */
  close(): Promise<void>;
}

/** The addon's class (native/src/planner_binding.cc): positional arguments, checked there. */
export interface NativeLevelPlanner {
  setMap(grid: PlannerGrid): void;
  addBot(id: number, cell: number, heading: number, lifted: boolean): void;
  removeBot(id: number): void;
  pauseBot(id: number, paused: boolean): void;
  setStuck(id: number, stuck: boolean): void;
  /** heading -1: any; act 0 none, 1 lift, 2 lower */
  setGoal(id: number, cell: number, heading: number, act: number, stay: boolean): number;
  cancelGoal(id: number): void;
  reportTelemetry(id: number, cell: number, heading: number, lifted: boolean): void;
  setCellFlags(cell: number, flags: number): void;
  suspend(suspended: boolean): void;
  stats(): LevelPlannerStats;
  close(): Promise<void>;
}

export type NativeLevelPlannerClass = new (
  options: LevelPlannerOptions & { deliver(commands: PlannedAction[] | undefined, events: PlannerEvent[] | undefined): void },
) => NativeLevelPlanner;

/** The addon's validatePlan (native/src/validator_binding.cc). */
export type NativeValidatePlan = typeof validatePlan;

export interface PlanRecord {
  bot: number;
  action: PlannerActionName;
  /** The state at the end of this step; default: where the action leads (unchanged before its last step). */
  after?: PlanState;
}

export interface PlanViolation {
  step: number;
  bot: number;
  other: number;
  /** validator.h's rule names: vertex, swap, cycle, blocked-cell, barred-loaded, ... */
  rule: string;
  cell: number;
  detail: string;
}

const ACTS = { none: 0, lift: 1, lower: 2 } as const;

/** Starts the planner thread of one level. */
export function createLevelPlanner(options: LevelPlannerOptions = {}): LevelPlanner {
  const commandListeners = new Set<(actions: PlannedAction[]) => void>();
  const eventListeners = new Set<(events: PlannerEvent[]) => void>();
  const native = new (addon().LevelPlanner)({
    ...options,
    deliver(commands, events) {
      // events first: a bot_added comes before the bot's first commands
      if (events) for (const l of eventListeners) l(events);
      if (commands) for (const l of commandListeners) l(commands);
    },
  });
  let closing: Promise<void> | undefined;
  return {
    setMap: (grid) => native.setMap(grid),
    addBot: (id, s) => native.addBot(id, s.cell, s.heading, s.lifted),
    removeBot: (id) => native.removeBot(id),
    pauseBot: (id, paused) => native.pauseBot(id, paused),
    setStuck: (id, stuck) => native.setStuck(id, stuck),
    setGoal: (id, goal) => native.setGoal(id, goal.cell, goal.heading ?? -1, ACTS[goal.act ?? 'none'], goal.stay ?? false),
    cancelGoal: (id) => native.cancelGoal(id),
    reportTelemetry: (id, s) => native.reportTelemetry(id, s.cell, s.heading, s.lifted),
    setCellFlags: (cell, flags) => native.setCellFlags(cell, flags),
    onCommands(listener) {
      commandListeners.add(listener);
      return () => commandListeners.delete(listener);
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    suspend: (suspended) => native.suspend(suspended),
    stats: () => native.stats(),
    close() {
      closing ??= native.close();
      return closing;
    },
  };
}

/**
 * Replays a plan in the independent validator (native/planner/validator.h): `starts` places the
 * bots at instant 0, `steps[t]` holds one record per bot for step t. Returns every broken rule
 * (the first 100 in detail).
 */
export function validatePlan(
  grid: PlannerGrid,
  starts: Array<{ bot: number } & PlanState>,
  steps: PlanRecord[][],
  options: { rotations?: boolean; forbidCycles?: boolean; durations?: { forward?: number; turn?: number; lift?: number; lower?: number } } = {},
): { count: number; violations: PlanViolation[] } {
  return addon().validatePlan(grid, starts, steps, options);
}
