/**
 * One simulated bot: what it does with each command (PROTOCOL.md section 7), how it moves
 * through a segment's timed steps, lifts, drains and charges its battery, reads floor tags on
 * the way, raises and clears faults, and behaves when the link is lost (section 11). The
 * protocol mechanics (sessions, seq, retransmission, duplicates) are the endpoint's.
 */
import type { Frame, Heading, LiftState, Message, Motion, RfidWriteMode, Segment } from '../link/protocol/messages.js';
import { NodeEndpoint, type ExecutedCommand, type LinkLossReason, type NodeModel, type Reply } from './endpoint.js';
import { EXTRA_TELEMETRY_GAP_MS, type BotFigures } from './figures.js';
import { FAULTS, LINK_LOST_FLAG, fault, type FaultDefinition } from '../link/protocol/faults.js';
import { betweenCells, invalidStep, planStep, replan, segmentEnd, type StepRun } from './motion.js';
import type { Random } from './random.js';
import { TAG_MEMORY, type LevelWorld, type Tag } from './world.js';

interface SegmentRun {
  msg: Segment;
  /** receipt, or the end of the segment before it (queued) */
  t0: number;
  /** total pause time so far: every later step slot moves by it */
  shift: number;
  index: number;
  /** when the previous step ended (a late step delays the next) */
  prevEnd: number;
  step: StepRun | undefined;
}

interface ActiveFault {
  def: FaultDefinition;
  /** for warnings that clear by themselves at this time */
  clearAt?: number;
}

/** Faults that brake at once rather than at the next cell centre (PROTOCOL.md 0x11). */
const STOP_NOW = new Set(['ESTOP', 'BUMPER', 'OBSTACLE']);

/**
 * How a bot is when it powers on: where, facing where, its battery (drawn from the seed when
 * absent) and the carrier it holds up (a restart where the site stood; none otherwise).
 */
export interface BotStart {
  id: number;
  x: number;
  y: number;
  heading: Heading;
  battery?: number;
  carrier?: string;
}

export interface BotCounters {
  tag_reads: number;
  cells_driven: number;
  segments_done: number;
  late_steps: number;
}

export interface BotSnapshot {
  id: number;
  x: number;
  y: number;
  heading: Heading;
  lift: LiftState;
  carrier: string | null;
  charging: boolean;
  motion: Motion;
  battery: number;
  faults: number;
  welcomed: boolean;
  link_lost: boolean;
  counters: BotCounters;
  /** commands executed since boot, retransmissions answered without executing, the last commands (endpoint.ts) */
  executed: { total: number; duplicates: number; last: ExecutedCommand[] };
}

export class SimBot implements NodeModel {
  readonly id: number;
  readonly endpoint: NodeEndpoint;
  readonly counters: BotCounters = { tag_reads: 0, cells_driven: 0, segments_done: 0, late_steps: 0 };
  x: number;
  y: number;
  heading: Heading;
  lift: LiftState = 'DOWN';
  carrier: string | undefined;
  charging = false;
  motion: Motion = 'IDLE';
  battery: number;
  private chargeTarget = 1000;
  private readonly faults = new Map<number, ActiveFault>();
  private segmentId = 0;
  private active: SegmentRun | undefined;
  private queued: Segment | undefined;
  private stopRequested = false;
  private pauseRequested = false;
  private pausedAt = 0;
  private holdAfterSegment = false;
  private liftUntil = 0;
  private writeMode: RfidWriteMode = 'OFF';
  private lostAt: { x: number; y: number } | undefined;
  private lastTick: number;
  private nextTelemetryAt = 0;
  private lastTelemetryAt = -Infinity;
  private lastSignature = '';

