/**
 * The daemon's handle on the simulator child process: starts it (compiled dist/sim/main.js
 * with this Node binary, or src/sim/main.ts through tsx when running from sources, as tests
 * do), waits for its device paths, forwards knob changes, fault injection and people's hands,
 * and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { entryCommand } from '../entry-points.js';
import type { Heading } from '../link/protocol/messages.js';
import type { LevelSnapshot } from './gateway.js';
import { optionsArg, type SimRequest, type ToChild, type ToParent } from './ipc.js';
import type { LinkKnobs } from './knobs.js';
import type { SimulatorOptions } from './simulator.js';

export interface StartSimulatorOptions extends SimulatorOptions {
  /** each stderr line of the child (its JSON log); default: inherited, so it lands in the journal */
  onLog?: (line: string) => void;
  /** extra environment for the child (WAREHOUSE_SIM_* knobs) */
  env?: NodeJS.ProcessEnv;
}

export interface SimulatorProcess {
  readonly pid: number;
  readonly seed: number;
  /** level id -> serial device path (a pty slave) to open with SerialTransport */
  readonly devices: ReadonlyMap<number, string>;
  /** resolves with the exit code (or signal name) when the child ends, for whatever reason */
  readonly exited: Promise<number | string>;
  /** true once stop() was called: an exit after it is a stop, any other exit a crash */
  readonly stopping: boolean;
  setKnobs(knobs: Partial<LinkKnobs>, levelId?: number): Promise<void>;
  injectFault(levelId: number, bot: number, code: number, options?: { detail?: number; clearAfterMs?: number }): Promise<void>;
  snapshot(): Promise<LevelSnapshot[]>;
  /**
   * Pulls a level's gateway cable for `downMs` (its pty closes) and plugs it in again on a new
   * pty; resolves with the new path, which `devices` then holds too.
   */
  unplug(levelId: number, downMs: number): Promise<string>;
  /**
   * A person puts a carrier (a new id, or one on no level now) on a free storage space, buffer
   * or balcony port: no carrier there, no bot there. Its RFID tag holds its id.
   */
  placeCarrier(levelId: number, carrierId: string, x: number, y: number): Promise<void>;
  /** A person takes the carrier off a cell (or off a bot standing there with its lift up); resolves with its id. */
  removeCarrier(levelId: number, x: number, y: number): Promise<string>;
  /**
   * A person takes a bot off its level: it powers off and leaves the grid (sends nothing,
   * answers nothing, holds no cell). Refused while it holds a carrier or its lift moves.
   */
  takeBot(levelId: number, botId: number): Promise<void>;
  /**
   * A person puts a bot on a free drivable cell (no bot, no carrier there); an id no level has
   * is a new bot. It boots afresh: HELLO with a new session, lift down, no carrier; its battery
   * is `battery` ‰, else what it had when taken off, else drawn from the seed.
   */
  putBot(levelId: number, botId: number, x: number, y: number, heading: Heading, battery?: number): Promise<void>;
  /** Asks the child to stop; kills it if it has not exited within `graceMs`. Resolves at once if it is dead already. */
  stop(graceMs?: number): Promise<void>;
}

/** What a reply carries besides ok. */
type Answer = Extract<ToParent, { type: 'reply'; ok: true }>;

/** The entry point and the Node flags to run it, next to this file in src/ or dist/. */
export function simulatorCommand(): string[] {
  return entryCommand('./main', import.meta.url);
}

/** Starts the simulator and resolves once it has opened its ptys. */
export function startSimulator(options: StartSimulatorOptions): Promise<SimulatorProcess> {
  const { onLog, env, ...simOptions } = options;
  const child = spawn(process.execPath, [...simulatorCommand(), optionsArg(simOptions)], {
    stdio: ['ignore', 'ignore', onLog ? 'pipe' : 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  if (onLog && child.stderr) {
    let rest = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line) onLog(line);
    });
  }
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | string): void => reject(new Error(`simulator exited (${code}) before it was ready`));
    void exited.then(onExit);
    child.once('error', reject);
    child.on('message', function first(msg: ToParent) {
      if (msg.type === 'failed') {
        child.off('message', first);
        reject(new Error(`simulator failed to start: ${msg.error}`));
      } else if (msg.type === 'ready') {
        child.off('message', first);
        resolve(new ChildSimulator(child, msg.seed, new Map(msg.levels.map((l) => [l.level_id, l.path])), exited));
      }
    });
  });
}

class ChildSimulator implements SimulatorProcess {
  readonly pid: number;
  stopping = false;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Answer) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly child: ChildProcess,
    readonly seed: number,
    readonly devices: Map<number, string>,
    readonly exited: Promise<number | string>,
  ) {
    this.pid = child.pid!;
    // A signal that cannot be delivered (the child is gone) is an 'error' event; unheard, it would end the daemon.
    child.on('error', () => undefined);
    child.on('message', (msg: ToParent) => {
      if (msg.type !== 'reply') return;
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (!p) return;
      if (msg.ok) p.resolve(msg);
      else p.reject(new Error(msg.error));
    });
    void exited.then((code) => {
      for (const p of this.pending.values()) p.reject(new Error(`simulator exited (${code})`));
      this.pending.clear();
    });
  }

  async setKnobs(knobs: Partial<LinkKnobs>, levelId?: number): Promise<void> {
    await this.request({ op: 'knobs', knobs, ...(levelId === undefined ? {} : { level_id: levelId }) });
  }

  async injectFault(levelId: number, bot: number, code: number, options: { detail?: number; clearAfterMs?: number } = {}): Promise<void> {
    await this.request({ op: 'fault', level_id: levelId, bot, code, detail: options.detail, clear_after_ms: options.clearAfterMs });
  }

  async snapshot(): Promise<LevelSnapshot[]> {
    return (await this.request({ op: 'snapshot' })).result ?? [];
  }

  async unplug(levelId: number, downMs: number): Promise<string> {
    const [level] = (await this.request({ op: 'unplug', level_id: levelId, down_ms: downMs })).result ?? [];
    if (!level) throw new Error(`simulator: no level ${levelId} after unplug`);
    this.devices.set(levelId, level.path);
    return level.path;
  }

  async placeCarrier(levelId: number, carrierId: string, x: number, y: number): Promise<void> {
    await this.request({ op: 'place_carrier', level_id: levelId, carrier_id: carrierId, x, y });
  }

  async removeCarrier(levelId: number, x: number, y: number): Promise<string> {
    const { carrier_id } = await this.request({ op: 'remove_carrier', level_id: levelId, x, y });
    if (carrier_id === undefined) throw new Error(`simulator: no carrier id in the answer for (${x}, ${y}) on level ${levelId}`);
    return carrier_id;
  }

  async takeBot(levelId: number, botId: number): Promise<void> {
    await this.request({ op: 'take_bot', level_id: levelId, bot_id: botId });
  }

  async putBot(levelId: number, botId: number, x: number, y: number, heading: Heading, battery?: number): Promise<void> {
    await this.request({ op: 'put_bot', level_id: levelId, bot_id: botId, x, y, heading, ...(battery === undefined ? {} : { battery_permille: battery }) });
  }

  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.child.connected) this.request({ op: 'stop' }).catch(() => undefined);
    else this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private request(request: SimRequest): Promise<Answer> {
    if (!this.child.connected) return Promise.reject(new Error('simulator is not running'));
    const id = this.nextId++;
    const message: ToChild = { type: 'request', id, request };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send(message);
    });
  }
}
