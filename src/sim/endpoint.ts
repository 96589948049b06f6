/**
 * The protocol side of one simulated node (bot or balcony LED controller), PROTOCOL.md
 * sections 8, 9 and 11: its session, the seq counter towards the controller, HELLO/WELCOME,
 * stop-and-wait reliable sending with retransmission and give-up, duplicate suppression of
 * the controller's retransmissions, and link-loss detection. The node model behind it only
 * decides what a command does; everything about getting frames across lives here.
 */
import { ADDRESS, type Frame, type FrameInput, type Message, type MessageType, type NodeKind, type Result } from '../link/protocol/messages.js';
import { TIMING } from './figures.js';
import type { Random } from './random.js';

/** What a node answers to an accepted command: an ACK result, or its own reply message (RFID_DATA). */
export type Reply = { result: Result; detail?: number } | { message: Message };

export interface NodeModel {
  /** A command from the controller while welcomed; duplicates never get here. */
  command(frame: Frame, now: number): Reply;
  /** The link was lost (silence, a reliable frame given up, or a new controller session). */
  linkLost(now: number, reason: LinkLossReason): void;
  /** A WELCOME for this session arrived; `afterLoss` when it ends a link loss. */
  welcomed(now: number, afterLoss: boolean): void;
}

/**
 * A command the node model accepted and executed (answered OK; duplicates and refusals never
 * are), as the controller's tests check them: exactly once and in the order sent.
 */
export interface ExecutedCommand {
  type: MessageType;
  /** the command's own identifier where it has one: SEGMENT's segment, LED_SEQUENCE's channel */
  ref?: number;
}

/** Executed commands kept per node (the oldest go first); `counters.commands` counts them all. */
export const EXECUTED_LOG_LENGTH = 256;

/** HELLO retry after VERSION_UNSUPPORTED (PROTOCOL.md 9). */
const VERSION_RETRY_MS = 10_000;

export type LinkLossReason = 'silence' | 'gave_up' | 'controller_session';

export interface EndpointOptions {
  address: number;
  kind: NodeKind;
  rng: Random;
  /** Sends one frame towards the controller (through the gateway). */
  send: (frame: FrameInput) => void;
  fw?: { major: number; minor: number; patch: number; hw_rev: number };
}

interface Outstanding {
  message: Message;
  seq: number;
  transmissions: number;
  timeoutMs: number;
  timer: NodeJS.Timeout;
}

export interface EndpointCounters {
  hellos: number;
  welcomes: number;
  /** commands the model accepted and executed (the `executed` log) */
  commands: number;
  /** commands the model answered with a refusal (BUSY, WRONG_POSITION, …): not executed */
  refused: number;
  duplicates: number;
  retransmissions: number;
  gave_up: number;
  link_losses: number;
  not_welcomed: number;
}

export class NodeEndpoint {
  readonly address: number;
  readonly session: number;
  readonly counters: EndpointCounters = {
    hellos: 0, welcomes: 0, commands: 0, refused: 0, duplicates: 0, retransmissions: 0, gave_up: 0, link_losses: 0, not_welcomed: 0,
  };
  /** the last EXECUTED_LOG_LENGTH commands executed, oldest first */
  readonly executed: ExecutedCommand[] = [];
  /** a WELCOME for this session has been received since boot (telemetry may flow) */
  everWelcomed = false;
  /** welcomed and not lost since: commands are accepted */
  welcomed = false;
  linkLost = false;
  telemetryPeriodMs = TIMING.telemetry_period_ms;
  private controllerSession: number | undefined;
  private lastHeard = 0;
  /** Silence from the controller after which the link is lost (the protocol's, unless a knob raised it). */
  linkTimeoutMs = TIMING.link_timeout_ms;
  private seq = 0;
  private outstanding: Outstanding | undefined;
  private readonly queue: Message[] = [];
  private helloRetry: NodeJS.Timeout | undefined;
  /** the last accepted ack_req frame's seq and the reply sent for it (section 8, duplicates) */
  private lastAccepted: { seq: number; reply: FrameInput } | undefined;
  private model: NodeModel | undefined;
  private stopped = false;

  constructor(private readonly options: EndpointOptions) {
    this.address = options.address;
    this.session = options.rng.int(1, 0xffffffff);
  }

  /** Boots the node: HELLO until a WELCOME arrives. */
  start(model: NodeModel): void {
    this.model = model;
    this.sendHello();
  }