  constructor(
    start: BotStart,
    private readonly world: LevelWorld,
    private readonly fig: BotFigures,
    private readonly rng: Random,
    send: ConstructorParameters<typeof NodeEndpoint>[0]['send'],
    now: number,
  ) {
    this.id = start.id;
    this.x = start.x;
    this.y = start.y;
    this.heading = start.heading;
    // Drawn even when given, so the rest of the bot's random stream does not depend on it.
    const drawn = rng.int(fig.batteryStartMin, fig.batteryStartMax);
    this.battery = start.battery ?? drawn;
    if (start.carrier !== undefined) {
      this.carrier = start.carrier;
      this.lift = 'UP';
    }
    this.lastTick = now;
    this.endpoint = new NodeEndpoint({ address: start.id, kind: 'BOT', rng: rng.fork(1), send });
  }

  start(): void {
    this.endpoint.start(this);
  }

  snapshot(): BotSnapshot {
    return {
      id: this.id, x: this.x, y: this.y, heading: this.heading, lift: this.lift, carrier: this.carrier ?? null,
      charging: this.charging, motion: this.motion, battery: Math.round(this.battery), faults: this.faultFlags(),
      welcomed: this.endpoint.welcomed, link_lost: this.endpoint.linkLost, counters: { ...this.counters },
      executed: { total: this.endpoint.counters.commands, duplicates: this.endpoint.counters.duplicates, last: [...this.endpoint.executed] },
    };
  }

  /** The cells the bot takes up: its own, and the next one while it drives between the two. */
  cells(now: number): { x: number; y: number }[] {
    const step = this.active?.step;
    if (!step || !betweenCells(step, now)) return [{ x: this.x, y: this.y }];
    return [{ x: this.x, y: this.y }, { x: this.x + step.dx, y: this.y + step.dy }];
  }

  /** Powers the bot off (a person took it off the level): its protocol timers stop, it sends nothing more. */
  powerOff(): void {
    this.endpoint.stop();
  }

  // ------------------------------------------------------------------ time

  /** Advances the bot to `now`: battery, lift, motion, faults that clear, telemetry. */
  tick(now: number): void {
    const dt = Math.max(0, now - this.lastTick) / 1000;
    this.lastTick = now;
    this.endpoint.tick(now);
    this.updateBattery(now, dt);
    if ((this.lift === 'LIFTING' || this.lift === 'LOWERING') && now >= this.liftUntil) this.finishLift();
    this.runMotion(now);
    for (const [code, f] of this.faults) {
      if (f.clearAt !== undefined && now >= f.clearAt) this.clearByItself(code, now);
    }
    this.telemetry(now);
  }

  private updateBattery(now: number, dt: number): void {
    let drain = this.fig.idleDrainPerS;
    const step = this.active?.step;
    // Driving or turning: a move step that has started and has cells left.
    if (this.motion === 'MOVING' && step?.heading !== undefined && step.reached < step.arrivals.length) {
      drain = this.fig.moveDrainPerS;
    } else if (this.lift === 'LIFTING' || this.lift === 'LOWERING') drain = this.fig.liftDrainPerS;
    this.battery = Math.max(0, this.battery - drain * dt);
    if (this.charging) {
      this.battery = Math.min(1000, this.battery + this.fig.chargePerS * dt);
      if (this.battery >= this.chargeTarget) this.charging = false;
    }
    const low = fault('BATTERY_LOW');
    if (this.battery < this.fig.batteryLow && !this.faults.has(low.code)) this.raise(low, now, Math.round(this.battery));
    else if (this.battery > this.fig.batteryLowClear && this.faults.has(low.code)) this.clearByItself(low.code, now);
    const critical = fault('BATTERY_CRITICAL');
    if (this.battery < this.fig.batteryCritical && !this.faults.has(critical.code)) this.raise(critical, now, Math.round(this.battery));
  }

  private finishLift(): void {
    if (this.lift === 'LIFTING') {
      this.carrier = this.world.takeCarrier(this.x, this.y) ?? this.carrier;
      this.lift = 'UP';
    } else {
      if (this.carrier !== undefined) this.world.putCarrier(this.carrier, this.x, this.y);
      this.carrier = undefined;
      this.lift = 'DOWN';
    }
  }

