/**
 * The daemon's side of every level's radio line, on the main thread: what the bots report,
 * each line's state, and the commands waiting for their acknowledgement. The devices and the
 * native link on each are read and written in a process of their own (./lines-process.ts), so
 * that a held main thread cannot silence the radio. It keeps the latest telemetry per bot for
 * `GET /bots` and sends balcony LED sequences. Levels are independent: a level whose device is
 * away only takes its own bots offline. Which device each level uses is the app wiring's
 * choice (a serial device, a device server over TCP, or the supervised simulator's pty, which
 * can move: `repoint`).
 */
import type { Logger } from '../log/logger.js';
import type { Command, LinkEvent, LinkStats } from '../native/link.js';
import type { TransportState, TransportStats } from '../link/transport.js';
import { ADDRESS, type LedStep } from '../link/protocol/messages.js';
import type { Site } from '../domain/site/load.js';
import type { BotEvent, BotState, CommandOutcome, LineStatus } from './events.js';
import { nextLineHealth, NODE_ANSWER_GRACE_MS, OPENING, type LineChange, type LineHealth } from './line-health.js';
import { LinesProcess } from './lines-process.js';
import type { FromLine } from './messages.js';

/** How long an LED sequence may take to be acknowledged before it counts as not published. */
const LED_ACK_TIMEOUT_MS = 3000;

interface LevelLine {
  /** This open's number on the lines' process: news of a line already replaced is not this one's. */
  id: number;
  levelId: number;
  path: string;
  log: Logger;
  /** The counters the lines' process last sent (none before its first). */
  link: LinkStats | undefined;
  transport: TransportStats | undefined;
  /** Commands waiting for their outcome, by token. */
  waiting: Map<number, (outcome: CommandOutcome) => void>;
  /** Resolves a close() waiting for the lines' process to let go of the device. */
  closed: (() => void) | undefined;
  /** The transport's state and the last failure it reported (describeDeviceError). */
  device: { state: TransportState; error: string | null };
  /** Up or down, why, and whether this outage was announced (line-health.ts). */
  health: LineHealth;
  /** Set while the device is open and no node has answered yet: the first answer's grace. */
  grace: NodeJS.Timeout | undefined;
  graceOver: boolean;
  status: LineStatus;
}

/** A line's state and counters (SiteLines.figures). */
export interface LineFigures {
  level_id: number;
  up: boolean;
  /** Good frames decoded, and frames written. */
  frames_in: number;
  frames_out: number;
  /** Frames dropped for a bad CRC. */
  crc_errors: number;
  /** Frames dropped for any other fault of the protocol (framing, length, version, type, payload, address, unexpected). */
  protocol_errors: number;
  /** Times the device was opened again after the first open. */
  reconnects: number;
}

/** Hears a line's state; `change` is set when it is news for the event log (one down per outage, one up after it). */
export type LineListener = (status: LineStatus, change: LineChange) => void;

export class SiteLines {
  private readonly lines = new Map<number, LevelLine>();
  /** The same lines by their number on the lines' process. */
  private readonly byId = new Map<number, LevelLine>();
  private readonly bots = new Map<number, BotState>();
  private readonly linesProcess: LinesProcess;
  private nextId = 1;
  private nextToken = 1;
  private readonly listeners = new Set<(event: BotEvent) => void>();
  private readonly lineListeners = new Set<LineListener>();

  constructor(
    private readonly site: Site,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    for (const level of site.levels) {
      for (const bot of level.bots) this.bots.set(bot.id, newBot(bot.id, level.id, bot.start.x, bot.start.y, bot.heading));
    }
    this.linesProcess = new LinesProcess(logger.child({ component: 'lines' }), (m) => this.heard(m), () => this.reopenAll());
  }

