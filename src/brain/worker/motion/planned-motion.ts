/**
 * The motion of one level: the native level planner (its own thread: lifelong planning and
 * the action dependency graph that keeps the order of bots through cells) decides which bot
 * does what and when it is safe; this turns each released action into a command on the radio
 * line and each telemetry frame into the confirmation the planner waits for.
 *
 * Mapping (docs/planner-realtime.md, firmware-protocol/PROTOCOL.md):
 * - Forward: a SEGMENT of one MOVE step into the next cell, confirmed when telemetry shows the
 *   bot at rest on that cell. The protocol moves in absolute directions, so a bot turns as
 *   part of its next move: Turn actions are confirmed at once (turning in place takes no cell).
 * - Lift / Lower: LIFT / LOWER, confirmed when telemetry shows the lift up / down. The cell a
 *   carrier leaves stops being barred to loaded bots; the storage cell it is set down on is.
 * - At the goal, `then` runs: charge, uncharge, RFID write or check.
 */
import type { SiteLevel } from '../../../domain/site/load.js';
import type { Logger } from '../../../log/logger.js';
import type { Command } from '../../../native/link.js';
import type { Heading, Telemetry } from '../../../link/protocol/messages.js';
import { FAULT_BY_NAME, STOPPING_FLAGS } from '../../../link/protocol/faults.js';
import { type LevelPlanner, type LevelPlannerStats, type PlannedAction, type PlannerEvent, type PlanState, type PlannerHeading } from '../../../native/planner.js';
import type { BotEvent, BotState, CommandOutcome } from '../../../lines/events.js';
import { cellFlags, moveStep, plannerHeading } from './level-grid.js';
import type { FailureCause, GoalOutcome, LevelMotion, MotionBot, MotionGoal, Standing } from './motion.js';

const OBSTACLE = FAULT_BY_NAME.get('OBSTACLE')!.code;
/** FAULT_CLEAR tries after an ERROR fault before the bot waits for a technician. */
const FAULT_CLEAR_TRIES = 5;

/** How often each level's planner figures go to the log. */
const PLANNER_SUMMARY_MS = 5 * 60_000;

export interface MotionRadio {
  send(levelId: number, node: number, command: Command, timeoutMs?: number): Promise<CommandOutcome>;
  onBot(listener: (event: BotEvent) => void): () => void;
}

export interface PlannedMotionOptions {
  level: SiteLevel;
  planner: LevelPlanner;
  radio: MotionRadio;
  logger: Logger;
  /** Bots of the level in the database. */
  botIds: () => number[];
  /** Whether a storage cell holds a carrier now (for the cell flags). */
  occupied: (x: number, y: number) => boolean;
  /** Milliseconds a MOVE of one cell is commanded to last (motion-figures moveMs). */
  moveMs: number;
  /** Milliseconds a bot needs per quarter turn; a move in a new direction turns first. */
  turnMs: number;
  /** After an ERROR fault, try FAULT_CLEAR this long later (0: never; a technician clears it). */
  faultClearMs: () => number;
}

/** An action released to a bot: `sent` once its command went out; `segment`: a move's SEGMENT number once sent, else -1. */
interface Underway {
  action: PlannedAction;
  sent: boolean;
  segment: number;
}

/** Moves a bot runs at once: one under way and the next queued behind it (PROTOCOL.md SEGMENT). */
const MOVES_AHEAD = 2;

/**
 * Actions the planner gives a bot at once (its `maxReleasedActions`): a move, the turns after
 * it and the next move, so that the next move is queued before the bot ends the one it runs.
 */
export const RELEASED_ACTIONS = 3;

/**
 * Steps a level's plan may run ahead of its slowest bot (the planner's `window`). Bots that
 * follow each other enter each cell only once the one ahead has left it, each a move and a
 * round trip behind: the last of a line of bots runs that many steps behind the plan, and a
 * window shorter than the line slows the whole level to the line's pace.
 */
export const PLAN_WINDOW = 24;