  private runMotion(now: number): void {
    // Bounded: each pass finishes a step or returns; a segment has at most 32 steps.
    for (let guard = 0; guard < 80; guard++) {
      const run = this.active;
      if (!run || this.motion === 'PAUSED') return;
      if (!run.step) {
        if (run.index >= run.msg.steps.length) {
          this.finishSegment(run.prevEnd);
          continue;
        }
        const s = run.msg.steps[run.index]!;
        let nominalStart = run.t0 + run.msg.start_delay_ms + run.shift;
        for (let i = 0; i < run.index; i++) nominalStart += run.msg.steps[i]!.duration_ms;
        const start = Math.max(nominalStart, run.prevEnd);
        if (now < start) return;
        run.step = planStep(s, this.heading, start, nominalStart + s.duration_ms, this.fig);
      }
      const step = run.step;
      while (step.reached < step.arrivals.length && step.arrivals[step.reached]! <= now) {
        const t = step.arrivals[step.reached]!;
        const nx = this.x + step.dx;
        const ny = this.y + step.dy;
        if (!this.world.drivable(nx, ny) || (this.lift !== 'DOWN' && this.world.carrierAt(nx, ny) !== undefined)) {
          // A wall, the grid's edge, or a carrier in the way of the one held up: the bumper.
          this.raise(fault('OBSTACLE'), t, (nx & 0xffff) | ((ny & 0xffff) << 16));
          return;
        }
        this.x = nx;
        this.y = ny;
        step.reached++;
        this.counters.cells_driven++;
        this.readFloorTag(t);
        if (this.stopRequested) {
          this.hold();
          return;
        }
        if (this.pauseRequested) {
          this.pauseNow(t);
          return;
        }
        if (this.active !== run) return; // a fault stopped it
      }
      if (step.heading !== undefined && now >= step.turnEnd) this.heading = step.heading;
      if (step.reached < step.arrivals.length || now < step.end) return;
      if (step.heading !== undefined && step.end - step.nominalEnd > this.fig.lateMs) {
        this.counters.late_steps++;
        this.raise(fault('SEGMENT_LATE'), step.end, Math.round(step.end - step.nominalEnd));
      }
      if (step.heading !== undefined && this.writeMode === 'AUTO_CELLS') this.writeCellTag(now);
      run.prevEnd = step.end;
      run.index++;
      run.step = undefined;
    }
  }

  private finishSegment(end: number): void {
    this.counters.segments_done++;
    const next = this.queued;
    this.queued = undefined;
    if (next && !this.holdAfterSegment) {
      this.active = { msg: next, t0: end, shift: 0, index: 0, prevEnd: end, step: undefined };
      this.segmentId = next.segment;
      return;
    }
    this.active = undefined;
    this.motion = this.holdAfterSegment ? 'HOLDING' : 'IDLE';
    this.holdAfterSegment = false;
  }

  /** Stops where it is (at a cell centre, or braked between cells), dropping every segment. */
  private hold(): void {
    this.active = undefined;
    this.queued = undefined;
    this.stopRequested = false;
    this.pauseRequested = false;
    this.holdAfterSegment = false;
    this.motion = 'HOLDING';
  }

  private pauseNow(t: number): void {
    this.pauseRequested = false;
    this.pausedAt = t;
    this.motion = 'PAUSED';
  }

  private stop(mode: 'END_OF_STEP' | 'NOW', now: number): void {
    if (mode === 'END_OF_STEP' && this.motion === 'MOVING' && betweenCells(this.active?.step, now)) this.stopRequested = true;
    else this.hold();
  }

  // ------------------------------------------------------------------ RFID

  private readFloorTag(t: number): void {
    const tag = this.world.floorTag(this.x, this.y);
    if (!tag) return;
    this.counters.tag_reads++;
    const tx = tag.memory.readUInt16LE(0);
    const ty = tag.memory.readUInt16LE(2);
    if (tx !== this.x || ty !== this.y) this.raise(fault('POSITION_MISMATCH'), t, this.x | (this.y << 16));
  }

