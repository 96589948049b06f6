// The bot link's messages as TypeScript types. The wire layout lives in one place,
// firmware-protocol/messages.json, which the codec (codec.ts) reads at runtime; these types
// are its typed face. test/unit/link/protocol.test.ts checks that every message here has exactly the
// table's fields, so the two cannot drift apart unnoticed.

export type NodeKind = 'BOT' | 'BALCONY_LED';
export type Heading = 'N' | 'E' | 'S' | 'W';
export type LiftState = 'DOWN' | 'UP' | 'LIFTING' | 'LOWERING';
export type Motion = 'IDLE' | 'MOVING' | 'PAUSED' | 'HOLDING';
export type StepAction = 'WAIT' | 'MOVE_N' | 'MOVE_E' | 'MOVE_S' | 'MOVE_W';
export type StopMode = 'END_OF_STEP' | 'NOW';
export type RfidTarget = 'FLOOR' | 'CARRIER';
export type RfidWriteMode = 'OFF' | 'MANUAL' | 'AUTO_CELLS';
export type Severity = 'INFO' | 'WARNING' | 'ERROR' | 'FATAL';
export type FaultState = 'RAISED' | 'CLEARED';
export type Result =
  | 'OK'
  | 'BUSY'
  | 'BAD_STATE'
  | 'WRONG_POSITION'
  | 'FAULT_ACTIVE'
  | 'LOW_BATTERY'
  | 'NOT_WELCOMED'
  | 'VERSION_UNSUPPORTED'
  | 'UNSUPPORTED'
  | 'INVALID'
  | 'NO_CARRIER'
  | 'NO_CHARGER'
  | 'RFID_NO_TAG'
  | 'RFID_MISMATCH'
  | 'RFID_WRITE_FAILED'
  | 'RFID_WRITE_DISABLED';

export interface Hello {
  type: 'HELLO';
  node_kind: NodeKind;
  proto_min: number;
  proto_max: number;
  fw_major: number;
  fw_minor: number;
  fw_patch: number;
  hw_rev: number;
  session: number;
}
export interface Welcome {
  type: 'WELCOME';
  version: number;
  telemetry_period_ms: number;
  controller_session: number;
  node_session: number;
}
export interface Heartbeat {
  type: 'HEARTBEAT';
  controller_session: number;
  uptime_ms: number;
}
export interface Ack {
  type: 'ACK';
  acked_type: MessageType;
  result: Result;
  detail: number;
}
export interface Telemetry {
  type: 'TELEMETRY';
  x: number;
  y: number;
  heading: Heading;
  lift: LiftState;
  carrier: boolean;
  charging: boolean;
  motion: Motion;
  /** permille, 0..1000 */
  battery: number;
  /** fault_flags bitmask, 0..0x0fff */
  faults: number;
  segment: number;
  /** 255 = no step executing */
  step: number;
}
export interface Fault {
  type: 'FAULT';
  code: number;
  severity: Severity;
  fault_state: FaultState;
  x: number;
  y: number;
  detail: number;
}
export interface FaultClear {
  type: 'FAULT_CLEAR';
  code: number;
}
export interface Step {
  action: StepAction;
  cells: number;
  duration_ms: number;
}
export interface Segment {
  type: 'SEGMENT';
  segment: number;
  start_delay_ms: number;
  x: number;
  y: number;
  steps: Step[];
}
export interface Stop {
  type: 'STOP';
  mode: StopMode;
}
export interface Pause {
  type: 'PAUSE';
}
export interface Resume {
  type: 'RESUME';
}
export interface Lift {
  type: 'LIFT';
}
export interface Lower {
  type: 'LOWER';
}
export interface Charge {
  type: 'CHARGE';
  /** permille, 100..1000 */
  target: number;
}
export interface Uncharge {
  type: 'UNCHARGE';
}
export interface RfidRead {
  type: 'RFID_READ';
  target: RfidTarget;
  offset: number;
  length: number;
}
export interface RfidData {
  type: 'RFID_DATA';
  target: RfidTarget;
  result: Result;
  uid: Uint8Array;
  data: Uint8Array;
}
export interface RfidCheck {
  type: 'RFID_CHECK';
  target: RfidTarget;
  offset: number;
  expect: Uint8Array;
}
export interface RfidWrite {
  type: 'RFID_WRITE';
  target: RfidTarget;
  offset: number;
  data: Uint8Array;
}
export interface RfidWriteModeMsg {
  type: 'RFID_WRITE_MODE';
  mode: RfidWriteMode;
}
export interface LedStep {
  r: number;
  g: number;
  b: number;
  duration_ms: number;
}
export interface LedSequence {
  type: 'LED_SEQUENCE';
  channel: number;
  /** 0 = until replaced */
  repeat: number;
  steps: LedStep[];
}

export type Message =
  | Hello
  | Welcome
  | Heartbeat
  | Ack
  | Telemetry
  | Fault
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
  | RfidData
  | RfidCheck
  | RfidWrite
  | RfidWriteModeMsg
  | LedSequence;

export type MessageType = Message['type'];
export type MessageOf<T extends MessageType> = Extract<Message, { type: T }>;

export interface FrameFlags {
  /** the sender wants an acknowledgement */
  ack_req: boolean;
  /** the header's ack field acknowledges the peer's frame with that seq */
  is_ack: boolean;
  /** a repeat of an earlier frame */
  retransmit: boolean;
}

export interface Frame<M extends Message = Message> {
  version: number;
  flags: FrameFlags;
  src: number;
  dst: number;
  seq: number;
  ack: number;
  message: M;
}

/** What encodeFrame needs: version defaults to 1, flags to none, seq and ack to 0. */
export interface FrameInput<M extends Message = Message> {
  version?: number;
  flags?: Partial<FrameFlags>;
  src: number;
  dst: number;
  seq?: number;
  ack?: number;
  message: M;
}

export const ADDRESS = {
  CONTROLLER: 0x0000,
  BOT_FIRST: 0x0001,
  BOT_LAST: 0x0fff,
  LED_FIRST: 0x1000,
  LED_LAST: 0x10ff,
  GATEWAY: 0xfffe,
  BROADCAST: 0xffff,
} as const;

export const DECODE_ERROR_KINDS = ['oversize', 'framing', 'short', 'crc', 'version', 'length', 'type', 'payload'] as const;
export type DecodeErrorKind = (typeof DECODE_ERROR_KINDS)[number];
