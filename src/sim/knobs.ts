/**
 * Fault injection knobs of a simulated level's radio link, and how they are read from the
 * environment. They act in the gateway, on the radio side of the serial line, so the
 * controller sees what a noisy radio does to it: damaged bytes its decoder must count and
 * skip, frames that never arrive (its retransmission must cover them), late frames, and nodes
 * that fall silent.
 */

import { TIMING } from './figures.js';

export interface LinkKnobs {
  /** probability that a byte of a frame is damaged (XOR with a random non-zero value), both directions */
  corrupt_byte_rate: number;
  /** probability that a whole frame is lost, both directions */
  drop_frame_rate: number;
  /** one-way delay added to every frame, ms (order is kept) */
  latency_ms: number;
  /** node addresses (bot ids, 0x1000 + balcony id) whose radio is dead: nothing to or from them passes */
  silent_nodes: number[];
  /**
   * where damage, loss and latency apply: `uplink` (nodes to controller), `downlink`, or
   * `both`. One direction only keeps the other clean, e.g. to watch the controller's decoder
   * count damage while the bots still hear every heartbeat.
   */
  direction: LinkDirection;
  /**
   * how long a node hears nothing from the controller before it takes the link for lost, ms:
   * the protocol's link_timeout_ms (1,000) unless raised for noise far beyond a real radio's,
   * as the controller's own limit can be (test/unit/sim/link-sim.test.ts, 5 % of bytes damaged)
   */
  node_link_timeout_ms: number;
}

export type LinkDirection = 'both' | 'uplink' | 'downlink';

export const DEFAULT_KNOBS: LinkKnobs = {
  corrupt_byte_rate: 0, drop_frame_rate: 0, latency_ms: 0, silent_nodes: [], direction: 'both', node_link_timeout_ms: TIMING.link_timeout_ms,
};

/** Checks and completes a partial knob set; throws a RangeError naming the bad knob. */
export function mergeKnobs(base: LinkKnobs, change: Partial<LinkKnobs>): LinkKnobs {
  const out: LinkKnobs = { ...base, ...change, silent_nodes: [...(change.silent_nodes ?? base.silent_nodes)] };
  for (const k of ['corrupt_byte_rate', 'drop_frame_rate'] as const) {
    if (typeof out[k] !== 'number' || !(out[k] >= 0 && out[k] <= 1)) throw new RangeError(`knob ${k}: ${String(out[k])} is not in 0..1`);
  }
  if (!Number.isInteger(out.latency_ms) || out.latency_ms < 0 || out.latency_ms > 10_000) {
    throw new RangeError(`knob latency_ms: ${String(out.latency_ms)} is not an integer in 0..10000`);
  }
  if (!out.silent_nodes.every((a) => Number.isInteger(a) && a >= 1 && a <= 0x10ff)) {
    throw new RangeError(`knob silent_nodes: ${JSON.stringify(out.silent_nodes)} are not node addresses`);
  }
  if (!Number.isInteger(out.node_link_timeout_ms) || out.node_link_timeout_ms < TIMING.link_timeout_ms || out.node_link_timeout_ms > 60_000) {
    throw new RangeError(`knob node_link_timeout_ms: ${String(out.node_link_timeout_ms)} is not an integer in ${TIMING.link_timeout_ms}..60000`);
  }
  if (!['both', 'uplink', 'downlink'].includes(out.direction)) throw new RangeError(`knob direction: ${String(out.direction)} is not both, uplink or downlink`);
  return out;
}

/**
 * Knobs from WAREHOUSE_SIM_CORRUPT_BYTE_RATE, WAREHOUSE_SIM_DROP_FRAME_RATE,
 * WAREHOUSE_SIM_LATENCY_MS, WAREHOUSE_SIM_SILENT_NODES (comma-separated addresses),
 * WAREHOUSE_SIM_DIRECTION and WAREHOUSE_SIM_NODE_LINK_TIMEOUT_MS, so a
 * technician can run the demo over a bad radio without code.
 */
export function knobsFromEnv(env: NodeJS.ProcessEnv): Partial<LinkKnobs> {
  const out: Partial<LinkKnobs> = {};
  const num = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new RangeError(`${name}: ${v} is not a number`);
    return n;
  };
  const corrupt = num('WAREHOUSE_SIM_CORRUPT_BYTE_RATE');
  if (corrupt !== undefined) out.corrupt_byte_rate = corrupt;
  const drop = num('WAREHOUSE_SIM_DROP_FRAME_RATE');
  if (drop !== undefined) out.drop_frame_rate = drop;
  const latency = num('WAREHOUSE_SIM_LATENCY_MS');
  if (latency !== undefined) out.latency_ms = latency;
  const nodeTimeout = num('WAREHOUSE_SIM_NODE_LINK_TIMEOUT_MS');
  if (nodeTimeout !== undefined) out.node_link_timeout_ms = nodeTimeout;
  const silentList = env.WAREHOUSE_SIM_SILENT_NODES;
  if (silentList) out.silent_nodes = silentList.split(',').map((s) => Number(s.trim()));
  const direction = env.WAREHOUSE_SIM_DIRECTION;
  if (direction) out.direction = direction as LinkDirection;
  return out;
}
