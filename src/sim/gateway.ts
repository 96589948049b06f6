/**
 * One simulated level: its radio gateway on a pseudo-terminal (or a TCP port, as behind a
 * serial-to-Ethernet device server) and the nodes behind it (the
 * level's bots and balcony LED controllers). The gateway is transparent as PROTOCOL.md 1
 * requires: it decodes the controller's frames only to route them to nodes by destination, and
 * passes node frames to the line as they are; the radio between them is where the knobs act.
 */
import { encodeFrame, FrameDecoder, type DecoderCounters } from '../link/protocol/codec.js';
import { ADDRESS, type FrameInput } from '../link/protocol/messages.js';
import type { SiteLevel } from '../domain/site/load.js';
import type { CarrierLayout } from '../domain/site/layout.js';
import { SimBalcony, type BalconySnapshot } from './balcony.js';
import { SimBot, type BotSnapshot, type BotStart } from './bot.js';
import {
  HandRefused, carrierToTake, checkBattery, checkBotCell, checkBotId, checkBotTakeable, checkCarrierCell, checkCarrierId, checkHeading,
} from './hands.js';
import { TICK_MS, type BotFigures } from './figures.js';
import { Impairment, WireSplitter, type ImpairmentCounters } from './impairment.js';
import { mergeKnobs, type LinkKnobs } from './knobs.js';
import { PtyLine, type GatewayLine, type LineCounters } from './line.js';
import type { Random } from './random.js';
import { LevelWorld, type CarrierCell, type CarrierTags } from './world.js';

/** What a level starts with besides its layout's cells and balconies. */
export interface LevelSetup {
  /** the site's carriers (those of other levels are skipped) */
  carriers: CarrierLayout[];
  /** the site-wide carrier tags */
  tags: CarrierTags;
  /** the bots on the level at power-on */
  bots: BotStart[];
  /** bots of the layout that people have taken off the level */
  absent: number[];
  /** opens the gateway's line to the controller; default a pty (PtyLine) */
  openLine?: (onBytes: (bytes: Buffer) => void) => GatewayLine;
}

export interface LevelSnapshot {
  level_id: number;
  path: string;
  knobs: LinkKnobs;
  line: LineCounters;
  /** the gateway's decoder of controller frames */
  decoder: DecoderCounters;
  uplink: ImpairmentCounters;
  downlink: ImpairmentCounters;
  /** frames to or from silent nodes that were swallowed */
  silenced: number;
  /** the bots on the level (not those taken off it) */
  bots: BotSnapshot[];
  /** ids of bots people have taken off the level, ascending */
  absent_bots: number[];
  /** carriers standing on the level's cells, by id (a carrier held up is in its bot's `carrier`) */
  carriers: CarrierCell[];
  balconies: BalconySnapshot[];
}

export class SimLevel {
  readonly id: number;
  readonly bots = new Map<number, SimBot>();
  readonly balconies = new Map<number, SimBalcony>();
  readonly world: LevelWorld;
  /** bots taken off the level by hand, until put on again */
  private readonly absent: Set<number>;
  private knobs: LinkKnobs;
  private line: GatewayLine;
  private readonly openLine: (onBytes: (bytes: Buffer) => void) => GatewayLine;
  private unplugged = false;
  private closed = false;
  private readonly decoder = new FrameDecoder();
  private readonly uplink: Impairment;
  private readonly downlink: Impairment;
  private readonly splitter: WireSplitter;
  private readonly timer: NodeJS.Timeout;
  private silenced = 0;
  private readonly send = (frame: FrameInput): void => this.fromNode(frame);

