/**
 * The bot link of one serial line (firmware-protocol/PROTOCOL.md), run by the C++ addon on its
 * own thread: framing, CRC, sessions, sequence numbers, acknowledgements, retransmission with
 * backoff, duplicate suppression, heartbeats and silence supervision. The serial port stays in
 * JS: the link hands bytes to `write`, and the port's data goes to `receive`. Messages have the
 * shapes of the TypeScript codec (src/link/protocol/messages.ts). docs/native.md, "The bot link".
 */
import type {
  Charge,
  FaultClear,
  Fault,
  Hello,
  LedSequence,
  Lift,
  Lower,
  Pause,
  Result,
  Resume,
  RfidCheck,
  RfidData,
  RfidRead,
  RfidWrite,
  RfidWriteModeMsg,
  Segment,
  Stop,
  Telemetry,
  Uncharge,
} from '../link/protocol/messages.js';
import { addon } from './addon.js';

/** The messages the brain sends to a node; each is delivered reliably (ack_req). */
export type Command =
  | FaultClear
  | Segment
  | Stop
  | Pause
  | Resume
  | Lift
  | Lower
  | Charge
  | Uncharge
  | RfidRead
  | RfidCheck
  | RfidWrite
  | RfidWriteModeMsg
  | LedSequence;

/** What nodes send that reaches JS (ACKs are turned into `acked` events). */
export type NodeMessage = Hello | Telemetry | Fault | RfidData;

export type LinkEvent =
  /** A HELLO, a TELEMETRY, a FAULT (once, however often the node retransmits it) or an unsolicited RFID_DATA. */
  | { kind: 'message'; node: number; message: NodeMessage }
  /** welcomed: acknowledged our WELCOME after its HELLO; heard: an offline node spoke again without having lost the link itself. */
  | { kind: 'online'; node: number; reason: 'welcomed' | 'heard' }
  /** silent: nothing for linkTimeoutMs; gave_up: a command went unacknowledged; hello: the node rebooted or lost the link. */
  | { kind: 'offline'; node: number; reason: 'silent' | 'gave_up' | 'hello' }
  /** The node accepted or refused the command (`result`); for RFID_READ, `message` is its RFID_DATA. */
  | { kind: 'acked'; node: number; id: number; result: Result; detail: number; transmissions: number; rttMs: number; message?: RfidData }
  /**
   * Not delivered: gave_up after maxTransmissions, offline (node lost or unknown), hello (node
   * reset its state), queue_full (maxQueuedCommands of ours already wait for the node; failed at
   * once and never sent).
   */
  | { kind: 'failed'; node: number; id: number; reason: 'gave_up' | 'offline' | 'hello' | 'queue_full' };

export interface LinkOptions {
  /** Bytes for the line, in one Buffer per batch (whole frames). Called on the JS thread. */
  write(bytes: Buffer): void;
  /** Events in the order they happened, batched. Called on the JS thread. */
  onEvent(events: LinkEvent[]): void;
  /** PROTOCOL.md section 10; defaults 250, 1000, 60, 480, 5, 20 and 100. */
  heartbeatPeriodMs?: number;
  linkTimeoutMs?: number;
  ackTimeoutMs?: number;
  ackTimeoutMaxMs?: number;
  maxTransmissions?: number;
  retransmitJitterPercent?: number;
  /** Sent to nodes in WELCOME (50..1000). */
  telemetryPeriodMs?: number;
  /** Commands per node, the one in flight included (1..4096, default 32); more fail at once with `queue_full`. */
  maxQueuedCommands?: number;
  /** Default: random per link (a controller start is a new session). */
  controllerSession?: number;
  /** Seeds the jitter (and the session when not given); default random. */
  seed?: number;
}

export interface NodeStats {
  address: number;
  online: boolean;
  session: number;
  /** commands waiting, the one in flight included */
  queued: number;
  framesIn: number;
  lastHeardMsAgo: number;
}

export interface LinkStats {
  controllerSession: number;
  bytesIn: number;
  bytesOut: number;
  /** good frames decoded / frames written */
  framesIn: number;
  framesOut: number;
  /** frames (or bytes, for inboxOverflowBytes) dropped, by kind: PROTOCOL.md section 5, then the link's own */
  dropped: {
    oversize: number;
    framing: number;
    short: number;
    crc: number;
    version: number;
    length: number;
    type: number;
    payload: number;
    /** not from a node address, or not addressed to the controller */
    address: number;
    /** an acknowledgement matching nothing in flight, or a type nodes do not send */
    unexpected: number;
    inboxOverflowBytes: number;
  };
  retransmits: number;
  /** retransmitted HELLO/FAULT frames already accepted: acknowledged again, not delivered again */
  duplicates: number;
  heartbeats: number;
  versionRejected: number;
  /** queueFull: of `failed`, the commands refused because the node's queue was full */
  commands: { sent: number; acked: number; failed: number; queueFull: number };
  /** round trips of commands acknowledged at the first transmission */
  rtt: { samples: number; p50Ms: number; p99Ms: number; maxMs: number };
  nodes: NodeStats[];
  /** CPU time (user + system) used by the link's thread ("wh-link"): decoding, timers, encoding */
  threadCpuMs: number;
  /** CPU time on the JS thread turning the link's output into Buffers and event objects (the callbacks excluded) */
  deliverCpuMs: number;
}

export interface Link {
  /** Bytes read from the line, in any chunking. Ignored after close(). */
  receive(bytes: Uint8Array): void;
  /**
   * Queues a command for a node (FIFO per node, one in flight, at most maxQueuedCommands) and
   * returns its id; its outcome comes as an `acked` or `failed` event with that id. Throws on a
   * malformed message, a value out of its range, a bad address, or after close().
   */
  send(node: number, message: Command): number;
  stats(): LinkStats;
  /** Stops the link's thread; no callbacks after it returns. Idempotent. */
  close(): void;
}

/** The addon's class (native/src/link_binding.cc). */
export type NativeLinkClass = new (options: LinkOptions) => Link;

/** Starts the link of one serial line: its thread sends the first HEARTBEAT at once. */
export function createLink(options: LinkOptions): Link {
  return new (addon().Link)(options);
}