  private writeCellTag(now: number): void {
    const tag = this.world.floorTag(this.x, this.y);
    if (!tag) {
      this.raise(fault('RFID_READER'), now, this.x | (this.y << 16));
      return;
    }
    tag.memory.writeUInt16LE(this.x, 0);
    tag.memory.writeUInt16LE(this.y, 2);
  }

  private tagFor(target: 'FLOOR' | 'CARRIER'): Tag | undefined {
    if (target === 'FLOOR') return this.world.floorTag(this.x, this.y);
    const id = this.carrier ?? this.world.carrierAt(this.x, this.y);
    return id === undefined ? undefined : this.world.carrierTag(id);
  }

  // ------------------------------------------------------------------ faults

  /** Raises a fault from the fault knob; warnings clear by themselves after `clearAfterMs`. */
  inject(code: number, now: number, detail = 0, clearAfterMs = 2000): void {
    const def = FAULTS.get(code) ?? { code, name: `VENDOR_${code.toString(16)}`, severity: 'ERROR' as const, flag: 0 };
    this.raise(def, now, detail, clearAfterMs);
  }

  private raise(def: FaultDefinition, now: number, detail: number, clearAfterMs?: number): void {
    const latched = def.severity === 'ERROR' || def.severity === 'FATAL';
    // Event-like faults (SEGMENT_LATE, a failed tag write) are reported and not kept.
    if (def.flag !== 0 || latched) {
      if (this.faults.has(def.code)) return;
      this.faults.set(def.code, { def, clearAt: !latched && clearAfterMs !== undefined ? now + clearAfterMs : undefined });
    }
    this.endpoint.sendReliable({ type: 'FAULT', code: def.code, severity: def.severity, fault_state: 'RAISED', x: this.x, y: this.y, detail: detail >>> 0 });
    if (latched) this.stop(STOP_NOW.has(def.name) ? 'NOW' : 'END_OF_STEP', now);
  }

  private clearByItself(code: number, _now: number): void {
    const f = this.faults.get(code);
    if (!f) return;
    this.faults.delete(code);
    this.endpoint.sendReliable({ type: 'FAULT', code, severity: f.def.severity, fault_state: 'CLEARED', x: this.x, y: this.y, detail: 0 });
  }

  private causePersists(def: FaultDefinition): boolean {
    if (def.name === 'BATTERY_CRITICAL') return this.battery < this.fig.batteryCritical;
    if (def.name === 'BATTERY_LOW') return this.battery <= this.fig.batteryLowClear;
    return false;
  }

  private latched(): boolean {
    for (const f of this.faults.values()) if (f.def.severity === 'ERROR' || f.def.severity === 'FATAL') return true;
    return false;
  }

  private faultFlags(): number {
    let flags = this.endpoint.linkLost ? LINK_LOST_FLAG : 0;
    for (const f of this.faults.values()) flags |= f.def.flag;
    return flags;
  }

  private faultClear(code: number): Reply {
    if (code === 0xffff) {
      let persists = false;
      for (const [c, f] of this.faults) {
        if (f.def.severity !== 'ERROR') continue;
        if (this.causePersists(f.def)) persists = true;
        else this.faults.delete(c);
      }
      return { result: persists ? 'BAD_STATE' : 'OK' };
    }
    const f = this.faults.get(code);
    if (!f) return { result: 'OK' };
    if (f.def.severity === 'FATAL') return { result: 'FAULT_ACTIVE' };
    if (this.causePersists(f.def)) return { result: 'BAD_STATE' };
    this.faults.delete(code);
    return { result: 'OK' };
  }

  // ------------------------------------------------------------------ link

  linkLost(now: number, _reason: LinkLossReason): void {
    // Section 11: finish the active segment (its cells are reserved for us), drop the queued
    // one, let a lift movement complete, hold, stop writing tags.
    this.lostAt = { x: this.x, y: this.y };
    this.queued = undefined;
    this.writeMode = 'OFF';
    if (this.motion === 'PAUSED' || !this.active) this.hold();
    else this.holdAfterSegment = true;
    this.telemetry(now);
  }