  constructor(
    level: SiteLevel,
    setup: LevelSetup,
    private readonly figures: BotFigures,
    knobs: LinkKnobs,
    private readonly rng: Random,
  ) {
    this.id = level.id;
    this.knobs = knobs;
    this.absent = new Set(setup.absent);
    this.openLine = setup.openLine ?? ((onBytes) => new PtyLine(onBytes));
    this.line = this.openLine((bytes) => this.splitter.push(bytes));
    this.uplink = new Impairment('uplink', rng.fork(1), () => this.knobs, (wire) => this.line.write(wire));
    this.downlink = new Impairment('downlink', rng.fork(2), () => this.knobs, (wire) => this.route(wire));
    this.splitter = new WireSplitter((wire) => this.downlink.pass(wire));
    this.world = new LevelWorld(level, setup.carriers, setup.tags);
    for (const b of setup.bots) this.bots.set(b.id, this.newBot(b, 0));
    for (const b of level.balconies) this.balconies.set(b.id, new SimBalcony(b, rng.fork(0x2000 + b.id), this.send));
    this.applyNodeKnobs();
    for (const n of this.nodes()) n.start();
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** The pty slave the controller opens as the level's serial device (or the layout's tcp://host:port). */
  get path(): string {
    return this.line.path;
  }

  /** Settles once the controller can reach the gateway's line (its TCP port listens), or with why it cannot. */
  listening(): Promise<void> {
    return this.line.listening ?? Promise.resolve();
  }

  /**
   * Pulls the gateway's cable for `downMs`: closes the pty (the device disappears and a
   * controller holding it sees a hangup), then opens a new one and resolves with its path. A
   * new pty usually gets another number, as a replugged USB adapter may come back as another
   * ttyUSBn: a controller follows it through a symlink (udev's /dev/serial/by-id). The nodes
   * keep running meanwhile; what they send is lost, and they lose the link after 1 s.
   */
  async unplug(downMs: number): Promise<string> {
    if (this.unplugged) throw new Error(`level ${this.id}: the gateway is already unplugged`);
    this.unplugged = true;
    this.line.close();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    this.unplugged = false;
    if (this.closed) throw new Error(`level ${this.id}: the simulator stopped meanwhile`);
    this.line = this.openLine((bytes) => this.splitter.push(bytes));
    await this.listening();
    return this.line.path;
  }

  setKnobs(change: Partial<LinkKnobs>): LinkKnobs {
    this.knobs = mergeKnobs(this.knobs, change);
    this.applyNodeKnobs();
    return this.knobs;
  }

  /** The knobs that act in the nodes rather than on the radio between them. */
  private applyNodeKnobs(): void {
    for (const n of this.nodes()) n.endpoint.linkTimeoutMs = this.knobs.node_link_timeout_ms;
  }

  /** Raises a fault on a bot (by id) as if its hardware had found it. */
  injectFault(bot: number, code: number, detail?: number, clearAfterMs?: number): void {
    const b = this.bots.get(bot);
    if (!b) throw new RangeError(`level ${this.id} has no bot ${bot}`);
    b.inject(code, performance.now(), detail, clearAfterMs);
  }

  /** A person sets carrier `id` down on a cell (hands.ts says where one may). */
  placeCarrier(id: string, x: number, y: number): void {
    checkCarrierId(id);
    checkCarrierCell(this, x, y, performance.now());
    this.world.putCarrier(id, x, y);
  }

  /** A person takes the carrier off a cell, or off a bot holding it up there; returns its id. */
  removeCarrier(x: number, y: number): string {
    const { carrier, bot } = carrierToTake(this, x, y, performance.now());
    if (bot) bot.carrier = undefined;
    else this.world.takeCarrier(x, y);
    return carrier;
  }

  /** A person takes a bot off the level: it powers off, holds no cell, sends and answers nothing; returns it as it was. */
  takeBot(id: number): SimBot {
    const bot = this.bots.get(id);
    if (!bot) throw new HandRefused(`level ${this.id}: bot ${id} is not on the level${this.absent.has(id) ? ' (it was taken off)' : ''}`);
    checkBotTakeable(this, bot);
    bot.powerOff();
    this.bots.delete(id);
    this.absent.add(id);
    return bot;
  }

  /**
   * A person puts a bot on the level (hands.ts says where); it powers on as a rebooted node:
   * HELLO with a new session, lift down, no carrier. `boot` counts its earlier power-ons so
   * each boot draws another session from the seed.
   */
  putBot(start: BotStart, boot: number): void {
    checkBotId(start.id);
    checkHeading(start.heading);
    if (start.battery !== undefined) checkBattery(start.battery);
    if (this.bots.has(start.id)) throw new HandRefused(`level ${this.id}: bot ${start.id} is already on the level`);
    checkBotCell(this, start.x, start.y, performance.now());
    const bot = this.newBot({ id: start.id, x: start.x, y: start.y, heading: start.heading, battery: start.battery }, boot);
    this.absent.delete(start.id);
    this.bots.set(bot.id, bot);
    bot.endpoint.linkTimeoutMs = this.knobs.node_link_timeout_ms;
    bot.start();
  }

  /** Forgets that a bot was taken off this level: a person put it on another. */
  forgetAbsent(id: number): void {
    this.absent.delete(id);
  }

  snapshot(): LevelSnapshot {
    const now = performance.now();
    return {
      level_id: this.id, path: this.path, knobs: this.knobs, line: { ...this.line.counters },
      decoder: { ...this.decoder.counters, errors: { ...this.decoder.counters.errors } },
      uplink: { ...this.uplink.counters }, downlink: { ...this.downlink.counters }, silenced: this.silenced,
      bots: [...this.bots.values()].map((b) => b.snapshot()),
      absent_bots: [...this.absent].sort((a, b) => a - b),
      carriers: this.world.carriers(),
      balconies: [...this.balconies.values()].map((b) => b.snapshot(now)),
    };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const n of this.nodes()) n.endpoint.stop();
    this.uplink.stop();
    this.downlink.stop();
    this.line.close();
  }

  private newBot(start: BotStart, boot: number): SimBot {
    // Boot 0 draws as the level always has, so a seed gives the same run as before hands existed.
    const rng = boot === 0 ? this.rng.fork(0x100 + start.id) : this.rng.fork(0x100 + start.id).fork(boot);
    return new SimBot(start, this.world, this.figures, rng, this.send, performance.now());
  }

  private nodes(): (SimBot | SimBalcony)[] {
    return [...this.bots.values(), ...this.balconies.values()];
  }

  private tick(): void {
    const now = performance.now();
    for (const n of this.nodes()) n.tick(now);
  }

  private fromNode(frame: FrameInput): void {
    if (this.knobs.silent_nodes.includes(frame.src)) {
      this.silenced++;
      return;
    }
    this.uplink.pass(encodeFrame(frame));
  }

  private route(wire: Buffer): void {
    const now = performance.now();
    for (const frame of this.decoder.push(wire)) {
      if (frame.dst === ADDRESS.BROADCAST) {
        for (const n of this.nodes()) {
          if (this.knobs.silent_nodes.includes(n.endpoint.address)) this.silenced++;
          else n.endpoint.receive(frame, now);
        }
        continue;
      }
      const node = frame.dst >= 0x1000 ? this.balconies.get(frame.dst - 0x1000) : this.bots.get(frame.dst);
      if (!node) continue; // no such node on this level: nobody answers, as on a real radio
      if (this.knobs.silent_nodes.includes(frame.dst)) this.silenced++;
      else node.endpoint.receive(frame, now);
    }
  }
}