interface BotRun {
  id: number;
  telemetry: BotState | undefined;
  planned: boolean;
  goal: { goal: MotionGoal; resolve: (o: GoalOutcome) => void } | undefined;
  /** The actions released to it and not yet confirmed by its telemetry, in order. */
  underway: Underway[];
  /** When (performance.now()) its latest command went out, and when the bot accepted it. */
  sentAt?: number;
  acceptedAt?: number;
  /** Its latest telemetry report, and when it arrived (performance.now()). */
  report?: Telemetry;
  heardAt?: number;
  segment: number;
  paused: boolean;
  /** While a FAULT_CLEAR is scheduled or under way: when (performance.now()) it goes out. */
  clearAt?: number;
  /** Its telemetry's latched stopping flags got their clearing (followLatch); reset once they drop. */
  latchFollowed: boolean;
  /** Stopped by a refusal or fault: the planner routes around it until it is freed. */
  stuck: boolean;
  /** Stuck because it went off the radio line: freed when it answers again. */
  lostLink: boolean;
  /** It held a carrier when it went off the line: its listeners hear where it answers again. */
  lostHolding: boolean;
  /** Kept where it stands out of dispatch (offboarding) until removed. */
  parked: boolean;
  /**
   * A LIFT or LOWER that stopped unconfirmed, on this cell: whether a carrier stands there is
   * known only once the bot rests and reports its lift.
   */
  unsettled?: { cell: number; noCarrier: boolean };
  /** When the planner last refused to place it on release (set_stuck refused): it is freed again later. */
  refusedAt?: number;
  /**
   * Stays on its charger (the planner keeps it there) until its telemetry says the charge is
   * done: 'asked' once CHARGE is accepted, 'seen' once telemetry shows it charging.
   */
  charging: 'no' | 'asked' | 'seen';
}

export class PlannedMotion implements LevelMotion {
  readonly levelId: number;
  private readonly runs = new Map<number, BotRun>();
  /** The last telemetry of bots that left the level. */
  private readonly departed = new Map<number, BotState>();
  private readonly stops: (() => void)[] = [];
  private readonly backListeners = new Set<(botId: number, standing: Standing) => void>();
  private paused = false;
  /** Closing: commands still in flight end as not delivered, which stops no bot. */
  private closed = false;

  constructor(private readonly o: PlannedMotionOptions) {
    this.levelId = o.level.id;
    for (const id of o.botIds()) this.run(id);
    const summary = setInterval(() => this.logSummary(), PLANNER_SUMMARY_MS);
    summary.unref();
    this.stops.push(() => clearInterval(summary));
    this.stops.push(
      o.planner.onCommands((actions) => {
        for (const a of actions) this.perform(a);
      }),
      o.planner.onEvent((events) => {
        for (const e of events) this.planned(e);
      }),
      o.radio.onBot((event) => {
        if (event.bot.level_id === this.levelId) this.heard(event);
      }),
    );
  }

  bots(): MotionBot[] {
    const out: MotionBot[] = [];
    for (const r of this.runs.values()) {
      const t = r.telemetry;
      // A bot is the brain's to use once its planner knows where it is.
      if (!t || !r.planned) continue;
      out.push({
        id: r.id, level_id: this.levelId, online: t.online, idle: r.goal === undefined && r.underway.length === 0 && !r.stuck && !r.parked, x: t.x, y: t.y,
        lifted: t.carrier_held, charging: this.isCharging(r), battery: t.battery_level, faulted: (t.faults & STOPPING_FLAGS) !== 0, stuck: r.stuck || r.parked,
      });
    }
    return out;
  }

  unplaced(): Standing[] {
    const out: Standing[] = [];
    for (const r of this.runs.values()) {
      const t = r.telemetry;
      if (t && !r.planned && t.online && t.x !== 65535) out.push({ x: t.x, y: t.y, lifted: t.carrier_held });
    }
    return out;
  }

  onBackOnLine(listener: (botId: number, standing: Standing) => void): () => void {
    this.backListeners.add(listener);
    return () => this.backListeners.delete(listener);
  }

  lastSeen(botId: number): { x: number; y: number; lifted: boolean } | undefined {
    const t = this.runs.get(botId)?.telemetry ?? this.departed.get(botId);
    return t && { x: t.x, y: t.y, lifted: t.carrier_held };
  }

  go(botId: number, goal: MotionGoal): Promise<GoalOutcome> {
    const r = this.runs.get(botId);
    if (!r || !r.planned) return Promise.resolve({ ok: false, reason: `bot ${botId} has not reported on level ${this.levelId}`, cause: 'lost' });
    if (r.goal) return Promise.resolve({ ok: false, reason: `bot ${botId} has a goal already`, cause: 'refused' });
    if (r.parked) return Promise.resolve({ ok: false, reason: `bot ${botId} is parked for offboarding`, cause: 'refused' });
    const charging = this.isCharging(r);
    return new Promise((resolve) => {
      r.goal = { goal, resolve };
      r.charging = 'no';
      const act = goal.then === 'lift' ? 'lift' : goal.then === 'lower' ? 'lower' : 'none';
      // Work at the goal (charging, tags, a carrier held at a balcony) must not be interrupted by a push.
      const stay = act === 'none' && goal.then !== 'none';
      const set = () => {
        // The cell it sets a carrier down on is read from the store again: a level refresh
        // while a carrier was held between a failed job and its retry counted it as standing
        // on the cell it was booked to, and left that cell barred to every loaded bot sent there.
        if (act === 'lower') this.refreshCell(goal.x, goal.y);
        this.o.planner.setGoal(botId, { cell: goal.y * this.o.level.width + goal.x, act, stay });
      };
      if (!charging || goal.then === 'charge' || goal.then === 'uncharge') return set();
      // Taken off its charger for work: a charging bot refuses motion until its charge ends.
      this.o.logger.info({ level_id: this.levelId, bot_id: botId, battery: r.telemetry?.battery_level }, 'taken off its charger for work');
      void this.uncharge(r).then((failed) => {
        if (r.goal?.resolve !== resolve) return;
        if (failed) this.finish(botId, { ok: false, ...failed });
        else set();
      });
    });
  }

