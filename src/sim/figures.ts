/**
 * The simulated hardware's figures: how fast a bot drives, turns and lifts, how its battery
 * drains and charges, and the protocol timings it obeys. One table so docs/simulator.md and
 * the tests quote the same numbers, and so a test can shorten a figure instead of waiting.
 */
import { protocolTable } from '../link/protocol/table.js';
import { BOT_MOTION } from '../domain/site/motion-figures.js';

export interface BotFigures {
  /** fastest time from one cell centre to the next (a 0.6 m cell at 2.4 m/s) */
  cellMs: number;
  /** a 90° heading change before a move in another direction; 180° takes twice this */
  turnMs: number;
  /** LIFTING to UP, and LOWERING to DOWN */
  liftMs: number;
  /** battery drain, permille per second: standing, driving or turning, lifting */
  idleDrainPerS: number;
  moveDrainPerS: number;
  liftDrainPerS: number;
  /** charge rate at a charger, permille per second (compressed: a full charge in 200 s) */
  chargePerS: number;
  /** BATTERY_LOW is raised below this and clears above `lowClear` */
  batteryLow: number;
  batteryLowClear: number;
  /** BATTERY_CRITICAL (ERROR, latched) below this */
  batteryCritical: number;
  /** a SEGMENT is refused with LOW_BATTERY below this */
  batteryReserve: number;
  /** initial battery range, permille; drawn per bot from the seed */
  batteryStartMin: number;
  batteryStartMax: number;
  /** a step ending later than this is reported as SEGMENT_LATE */
  lateMs: number;
}

export const BOT_FIGURES: BotFigures = {
  ...BOT_MOTION,
  idleDrainPerS: 0.02,
  moveDrainPerS: 0.5,
  liftDrainPerS: 1,
  chargePerS: 5,
  batteryLow: 200,
  batteryLowClear: 250,
  batteryCritical: 50,
  batteryReserve: 80,
  batteryStartMin: 600,
  batteryStartMax: 1000,
  lateMs: 200,
};

/** PROTOCOL.md section 10, from messages.json. */
export interface ProtocolTiming {
  telemetry_period_ms: number;
  heartbeat_period_ms: number;
  link_timeout_ms: number;
  ack_deadline_ms: number;
  ack_timeout_ms: number;
  ack_timeout_max_ms: number;
  max_transmissions: number;
  retransmit_jitter_percent: number;
  hello_retry_ms: number;
}

export const TIMING = protocolTable().timing as unknown as ProtocolTiming;

/** How often the simulator advances its bots; motion events are placed on this grid. */
export const TICK_MS = 10;

/** The smallest gap between two telemetry frames sent because something changed. */
export const EXTRA_TELEMETRY_GAP_MS = 20;