  welcomed(now: number, afterLoss: boolean): void {
    if (afterLoss && this.lostAt) {
      const def = fault('LINK_LOST');
      this.endpoint.sendReliable({ type: 'FAULT', code: def.code, severity: def.severity, fault_state: 'RAISED', x: this.lostAt.x, y: this.lostAt.y, detail: 0 });
      this.lostAt = undefined;
    }
    // Spread the bots' telemetry over the period instead of all in one burst.
    this.nextTelemetryAt = now + this.rng.next() * this.endpoint.telemetryPeriodMs;
    this.lastSignature = '';
  }

  private telemetry(now: number): void {
    if (!this.endpoint.everWelcomed) return;
    const step = this.active?.step ? this.active.index : 255;
    const msg: Message = {
      type: 'TELEMETRY', x: this.x, y: this.y, heading: this.heading, lift: this.lift, carrier: this.carrier !== undefined,
      charging: this.charging, motion: this.motion, battery: Math.round(this.battery), faults: this.faultFlags(),
      segment: this.segmentId, step,
    };
    const signature = `${msg.x},${msg.y},${msg.heading},${msg.lift},${msg.carrier},${msg.charging},${msg.motion},${msg.faults},${msg.segment},${msg.step}`;
    const periodic = now >= this.nextTelemetryAt;
    const changed = signature !== this.lastSignature && now - this.lastTelemetryAt >= EXTRA_TELEMETRY_GAP_MS;
    if (!periodic && !changed) return;
    if (periodic) this.nextTelemetryAt = Math.max(this.nextTelemetryAt + this.endpoint.telemetryPeriodMs, now + 1);
    this.lastSignature = signature;
    this.lastTelemetryAt = now;
    this.endpoint.sendUnreliable(msg);
  }

  // ------------------------------------------------------------------ commands

  command(frame: Frame, now: number): Reply {
    const m = frame.message;
    switch (m.type) {
      case 'SEGMENT':
        return this.segment(m, now);
      case 'STOP':
        this.stop(m.mode, now);
        return { result: 'OK' };
      case 'PAUSE':
        if (this.motion === 'PAUSED') return { result: 'OK' };
        if (this.motion !== 'MOVING') return { result: 'BAD_STATE' };
        if (betweenCells(this.active?.step, now)) this.pauseRequested = true;
        else this.pauseNow(now);
        return { result: 'OK' };
      case 'RESUME':
        return this.resume(now);
      case 'LIFT':
      case 'LOWER':
        return this.liftCommand(m.type, now);
      case 'CHARGE':
        if (!this.world.isCharger(this.x, this.y)) return { result: 'NO_CHARGER' };
        if (this.motion !== 'IDLE' && this.motion !== 'HOLDING') return { result: 'BAD_STATE' };
        this.charging = this.battery < m.target;
        this.chargeTarget = m.target;
        return { result: 'OK' };
      case 'UNCHARGE':
        this.charging = false;
        return { result: 'OK' };
      case 'FAULT_CLEAR':
        return this.faultClear(m.code);
      case 'RFID_READ':
        return this.rfidRead(m.target, m.offset, m.length, now);
      case 'RFID_CHECK': {
        if (betweenCells(this.active?.step, now)) return { result: 'BAD_STATE' };
        const tag = this.tagFor(m.target);
        if (!tag) return { result: 'RFID_NO_TAG' };
        if (m.offset + m.expect.length > TAG_MEMORY) return { result: 'INVALID', detail: 1 };
        return { result: tag.memory.subarray(m.offset, m.offset + m.expect.length).equals(Buffer.from(m.expect)) ? 'OK' : 'RFID_MISMATCH' };
      }
      case 'RFID_WRITE': {
        if (this.writeMode === 'OFF') return { result: 'RFID_WRITE_DISABLED' };
        if (betweenCells(this.active?.step, now)) return { result: 'BAD_STATE' };
        const tag = this.tagFor(m.target);
        if (!tag) return { result: 'RFID_NO_TAG' };
        if (m.offset + m.data.length > TAG_MEMORY) return { result: 'INVALID', detail: 1 };
        tag.memory.set(m.data, m.offset);
        return { result: 'OK' };
      }
      case 'RFID_WRITE_MODE':
        this.writeMode = m.mode;
        return { result: 'OK' };
      default:
        return { result: 'UNSUPPORTED' };
    }
  }