  async stopCharging(botId: number): Promise<void> {
    const r = this.runs.get(botId);
    if (!r || r.goal || !this.isCharging(r)) return;
    const failed = await this.uncharge(r);
    if (failed) this.o.logger.warn({ level_id: this.levelId, bot_id: botId, reason: failed.reason }, 'could not take a bot off its charger');
    // Its charger is free: the planner may push it aside for the bot that needs it.
    else if (!r.goal) this.o.planner.cancelGoal(botId);
  }

  private isCharging(r: BotRun): boolean {
    return r.charging !== 'no' || r.telemetry?.is_charging === true;
  }

  /** Ends a bot's charge; returns why not, if it did not. */
  private async uncharge(r: BotRun): Promise<Failed | undefined> {
    r.charging = 'no';
    const failed = failure('UNCHARGE', await this.o.radio.send(this.levelId, r.id, { type: 'UNCHARGE' }, 15_000));
    // Still charging: the end of its charge frees the charger, as before.
    if (failed && r.telemetry?.is_charging) r.charging = 'seen';
    return failed;
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    for (const r of this.runs.values()) {
      r.paused = paused;
      if (r.planned) this.o.planner.pauseBot(r.id, paused);
    }
  }

  addBot(botId: number): void {
    this.run(botId);
  }

  removeBot(botId: number): void {
    const r = this.runs.get(botId);
    if (!r) return;
    // Where it left, for the job it was doing: a carrier on it left with it.
    if (r.telemetry) this.departed.set(botId, r.telemetry);
    this.finish(botId, { ok: false, reason: `bot ${botId} left the level`, cause: 'lost' });
    if (r.planned) this.o.planner.removeBot(botId);
    this.runs.delete(botId);
  }

  abandon(botId: number): boolean {
    const r = this.runs.get(botId);
    if (!r?.goal || r.underway.some((u) => u.action.action === 'lift') || r.telemetry?.carrier_held) return false;
    // On its goal cell, or entering it, its lift may be released already (the planner releases
    // it once the last move is confirmed): too late to be sure nothing is lifted.
    const goal = r.goal.goal.y * this.o.level.width + r.goal.goal.x;
    const t = r.telemetry;
    if (r.underway.some((u) => u.action.to.cell === goal) || (t && t.y * this.o.level.width + t.x === goal)) return false;
    this.finish(botId, { ok: false, reason: 'its job was cancelled', cause: 'cancelled' });
    return true;
  }

  park(botId: number): void {
    const r = this.runs.get(botId);
    if (!r || r.parked) return;
    r.parked = true;
    const t = r.telemetry;
    // A goal on its own cell that it stays on: the others go round it until it is taken off.
    if (r.planned && t) this.o.planner.setGoal(botId, { cell: t.y * this.o.level.width + t.x, act: 'none', stay: true });
  }

  refreshCell(x: number, y: number): void {
    const cell = y * this.o.level.width + x;
    this.o.planner.setCellFlags(cell, cellFlags(this.o.level, x, y, this.o.occupied(x, y) && !this.heldUpOn().has(cell)));
  }

  refresh(): void {
    const held = this.heldUpOn();
    for (let y = 0; y < this.o.level.rows; y++) {
      for (let x = 0; x < this.o.level.width; x++) {
        const cell = y * this.o.level.width + x;
        this.o.planner.setCellFlags(cell, cellFlags(this.o.level, x, y, this.o.occupied(x, y) && !held.has(cell)));
      }
    }
  }