  stop(): void {
    this.stopped = true;
    if (this.outstanding) clearTimeout(this.outstanding.timer);
    this.outstanding = undefined;
    clearTimeout(this.helloRetry);
  }

  /** Called every tick: detects silence from the controller. */
  tick(now: number): void {
    if (this.welcomed && now - this.lastHeard > this.linkTimeoutMs) this.loseLink(now, 'silence');
  }

  /** Queues a reliable message (FAULT) for the controller; sent in order, one at a time. */
  sendReliable(message: Message): void {
    this.queue.push(message);
    this.pump();
  }

  /** Sends an unreliable message (TELEMETRY); it gets the next seq like every frame. */
  sendUnreliable(message: Message): void {
    this.options.send({ src: this.address, dst: ADDRESS.CONTROLLER, seq: this.nextSeq(), message });
  }

  /** A frame routed to this node (its address or broadcast). */
  receive(frame: Frame, now: number): void {
    if (this.stopped || frame.src !== ADDRESS.CONTROLLER) return;
    if (frame.dst !== this.address && frame.dst !== ADDRESS.BROADCAST) return;
    this.lastHeard = now;
    const m = frame.message;
    if (m.type === 'HEARTBEAT') {
      if (this.welcomed && m.controller_session !== this.controllerSession) this.loseLink(now, 'controller_session');
      this.helloIfLost();
      return;
    }
    if (m.type === 'WELCOME') {
      this.onWelcome(frame as Frame<typeof m>, now);
      return;
    }
    if (frame.flags.is_ack && m.type === 'ACK') {
      const o = this.outstanding;
      if (o && frame.ack === o.seq && m.acked_type === o.message.type) {
        this.settle();
        // No common version: stay stopped and ask again every 10 s (section 9).
        if (m.acked_type === 'HELLO' && m.result === 'VERSION_UNSUPPORTED') this.helloRetry = setTimeout(() => this.sendHello(), VERSION_RETRY_MS);
      }
      return;
    }
    this.helloIfLost();
    if (!frame.flags.ack_req) return; // nothing else the controller sends unacknowledged
    if (frame.flags.retransmit && this.lastAccepted?.seq === frame.seq) {
      // A retransmission of what we already did: same answer, not done twice (section 8).
      this.counters.duplicates++;
      this.options.send(this.lastAccepted.reply);
      return;
    }
    let reply: Reply;
    if (!this.welcomed) {
      this.counters.not_welcomed++;
      reply = { result: 'NOT_WELCOMED' };
    } else {
      reply = this.model!.command(frame, now);
      // Logged once the model has accepted it: a refusal (BUSY, WRONG_POSITION…) did nothing.
      if (accepted(reply)) this.logExecuted(m);
      else this.counters.refused++;
    }
    this.answer(frame.seq, m.type, reply);
  }

  private logExecuted(m: Message): void {
    this.counters.commands++;
    this.executed.push(executedOf(m));
    if (this.executed.length > EXECUTED_LOG_LENGTH) this.executed.shift();
  }

  private answer(seq: number, type: MessageType, reply: Reply): void {
    const message: Message = 'message' in reply ? reply.message : { type: 'ACK', acked_type: type, result: reply.result, detail: reply.detail ?? 0 };
    const out: FrameInput = { src: this.address, dst: ADDRESS.CONTROLLER, seq: this.nextSeq(), ack: seq, flags: { is_ack: true }, message };
    this.lastAccepted = { seq, reply: out };
    this.options.send(out);
  }

  private onWelcome(frame: Frame<Extract<Message, { type: 'WELCOME' }>>, now: number): void {
    const m = frame.message;
    if (m.node_session !== this.session) return; // it answers an earlier boot (section 9)
    if (frame.flags.retransmit && this.lastAccepted?.seq === frame.seq && this.controllerSession === m.controller_session) {
      this.counters.duplicates++;
      this.options.send(this.lastAccepted.reply);
      return;
    }
    if (m.controller_session !== this.controllerSession) this.lastAccepted = undefined; // the peer's session changed
    // The WELCOME is also the HELLO's acknowledgement, and one for this session answers every
    // HELLO of it: a later HELLO (sent after giving up on an earlier one whose WELCOME was
    // still on its way) must not go on, or the controller would take it for a new link loss.
    if (this.outstanding?.message.type === 'HELLO') this.settle();
    clearTimeout(this.helloRetry);
    this.helloRetry = undefined;
    const afterLoss = this.linkLost;
    this.counters.welcomes++;
    this.controllerSession = m.controller_session;
    this.telemetryPeriodMs = m.telemetry_period_ms;
    this.welcomed = true;
    this.everWelcomed = true;
    this.linkLost = false;
    this.answer(frame.seq, 'WELCOME', { result: 'OK' });
    this.model!.welcomed(now, afterLoss);
    this.pump();
  }