  private segment(m: Segment, now: number): Reply {
    if (this.latched()) return { result: 'FAULT_ACTIVE' };
    if (this.lift === 'LIFTING' || this.lift === 'LOWERING' || this.charging) return { result: 'BAD_STATE' };
    if (this.battery < this.fig.batteryReserve) return { result: 'LOW_BATTERY' };
    const busy = this.active !== undefined;
    if (busy && this.queued) return { result: 'BUSY' };
    const from = busy ? segmentEnd(this.active!.msg.x, this.active!.msg.y, this.active!.msg.steps) : { x: this.x, y: this.y };
    if (m.x !== from.x || m.y !== from.y) return { result: 'WRONG_POSITION' };
    const bad = invalidStep(m.x, m.y, m.steps);
    if (bad >= 0) return { result: 'INVALID', detail: bad };
    if (busy) {
      this.queued = m;
    } else {
      this.active = { msg: m, t0: now, shift: 0, index: 0, prevEnd: now, step: undefined };
      this.segmentId = m.segment;
      this.motion = 'MOVING';
    }
    return { result: 'OK' };
  }

  private resume(now: number): Reply {
    if (this.motion === 'MOVING') {
      this.pauseRequested = false;
      return { result: 'OK' };
    }
    if (this.motion !== 'PAUSED' || !this.active) return { result: 'BAD_STATE' };
    const pause = Math.max(0, now - this.pausedAt);
    const run = this.active;
    run.shift += pause;
    const step = run.step;
    if (step) {
      step.nominalEnd += pause;
      const turnLeft = Math.max(0, step.turnEnd - this.pausedAt);
      step.turnEnd = now + turnLeft;
      if (step.heading !== undefined) replan(step, step.turnEnd, this.fig);
      else step.end = step.nominalEnd;
    }
    this.motion = 'MOVING';
    return { result: 'OK' };
  }

  private liftCommand(type: 'LIFT' | 'LOWER', now: number): Reply {
    if (this.motion === 'MOVING') return { result: 'BAD_STATE' };
    if (this.latched()) return { result: 'FAULT_ACTIVE' };
    if (this.lift === 'LIFTING' || this.lift === 'LOWERING') return { result: 'BAD_STATE' };
    if (type === 'LIFT') {
      if (this.lift === 'UP') return { result: 'OK' };
      if (this.world.carrierAt(this.x, this.y) === undefined) return { result: 'NO_CARRIER' };
      this.lift = 'LIFTING';
    } else {
      if (this.lift === 'DOWN') return { result: 'OK' };
      this.lift = 'LOWERING';
    }
    this.liftUntil = now + this.fig.liftMs;
    return { result: 'OK' };
  }

  private rfidRead(target: 'FLOOR' | 'CARRIER', offset: number, length: number, now: number): Reply {
    const empty = Buffer.alloc(0);
    const answer = (result: 'OK' | 'RFID_NO_TAG' | 'BAD_STATE' | 'INVALID', tag?: Tag): Reply => ({
      message: { type: 'RFID_DATA', target, result, uid: tag?.uid ?? empty, data: result === 'OK' && tag ? tag.memory.subarray(offset, offset + length) : empty },
    });
    if (betweenCells(this.active?.step, now)) return answer('BAD_STATE');
    const tag = this.tagFor(target);
    if (!tag) return answer('RFID_NO_TAG');
    if (offset + length > TAG_MEMORY) return answer('INVALID');
    return answer('OK', tag);
  }
}
