// The controller side of a simulated level as the simulator tests play it: the TypeScript
// codec over the level's transport (serial or TCP), no planner, just frames. Shared by
// test/unit/sim/sim.test.ts, test/unit/sim/sim-hands.test.ts and test/unit/sim/sim-tcp.test.ts.
import { encodeFrame, FrameDecoder } from '../../src/link/protocol/codec.js';
import type { Frame, Message, MessageOf, MessageType, Telemetry } from '../../src/link/protocol/messages.js';
import { createLineTransport, type LineTransport } from '../../src/link/device.js';

export const CONTROLLER_SESSION = 0x0badcafe;

/** The controller side, as small as a test needs: no planner, just frames. */
export class TestController {
  readonly frames: Frame[] = [];
  readonly decoder = new FrameDecoder();
  readonly transport: LineTransport;
  private readonly seq = new Map<number, number>();
  private waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  session = CONTROLLER_SESSION;

  constructor(devicePath: string) {
    this.transport = createLineTransport(devicePath, { onData: (b) => this.onBytes(b), initialBackoffMs: 20, maxBackoffMs: 200 });
  }

  async open(): Promise<void> {
    this.transport.start();
    await this.transport.whenOpen();
  }

  startHeartbeats(): void {
    this.stopHeartbeats();
    const beat = (): void => {
      this.send(0xffff, { type: 'HEARTBEAT', controller_session: this.session, uptime_ms: Math.floor(performance.now() - this.started) });
    };
    beat();
    this.heartbeat = setInterval(beat, 250);
  }

  stopHeartbeats(): void {
    clearInterval(this.heartbeat);
  }

  async close(): Promise<void> {
    this.stopHeartbeats();
    await this.transport.close();
  }

  private onBytes(bytes: Buffer): void {
    for (const f of this.decoder.push(bytes)) {
      this.frames.push(f);
      // Like the real controller: every FAULT is acknowledged, or the node gives up on us.
      if (f.message.type === 'FAULT' && f.flags.ack_req) {
        this.send(f.src, { type: 'ACK', acked_type: 'FAULT', result: 'OK', detail: 0 }, { is_ack: true, ack: f.seq });
      }
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(f)) return true;
        w.resolve(f);
        return false;
      });
    }
  }

  /** The next frame (from now on) matching pred. */
  next(pred: (f: Frame) => boolean): Promise<Frame> {
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  nextOf<T extends MessageType>(src: number, type: T, pred: (m: MessageOf<T>, f: Frame) => boolean = () => true): Promise<Frame<MessageOf<T>>> {
    return this.next((f) => f.src === src && f.message.type === type && pred(f.message as MessageOf<T>, f)) as Promise<Frame<MessageOf<T>>>;
  }

  telemetry(src: number, pred: (m: Telemetry) => boolean = () => true): Promise<Telemetry> {
    return this.nextOf(src, 'TELEMETRY', pred).then((f) => f.message);
  }

  send(dst: number, message: Message, extra: { ack_req?: boolean; is_ack?: boolean; ack?: number; seq?: number; retransmit?: boolean } = {}): number {
    const seq = extra.seq ?? this.seq.get(dst) ?? 0;
    if (extra.seq === undefined) this.seq.set(dst, (seq + 1) & 0xff);
    this.transport.write(encodeFrame({
      src: 0, dst, seq, ack: extra.ack ?? 0, message,
      flags: { ack_req: extra.ack_req ?? false, is_ack: extra.is_ack ?? false, retransmit: extra.retransmit ?? false },
    }));
    return seq;
  }

  /**
   * Sends a reliable command and resolves with the node's answer (ACK or RFID_DATA),
   * retransmitting as PROTOCOL.md 8 says while nothing comes back (the noise tests need it).
   */
  async command(dst: number, message: Message): Promise<Frame> {
    const seq = this.send(dst, message, { ack_req: true });
    const answer = this.next((f) => f.src === dst && f.flags.is_ack && f.ack === seq && f.message.type !== 'WELCOME');
    for (let i = 0; i < 60; i++) {
      const got = await Promise.race([answer, new Promise<undefined>((r) => setTimeout(() => r(undefined), 120))]);
      if (got) return got;
      this.send(dst, message, { ack_req: true, seq, retransmit: true });
    }
    throw new Error(`no answer from ${dst} to ${message.type}`);
  }

  async ack(dst: number, message: Message): Promise<MessageOf<'ACK'>> {
    const f = await this.command(dst, message);
    if (f.message.type !== 'ACK') throw new Error(`expected ACK, got ${f.message.type}`);
    return f.message;
  }

  /** Answers the node's next HELLO (or this one) with WELCOME, and waits for its ACK. */
  async welcome(hello: Frame<MessageOf<'HELLO'>>): Promise<void> {
    const acked = this.nextOf(hello.src, 'ACK', (m) => m.acked_type === 'WELCOME');
    this.send(hello.src, {
      type: 'WELCOME', version: 1, telemetry_period_ms: 100, controller_session: this.session, node_session: hello.message.session,
    }, { ack_req: true, is_ack: true, ack: hello.seq });
    const ack = await acked;
    if (ack.message.result !== 'OK') throw new Error(`WELCOME answered ${ack.message.result}`);
  }
}