  /**
   * The cells where a bot holds a carrier up. The store may count that carrier as standing
   * there (held between a failed job and its retry, it is booked where its bot stopped), but
   * the floor is free: barred, the cell would stay barred to loaded bots once the bot moved on.
   */
  private heldUpOn(): Set<number> {
    const cells = new Set<number>();
    for (const r of this.runs.values()) {
      const t = r.telemetry;
      if (t?.carrier_held && t.x !== 65535) cells.add(t.y * this.o.level.width + t.x);
    }
    return cells;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of this.stops) stop();
    this.logSummary();
    for (const r of this.runs.values()) this.finish(r.id, { ok: false, reason: 'the brain is stopping', cause: 'stopping' });
    await this.o.planner.close();
  }

  plannerStats(): LevelPlannerStats {
    return this.o.planner.stats();
  }

  /** What the level's planner did so far, for the journal: is the level moving, are bots stuck in jams. */
  private logSummary(): void {
    const s = this.o.planner.stats();
    this.o.logger.info({
      level_id: this.levelId, steps: s.steps, bots: s.bots, goals_reached: s.goals.reached, stalls: s.stalls, escapes: s.escapes,
      step_ms_p99: s.stepMs.p99, over_budget: s.overBudget, replans: s.replans, violations: s.violations,
      window_wait_ms: Math.round(s.windowWaitMs), held_up_by: s.heldUpBy.map((h) => `${h.bot}:${Math.round(h.ms)}ms`).join(' '),
    }, 'level planner summary');
  }

  private run(id: number): BotRun {
    let r = this.runs.get(id);
    if (!r) {
      r = { id, telemetry: undefined, planned: false, goal: undefined, underway: [], segment: 0, paused: this.paused, latchFollowed: false, stuck: false, lostLink: false, lostHolding: false, parked: false, charging: 'no' };
      this.runs.set(id, r);
    }
    return r;
  }

  private heard(event: BotEvent): void {
    const r = this.runs.get(event.bot.id);
    if (!r) return;
    const before = r.telemetry;
    r.telemetry = event.bot;
    r.heardAt = performance.now();
    if (event.kind === 'fault' && event.fault.fault_state === 'RAISED' && (event.fault.severity === 'ERROR' || event.fault.severity === 'FATAL')) {
      // Its latch is this fault's: cleared below (ERROR), or left for a technician (FATAL).
      r.latchFollowed = true;
      if (event.fault.code === OBSTACLE && event.bot.carrier_held) this.barObstacle(r, event.fault.detail);
      this.stuck(r, `fault 0x${event.fault.code.toString(16)} (${event.fault.severity})`, 'fault');
      if (event.fault.severity === 'ERROR') this.clearLater(r);
      return;
    }
    this.followLatch(r, event.bot.faults);
    if (event.kind === 'offline') {
      r.lostLink = true;
      r.lostHolding = (before ?? event.bot).carrier_held;
      this.stuck(r, `lost on the radio line (${event.reason})`, 'lost');
      return;
    }
    // Back on the line, a bot is freed by its first telemetry at rest (below), not here: it may
    // have finished a segment or a lift while off it, and the planner must place it as it is.
    if (event.kind !== 'telemetry') return;
    r.report = event.telemetry;
    if (r.charging === 'asked' && event.bot.is_charging) r.charging = 'seen';
    // Charged (or full already when asked, so it never showed charging): the charger is free
    // for the next bot, which may push this one aside.
    else if ((r.charging === 'seen' && !event.bot.is_charging) || (r.charging === 'asked' && event.bot.battery_level >= 100)) {
      r.charging = 'no';
      this.o.planner.cancelGoal(r.id);
    }
    const t = event.telemetry;
    const state: PlanState = { cell: t.y * this.o.level.width + t.x, heading: plannerHeading(t.heading), lifted: t.lift === 'UP' };
    if (!r.planned) {
      // Placed only at rest: a bot still finishing a segment of a brain that stopped would end
      // elsewhere than the planner was told, and refuse its first segment (WRONG_POSITION).
      if (t.x === 65535 || t.lift === 'LIFTING' || t.lift === 'LOWERING' || t.motion === 'MOVING') return;
      // A refusal (its cell taken or blocked) comes back as an event and clears `planned` again.
      r.planned = true;
      this.o.planner.addBot(r.id, state);
      if (r.paused) this.o.planner.pauseBot(r.id, true);
      return;
    }
    // A stopped bot is placed, once freed, where its last report put it: report where it really
    // rests (after a refused segment the planner's idea of its cell can be wrong).
    if (r.stuck && t.motion !== 'MOVING' && t.lift !== 'LIFTING' && t.lift !== 'LOWERING') {
      if (r.unsettled) this.settleCell(r, t.lift === 'DOWN');
      this.o.planner.reportTelemetry(r.id, state);
      if (r.lostLink) {
        this.answeredAgain(r, state);
        return this.freeIfBack(r);
      }
      // Stopped only because the planner could not place it (no fault, on the line): try again.
      if (r.refusedAt !== undefined && performance.now() - r.refusedAt > 1000 && event.bot.online && (t.faults & STOPPING_FLAGS) === 0 && !r.lostLink) this.free(r);
      return;
    }
    const done = finished(r, t, state.cell);
    if (done === 0) return;
    this.confirm(r, done);
    this.carryOn(r);
  }

  /** What the level's planner tells: goals reached or out of reach, refusals. */
  private planned(e: PlannerEvent): void {
    switch (e.kind) {
      case 'goal_reached':
        void this.arrived(e.bot);
        break;
      case 'goal_unreachable': {
        // The event's cell is where the bot stands; the journal needs both ends of the way.
        const from = this.xy(e.cell);
        const goal = this.runs.get(e.bot)?.goal?.goal;
        const to = goal ? ` to (${goal.x}, ${goal.y})` : '';
        this.finish(e.bot, { ok: false, reason: `no path from (${from.x}, ${from.y})${to} for this bot`, cause: 'unreachable', ...this.nextClearing(e.bot) });
        break;
      }
      case 'refused': {
        const r = e.bot === undefined ? undefined : this.runs.get(e.bot);
        if (r && e.op === 'add_bot') r.planned = false;
        if (r && e.op === 'set_goal') this.finish(r.id, { ok: false, reason: `the planner refused the goal: ${e.reason}`, cause: 'refused' });
        // Its telemetry puts it where another bot is planned: it stays stopped there, and is
        // freed again once it reports a cell it can be placed on.
        if (r && e.op === 'set_stuck') {
          r.stuck = true;
          r.refusedAt = performance.now();
        }
        this.o.logger.warn({ level_id: this.levelId, event: e }, 'planner refused an input');
        break;
      }
      case 'held_up':
        this.heldUp(e);
        break;
      case 'violation':
        this.o.logger.error({ level_id: this.levelId, event: e }, 'planner validation failed');
        break;
      case 'stalled':
        this.o.logger.info({ level_id: this.levelId, bot_id: e.bot, ...this.xy(e.cell) }, 'bot stalled (deadlock or livelock); priority raised');
        break;
      case 'escaped':
        this.o.logger.info({ level_id: this.levelId, bot_id: e.bot, ...this.xy(e.cell), bots: e.bots }, 'bot still stalled; the bots around it follow a joint plan out (escape)');
        break;
      default:
        break;
    }
  }

  /**
   * The level's plan waits on one bot's action: what the brain knows of it (its command, its
   * telemetry) tells a slow line from a slow bot or a confirmation that never came.
   */
  private heldUp(e: Extract<PlannerEvent, { kind: 'held_up' }>): void {
    const r = this.runs.get(e.bot);
    const now = performance.now();
    const ago = (t: number | undefined) => (t === undefined ? null : Math.round(now - t));
    const t = r?.telemetry;
    const m = r?.report;
    this.o.logger.info({
      level_id: this.levelId, bot_id: e.bot, action: e.action, from: this.xy(e.from), to: this.xy(e.to.cell), released: e.released, held_ms: Math.round(e.ms),
      underway: r?.underway.map((u) => `${u.action.action}${u.sent ? '' : ' (held)'}`) ?? null, sent_ms_ago: ago(r?.sentAt), accepted_ms_ago: ago(r?.acceptedAt), heard_ms_ago: ago(r?.heardAt),
      telemetry: t ? { x: t.x, y: t.y, online: t.online, faults: t.faults, charging: t.is_charging, motion: m?.motion ?? null, lift: m?.lift ?? null } : null,
    }, 'level planning waits on one action of a bot');
  }

  /** Takes on one action the planner released for a bot. */
  private perform(a: PlannedAction): void {
    const r = this.runs.get(a.bot);
    if (!r) return;
    r.underway.push({ action: a, sent: false, segment: -1 });
    this.confirm(r, 0);
    this.carryOn(r);
  }

  /**
   * Confirms to the planner the first `done` actions under way and the turns and waits right
   * after them: the protocol has no turn step, so a bot makes its turns within its next move.
   */
  private confirm(r: BotRun, done: number): void {
    while (done < r.underway.length && !movesOrLifts(r.underway[done]!.action)) done++;
    if (done === 0) return;
    const last = r.underway[done - 1]!.action;
    r.underway.splice(0, done);
    this.o.planner.reportTelemetry(r.id, last.to);
  }

  /**
   * Sends the commands of the actions under way that may go now. A move goes while the bot
   * runs at most one other, so that it starts without stopping in between (the confirmation's
   * round trip is then off the bot's path); a lift or lowering goes once the bot rests, every
   * move before it confirmed, and nothing after it goes before it is done.
   */
  private carryOn(r: BotRun): void {
    let moves = 0;
    let heading: PlannerHeading | undefined;
    for (let i = 0; i < r.underway.length; i++) {
      const u = r.underway[i]!;
      const a = u.action;
      if (a.action === 'forward') {
        if (moves === MOVES_AHEAD) return;
        if (!u.sent) this.move(r, u, heading);
        moves++;
        heading = a.to.heading;
      } else if (a.action === 'lift' || a.action === 'lower') {
        if (i === 0 && !u.sent) this.lift(r, u);
        return;
      }
    }
  }

  /** Sends a move; `heading`: where the bot faces when it starts (after the moves before it). */
  private move(r: BotRun, u: Underway, heading: PlannerHeading | undefined): void {
    const a = u.action;
    u.sent = true;
    r.segment = (r.segment + 1) & 0xff;
    u.segment = r.segment;
    const { x, y } = this.xy(a.from.cell);
    // The planner's turns were confirmed without moving (the protocol has no turn step): the
    // bot turns now, within this move, so the move gets the time of the turns it still owes.
    const step = moveStep(a.from.cell, a.to.cell, this.o.level.width, a.durationSteps * this.o.moveMs);
    const physical = heading ?? (r.telemetry ? plannerHeading(r.telemetry.heading as Heading) : a.to.heading);
    const quarters = Math.min((a.to.heading - physical + 4) % 4, (physical - a.to.heading + 4) % 4);
    step.duration_ms += quarters * this.o.turnMs;
    void this.command(r, u, { type: 'SEGMENT', segment: u.segment, start_delay_ms: 0, x, y, steps: [step] });
  }

  /** Sends a lift or a lowering: the bot rests, every move before it confirmed. */
  private lift(r: BotRun, u: Underway): void {
    const a = u.action;
    u.sent = true;
    const { x, y } = this.xy(a.from.cell);
    // The cell's flags follow the carrier: lifted off, it no longer bars loaded bots; set
    // down (storage, buffer or balcony port), it does.
    this.o.planner.setCellFlags(a.from.cell, cellFlags(this.o.level, x, y, a.action === 'lower'));
    void this.command(r, u, { type: a.action === 'lift' ? 'LIFT' : 'LOWER' });
  }

  /** Sends the command of an action under way; a refusal stops the bot, unless its actions were dropped meanwhile. */
  private async command(r: BotRun, u: Underway, command: Command): Promise<void> {
    const sentAt = performance.now();
    r.sentAt = sentAt;
    const outcome = await this.o.radio.send(this.levelId, r.id, command, 15_000);
    if (this.closed) return;
    const failed = failure(command.type, outcome);
    if (!failed) {
      if (r.sentAt === sentAt) r.acceptedAt = performance.now();
      return;
    }
    // The move queued behind a refused one is refused too: the bot is stopped once.
    if (!r.underway.includes(u)) return;
    this.stuck(r, failed.reason, failed.cause);
    // A refusal without a fault leaves a working bot: once at rest it is placed where its
    // telemetry says and planned again (a fault waits for its clearing instead).
    setTimeout(() => {
      const t = r.telemetry;
      if (r.planned && t && t.online && (t.faults & STOPPING_FLAGS) === 0) this.free(r);
    }, 1000).unref();
  }

  /** What the goal asked for once there (charging, RFID); then the goal is done. */
  private async arrived(botId: number): Promise<void> {
    const r = this.runs.get(botId);
    const goal = r?.goal?.goal;
    if (!r || !goal) return;
    const command: Command | undefined = goal.then === 'charge' ? { type: 'CHARGE', target: 1000 }
      : goal.then === 'uncharge' ? { type: 'UNCHARGE' }
        : goal.then === 'rfid_write' ? { type: 'RFID_WRITE', target: 'FLOOR', offset: 0, data: cellTag(goal.x, goal.y) }
          : goal.then === 'rfid_check' ? { type: 'RFID_CHECK', target: 'FLOOR', offset: 0, expect: cellTag(goal.x, goal.y) } : undefined;
    if (!command) return this.finish(botId, { ok: true });
    if (command.type === 'RFID_WRITE') {
      // Bots refuse tag writes outside a writing mode (PROTOCOL.md RFID_WRITE_MODE).
      const mode = await this.o.radio.send(this.levelId, botId, { type: 'RFID_WRITE_MODE', mode: 'MANUAL' }, 15_000);
      if (!mode.delivered || mode.result !== 'OK') return this.finish(botId, { ok: false, reason: 'the bot did not enter RFID writing mode', cause: 'refused' });
    }
    const failed = failure(command.type, await this.o.radio.send(this.levelId, botId, command, 15_000));
    if (failed) return this.finish(botId, { ok: false, ...failed });
    // The work is done, or (charging) under way: the bot keeps its cell only while it charges.
    if (command.type === 'CHARGE') r.charging = 'asked';
    else this.o.planner.cancelGoal(botId);
    this.finish(botId, { ok: true });
  }

  /**
   * Many ERROR faults are passing (an overcurrent, an obstacle that was moved): FAULT_CLEAR is
   * tried after the setting's delay, and while the bot refuses it (BAD_STATE: the cause
   * persists) again after twice as long, FAULT_CLEAR_TRIES times in all (10 s, 20 s, ... 160 s:
   * a carrier in the way is often taken away minutes later); then the bot stays stopped for a
   * technician. A cleared bot is free for the planner again.
   */
  private clearLater(r: BotRun, attempt = 1): void {
    const ms = this.o.faultClearMs();
    if (ms <= 0 || (r.clearAt !== undefined && attempt === 1)) return;
    const delay = ms * 2 ** (attempt - 1);
    r.clearAt = performance.now() + delay;
    setTimeout(() => {
      void this.o.radio.send(this.levelId, r.id, { type: 'FAULT_CLEAR', code: 65535 }, 15_000).then((outcome) => {
        const ok = outcome.delivered && outcome.result === 'OK';
        const again = !ok && attempt < FAULT_CLEAR_TRIES && this.runs.get(r.id) === r;
        const msg = ok ? 'bot fault cleared' : again ? 'bot fault not cleared yet; tried again later' : 'bot fault not cleared; a technician must see it';
        this.o.logger[ok || again ? 'info' : 'warn']({ level_id: this.levelId, bot_id: r.id, cleared: ok, attempt, outcome }, msg);
        if (again) return this.clearLater(r, attempt + 1);
        r.clearAt = undefined;
        if (ok && r.planned) this.free(r);
      });
    }, delay).unref();
  }

  /** When the next FAULT_CLEAR of another stopped bot of the level goes out, if one is due: that bot may be the one in the way. */
  private nextClearing(botId: number): { clearingInMs?: number } {
    let next: number | undefined;
    for (const o of this.runs.values()) if (o.id !== botId && o.clearAt !== undefined && (next === undefined || o.clearAt < next)) next = o.clearAt;
    return next === undefined ? {} : { clearingInMs: Math.max(0, next - performance.now()) };
  }

  /**
   * A stopping flag latched in telemetry that this brain never heard raised (raised before it
   * started, or its report lost on the line) gets the clearing a fault heard gets: a brain
   * restarted before its FAULT_CLEAR went out left the bot stopped for good (chaos seed
   * 1689309407). Once per latch: a flag that stays after an accepted FAULT_CLEAR (a FATAL
   * fault shares DRIVE and LIFT with ERROR ones) waits for a technician.
   */
  private followLatch(r: BotRun, faults: number): void {
    if ((faults & STOPPING_FLAGS) === 0) {
      r.latchFollowed = false;
      return;
    }
    if (r.latchFollowed) return;
    r.latchFollowed = true;
    this.clearLater(r);
  }

  /**
   * A lift or lower that did not complete leaves the cell's flag as it was set when the command
   * went out (lifted off: free to loaded bots). The bot's lift at rest says where the carrier
   * is: still down (or set down) on the cell bars it again, on the bot frees it. A stale flag
   * sent loaded bots into a carrier over and over (OBSTACLE, chaos seed 1567165657).
   */
  private settleCell(r: BotRun, down: boolean): void {
    const { cell, noCarrier } = r.unsettled!;
    r.unsettled = undefined;
    const { x, y } = this.xy(cell);
    this.o.planner.setCellFlags(cell, cellFlags(this.o.level, x, y, down && !noCarrier));
  }

  /**
   * A loaded bot's bumper met a carrier where the planner had none (OBSTACLE's detail is the
   * cell, x | y << 16): the planner bars that cell to loaded bots, so that none is sent into it
   * again, and the journal says where the store and the floor disagree.
   */
  private barObstacle(r: BotRun, detail: number): void {
    const x = detail & 0xffff;
    const y = detail >>> 16;
    if (x >= this.o.level.width || y >= this.o.level.rows) return;
    this.o.planner.setCellFlags(y * this.o.level.width + x, cellFlags(this.o.level, x, y, true));
    this.o.logger.warn({ level_id: this.levelId, bot_id: r.id, x, y, store_has_carrier: this.o.occupied(x, y) }, 'a loaded bot met a carrier: its cell is barred to loaded bots');
  }

  /** A bot that cannot go on: others route around it; its goal fails. */
  private stuck(r: BotRun, reason: string, cause: FailureCause): void {
    const lifting = r.underway.find((u) => u.sent && (u.action.action === 'lift' || u.action.action === 'lower'));
    if (lifting) r.unsettled = { cell: lifting.action.from.cell, noCarrier: cause === 'no_carrier' };
    r.underway.length = 0;
    r.stuck = true;
    if (r.planned) this.o.planner.setStuck(r.id, true);
    this.o.logger.warn({ level_id: this.levelId, bot_id: r.id, reason }, 'bot stopped');
    this.finish(r.id, { ok: false, reason, cause });
  }

  /** A bot lost holding a carrier answers again at rest: its listeners hear where, lift up or down. */
  private answeredAgain(r: BotRun, state: PlanState): void {
    if (!r.lostHolding) return;
    r.lostHolding = false;
    const standing = { ...this.xy(state.cell), lifted: state.lifted };
    for (const listener of this.backListeners) listener(r.id, standing);
  }

  /**
   * A bot that went off the line answers again, at rest, and the planner has its state from
   * that telemetry: back into service (a latched fault still waits for its clearing).
   */
  private freeIfBack(r: BotRun): void {
    const t = r.telemetry;
    if (!r.lostLink || !t || !t.online || (t.faults & STOPPING_FLAGS) !== 0) return;
    r.lostLink = false;
    this.o.logger.info({ level_id: this.levelId, bot_id: r.id, x: t.x, y: t.y }, 'bot answers again: back in service');
    if (r.planned && r.stuck) this.free(r);
  }

  /** A stopped bot works again: the planner places it where its telemetry says. */
  private free(r: BotRun): void {
    r.stuck = false;
    r.refusedAt = undefined;
    this.o.planner.setStuck(r.id, false);
  }

  private finish(botId: number, outcome: GoalOutcome): void {
    const r = this.runs.get(botId);
    const goal = r?.goal;
    if (!r || !goal) return;
    r.goal = undefined;
    if (!outcome.ok && r.planned) this.o.planner.cancelGoal(botId);
    goal.resolve(outcome);
  }

  private xy(cell: number): { x: number; y: number } {
    return { x: cell % this.o.level.width, y: Math.floor(cell / this.o.level.width) };
  }
}