  /**
   * Opens a level's line on `path` (a serial device, a udev /dev/serial/by-id symlink, a pty,
   * or a device server's `tcp://host:port`); its transport reconnects by itself with backoff.
   * `health` carries an outage over from the line this one replaces (repoint), so its recovery
   * is still announced once.
   */
  open(levelId: number, path: string, health: LineHealth = OPENING): void {
    if (this.lines.has(levelId)) throw new Error(`level ${levelId}: its line is open already`);
    const line: LevelLine = {
      id: this.nextId++, levelId, path, log: this.logger.child({ level_id: levelId, device: path }), link: undefined, transport: undefined,
      waiting: new Map(), closed: undefined, device: { state: 'closed', error: null }, health, grace: undefined, graceOver: false,
      status: { level_id: levelId, device: path, up: health.up, reason: health.reason, since: this.now() },
    };
    this.lines.set(levelId, line);
    this.byId.set(line.id, line);
    this.linesProcess.post({ type: 'open', line: line.id, path });
  }

  /** The level's device moved (a gateway plugged in again as another tty, the simulator restarted): the line reopens there. */
  async repoint(levelId: number, path: string): Promise<void> {
    const line = this.lines.get(levelId);
    if (line && line.path === path) return;
    let health: LineHealth = OPENING;
    if (line) {
      // An outage already announced goes on on the new device: its recovery is announced there.
      if (line.health.announcedDown) health = line.health;
      await this.closeLine(line);
      this.letGo(line, 'the line moved to another device');
    }
    this.logger.info({ level_id: levelId, device: path, before: line?.path }, 'radio line opened on a new device');
    this.open(levelId, path, health);
  }

  /** Bots with their latest telemetry; `online` is the link's session state. */
  list(): BotState[] {
    return [...this.bots.values()];
  }

  /** Each level's line as it is now. */
  lineStates(): LineStatus[] {
    return [...this.lines.values()].map((l) => l.status);
  }

  /** Hears every change of a line's state; returns the function that stops listening. */
  onLine(listener: LineListener): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  /**
   * Sends a balcony's LED sequence to its controller, one channel per port; resolves true once
   * every channel acknowledged it, false when one refused or nothing came in time.
   */
  async publishLeds(balconyId: number, steps: LedStep[]): Promise<boolean> {
    const balcony = this.site.balconies.find((b) => b.id === balconyId);
    if (!balcony || !this.lines.has(balcony.level_id)) return false;
    const node = ADDRESS.LED_FIRST + balconyId;
    const outcomes = balcony.ports.map((_, channel) => this.send(balcony.level_id, node, { type: 'LED_SEQUENCE', channel, repeat: 0, steps }, LED_ACK_TIMEOUT_MS));
    return (await Promise.all(outcomes)).every((o) => o.delivered && o.result === 'OK');
  }