  private loseLink(now: number, reason: LinkLossReason): void {
    if (!this.welcomed) return;
    this.welcomed = false;
    this.linkLost = true;
    this.counters.link_losses++;
    if (this.outstanding) {
      clearTimeout(this.outstanding.timer);
      this.outstanding = undefined;
    }
    this.model!.linkLost(now, reason);
  }

  /** After a loss, the first frame heard from the controller starts a HELLO (section 11, 4). */
  private helloIfLost(): void {
    if (this.linkLost && !this.welcomed && this.outstanding?.message.type !== 'HELLO' && this.helloRetry === undefined) this.sendHello();
  }

  private sendHello(): void {
    if (this.stopped) return;
    this.helloRetry = undefined;
    if (this.outstanding) {
      // HELLO goes first; an unsent FAULT waits for the WELCOME.
      clearTimeout(this.outstanding.timer);
      if (this.outstanding.message.type !== 'HELLO') this.queue.unshift(this.outstanding.message);
      this.outstanding = undefined;
    }
    const fw = this.options.fw ?? { major: 1, minor: 0, patch: 0, hw_rev: 1 };
    this.counters.hellos++;
    this.transmit({
      type: 'HELLO', node_kind: this.options.kind, proto_min: 1, proto_max: 1,
      fw_major: fw.major, fw_minor: fw.minor, fw_patch: fw.patch, hw_rev: fw.hw_rev, session: this.session,
    });
  }

  private pump(): void {
    if (this.stopped || this.outstanding || !this.welcomed) return;
    const next = this.queue.shift();
    if (next) this.transmit(next);
  }

  private transmit(message: Message): void {
    const o: Outstanding = { message, seq: this.nextSeq(), transmissions: 0, timeoutMs: TIMING.ack_timeout_ms, timer: undefined as unknown as NodeJS.Timeout };
    this.outstanding = o;
    this.transmitAgain(o);
  }

  private transmitAgain(o: Outstanding): void {
    const retransmit = o.transmissions > 0;
    if (retransmit) this.counters.retransmissions++;
    o.transmissions++;
    this.options.send({ src: this.address, dst: ADDRESS.CONTROLLER, seq: o.seq, flags: { ack_req: true, retransmit }, message: o.message });
    const jitter = 1 + (this.options.rng.next() * TIMING.retransmit_jitter_percent) / 100;
    o.timer = setTimeout(() => this.timedOut(o), o.timeoutMs * jitter);
  }

  private timedOut(o: Outstanding): void {
    if (this.outstanding !== o || this.stopped) return;
    if (o.transmissions < TIMING.max_transmissions) {
      o.timeoutMs = Math.min(o.timeoutMs * 2, TIMING.ack_timeout_max_ms);
      this.transmitAgain(o);
      return;
    }
    this.counters.gave_up++;
    this.outstanding = undefined;
    if (o.message.type === 'HELLO') {
      if (!this.welcomed) this.helloRetry = setTimeout(() => this.sendHello(), TIMING.hello_retry_ms);
      return;
    }
    this.loseLink(performance.now(), 'gave_up');
  }

  private settle(): void {
    if (this.outstanding) clearTimeout(this.outstanding.timer);
    this.outstanding = undefined;
    this.pump();
  }

  private nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq + 1) & 0xff;
    return s;
  }
}

/** The model did what it was told: ACK OK, or an RFID_DATA with result OK. */
function accepted(reply: Reply): boolean {
  if (!('message' in reply)) return reply.result === 'OK';
  return 'result' in reply.message && reply.message.result === 'OK';
}

function executedOf(m: Message): ExecutedCommand {
  if (m.type === 'SEGMENT') return { type: m.type, ref: m.segment };
  if (m.type === 'LED_SEQUENCE') return { type: m.type, ref: m.channel };
  return { type: m.type };
}