/** Whether the bot carries the action out by itself (a move, a lift, a lowering), not within its next move. */
function movesOrLifts(a: PlannedAction): boolean {
  return a.action === 'forward' || a.action === 'lift' || a.action === 'lower';
}

/**
 * How many of a bot's actions under way its telemetry shows done: every one before the move it
 * runs now (by its SEGMENT number), and that move too once the bot rests on its end cell; a
 * lift or lowering once the bot rests with its lift up or down.
 */
function finished(r: BotRun, t: Telemetry, cell: number): number {
  const atRest = t.motion !== 'MOVING';
  let running = -1;
  for (let i = r.underway.length - 1; i >= 0; i--) {
    const u = r.underway[i]!;
    if (u.segment === t.segment) {
      running = i;
      break;
    }
  }
  if (running > 0) return atRest && cell === r.underway[running]!.action.to.cell ? running + 1 : running;
  const first = r.underway[0];
  if (!first?.sent || !atRest) return 0;
  const a = first.action;
  const done = a.action === 'lift' ? t.lift === 'UP' : a.action === 'lower' ? t.lift === 'DOWN' : cell === a.to.cell;
  return done ? 1 : 0;
}

/** A floor tag's content: its cell, x and y as little-endian u16 (PROTOCOL.md, RFID). */
function cellTag(x: number, y: number): Uint8Array {
  return Uint8Array.of(x & 0xff, x >> 8, y & 0xff, y >> 8);
}

interface Failed {
  reason: string;
  cause: FailureCause;
}

/** Why a command did not succeed (not delivered, or refused with the bot's result), or undefined when it did. */
function failure(type: Command['type'], outcome: CommandOutcome): Failed | undefined {
  if (!outcome.delivered) return { reason: `${type} not delivered: ${outcome.reason}`, cause: undelivered(outcome.reason) };
  if (outcome.result === 'OK') return undefined;
  return { reason: `${type} refused: ${outcome.result}`, cause: outcome.result === 'NO_CARRIER' ? 'no_carrier' : 'refused' };
}

/** The brain stopping, the bot lost on the line (offline, rebooted, given up on, no line), or a command that timed out. */
function undelivered(reason: string): FailureCause {
  if (/stopping/.test(reason)) return 'stopping';
  return /offline|hello|gave_up|radio line/.test(reason) ? 'lost' : 'not_delivered';
}