  /**
   * Sends a command to a node of a level; resolves with its acknowledgement, or why it was not
   * delivered (`timeoutMs` bounds the wait beyond the link's own retransmissions).
   */
  send(levelId: number, node: number, command: Command, timeoutMs = 10_000): Promise<CommandOutcome> {
    const line = this.lines.get(levelId);
    if (!line) return Promise.resolve({ delivered: false, reason: `level ${levelId} has no radio line` });
    const token = this.nextToken++;
    return new Promise<CommandOutcome>((resolve) => {
      const timer = setTimeout(() => {
        line.waiting.delete(token);
        resolve({ delivered: false, reason: `no acknowledgement within ${timeoutMs} ms` });
      }, timeoutMs);
      line.waiting.set(token, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
      this.linesProcess.post({ type: 'send', line: line.id, token, node, command });
    });
  }

  /** Hears telemetry, faults and link changes of bots; returns the function that stops listening. */
  onBot(listener: (event: BotEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Each line's state and counters, for /metrics, as the lines' process last sent them (at most
   * LINE_STATS_MS old; they restart when a line moves to another device).
   */
  figures(): LineFigures[] {
    const out: LineFigures[] = [];
    for (const line of this.lines.values()) {
      const figures: LineFigures = { level_id: line.levelId, up: line.status.up, frames_in: 0, frames_out: 0, crc_errors: 0, protocol_errors: 0, reconnects: 0 };
      const s = line.link;
      if (s) {
        const d = s.dropped;
        figures.frames_in = s.framesIn;
        figures.frames_out = s.framesOut;
        figures.crc_errors = d.crc;
        figures.protocol_errors = d.oversize + d.framing + d.short + d.version + d.length + d.type + d.payload + d.address + d.unexpected;
      }
      // The first open is not a reconnection.
      if (line.transport) figures.reconnects = Math.max(0, line.transport.opens - 1);
      out.push(figures);
    }
    return out;
  }

  /** The id of the process the lines run in now (it changes when one ends and is replaced). */
  processId(): number | undefined {
    return this.linesProcess.pid;
  }

  /** Link counters per level, for diagnostics. */
  stats(): Record<number, unknown> {
    const out: Record<number, unknown> = {};
    for (const [id, line] of this.lines) out[id] = { path: line.path, status: line.status, link: line.link ?? null, transport: line.transport ?? null };
    return out;
  }

  /** Closes every line and ends the lines' process. */
  async close(): Promise<void> {
    const lines = [...this.lines.values()];
    this.lines.clear();
    for (const line of lines) {
      clearTimeout(line.grace);
      this.byId.delete(line.id);
      this.settleAll(line, 'the controller is stopping');
    }
    await this.linesProcess.stop();
  }

  /** Lets go of a line's device on the lines' process; resolves once it is closed there. */
  private async closeLine(line: LevelLine): Promise<void> {
    this.lines.delete(line.levelId);
    clearTimeout(line.grace);
    const closed = new Promise<void>((resolve) => {
      line.closed = resolve;
    });
    this.linesProcess.post({ type: 'close', line: line.id });
    await closed;
    this.byId.delete(line.id);
  }

  /** A line is gone: its commands are not delivered and its bots are offline. */
  private letGo(line: LevelLine, reason: string): void {
    this.settleAll(line, `offline: ${reason}`);
    for (const bot of this.bots.values()) {
      if (bot.level_id !== line.levelId || !bot.online) continue;
      bot.online = false;
      this.tell({ kind: 'offline', bot, reason });
    }
  }

  private settleAll(line: LevelLine, reason: string): void {
    for (const resolve of line.waiting.values()) resolve({ delivered: false, reason });
    line.waiting.clear();
  }

  /** A new lines' process runs with no line open: every line is opened on it again, as after a lost device. */
  private reopenAll(): void {
    for (const line of [...this.byId.values()]) {
      this.byId.delete(line.id);
      line.closed?.(); // a close under way: the ended process let go of its device
      if (this.lines.get(line.levelId) !== line) continue;
      this.lines.delete(line.levelId);
      clearTimeout(line.grace);
      this.letGo(line, "the radio lines' process ended");
      this.open(line.levelId, line.path, line.health);
    }
  }

  /** What the lines' process says of a line. */
  private heard(m: FromLine): void {
    const line = this.byId.get(m.line);
    if (!line) return;
    switch (m.type) {
      case 'state':
        this.deviceState(line, m.state, m.error);
        break;
      case 'events':
        this.onEvents(line, m.batch);
        break;
      case 'refused':
        this.settle(line, m.token, { delivered: false, reason: m.reason });
        break;
      case 'log':
        line.log[m.level](m.fields, m.msg);
        break;
      case 'stats':
        line.link = m.link;
        line.transport = m.transport;
        break;
      case 'closed':
        line.closed?.();
        break;
    }
  }

  private deviceState(line: LevelLine, state: TransportState, error: string | null): void {
    line.device = { state, error };
    clearTimeout(line.grace);
    line.grace = undefined;
    line.graceOver = false;
    if (state === 'open') {
      line.grace = setTimeout(() => {
        line.grace = undefined;
        line.graceOver = true;
        this.updateStatus(line);
      }, NODE_ANSWER_GRACE_MS);
      line.grace.unref();
    }
    this.updateStatus(line);
  }

  private tell(event: BotEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /**
   * A line is up while its device is open and a node answers, or the level has no bot to
   * answer (line-health.ts). Listeners hear every change of the status; `change` says which
   * of them is news (the first down of an outage, the up that ends it), not every retry.
   */
  private updateStatus(line: LevelLine): void {
    const bots = [...this.bots.values()].filter((b) => b.level_id === line.levelId);
    const { next, change } = nextLineHealth(line.health, {
      device: line.device.state, error: line.device.error, bots: bots.length, answering: bots.filter((b) => b.online).length,
      graceOver: line.graceOver, now: performance.now(),
    });
    line.health = next;
    const s = line.status;
    if (s.up === next.up && s.reason === next.reason && s.device === line.path && change === null) return;
    line.status = { level_id: line.levelId, device: line.path, up: next.up, reason: next.reason, since: this.now() };
    const where = { level_id: line.levelId, device: line.path };
    if (change?.kind === 'down') this.logger.error({ ...where, reason: next.reason }, 'radio line down');
    else if (change?.kind === 'up') this.logger.info({ ...where, down_ms: change.downMs }, 'radio line up again');
    else if (next.up) this.logger.info(where, 'radio line up');
    else this.logger.info({ ...where, reason: next.reason }, 'radio line not up');
    for (const listener of this.lineListeners) listener(line.status, change);
  }

  private onEvents(line: LevelLine, batch: LinkEvent[]): void {
    if (this.lines.get(line.levelId) !== line) return; // a line being replaced by repoint
    const levelId = line.levelId;
    for (const event of batch) {
      switch (event.kind) {
        case 'message': {
          const m = event.message;
          // A bot the layout does not have says HELLO once a person puts it on the level (onboarding).
          if (m.type === 'HELLO' && event.node <= ADDRESS.BOT_LAST && !this.bots.has(event.node)) {
            this.bots.set(event.node, newBot(event.node, levelId, 0, 0, 'N'));
          }
          const bot = this.bots.get(event.node);
          if (!bot || bot.level_id !== levelId) break;
          if (m.type === 'TELEMETRY') {
            // `online` is left to the link's online/offline events: a bot that lost the link
            // keeps sending telemetry (with LINK_LOST) and is offline until it is welcomed again.
            Object.assign(bot, {
              x: m.x, y: m.y, heading: m.heading, battery_level: m.battery / 10, is_charging: m.charging, carrier_held: m.carrier,
              faults: m.faults, updated_at: this.now(),
            });
            this.tell({ kind: 'telemetry', bot, telemetry: m });
          } else if (m.type === 'FAULT') {
            this.tell({ kind: 'fault', bot, fault: m });
          }
          break;
        }
        case 'online':
        case 'offline': {
          const bot = this.bots.get(event.node);
          if (bot && bot.level_id === levelId) {
            bot.online = event.kind === 'online';
            this.tell({ kind: event.kind, bot, reason: event.reason });
          }
          this.logger.info({ level_id: levelId, node: event.node, reason: event.reason }, event.kind === 'online' ? 'node online' : 'node offline');
          this.updateStatus(line);
          break;
        }
        case 'acked':
          this.settle(line, event.id, {
            delivered: true, result: event.result, detail: event.detail, ...(event.message ? { data: [...event.message.data] } : {}),
          });
          break;
        case 'failed':
          this.settle(line, event.id, { delivered: false, reason: event.reason });
          break;
      }
    }
  }

  private settle(line: LevelLine, token: number, outcome: CommandOutcome): void {
    line.waiting.get(token)?.(outcome);
    line.waiting.delete(token);
  }
}

function newBot(id: number, levelId: number, x: number, y: number, heading: string): BotState {
  return { id, level_id: levelId, battery_level: 0, is_charging: false, carrier_held: false, online: false, x, y, heading, faults: 0, updated_at: null };
}
