/**
 * The daemon's handle on the simulator child process: starts it (compiled dist/sim/main.js
 * with this Node binary, or src/sim/main.ts through tsx when running from sources, as tests
 * do), waits for its device paths, forwards knob changes and fault injection, and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  setKnobs(knobs: Partial<LinkKnobs>, levelId?: number): Promise<void>;
  injectFault(levelId: number, bot: number, code: number, options?: { detail?: number; clearAfterMs?: number }): Promise<void>;
  snapshot(): Promise<LevelSnapshot[]>;
  /**
   * Pulls a level's gateway cable for `downMs` (its pty closes) and plugs it in again on a new
   * pty; resolves with the new path, which `devices` then holds too.
   */
  unplug(levelId: number, downMs: number): Promise<string>;
  /** Asks the child to stop; kills it if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** The entry point and the Node flags to run it, next to this file in src/ or dist/. */
export function simulatorCommand(): string[] {
  const self = fileURLToPath(import.meta.url);
  if (self.endsWith('.ts')) return ['--import', 'tsx', fileURLToPath(new URL('./main.ts', import.meta.url))];
  return ['--enable-source-maps', fileURLToPath(new URL('./main.js', import.meta.url))];
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
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: LevelSnapshot[] | undefined) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly child: ChildProcess,
    readonly seed: number,
    readonly devices: Map<number, string>,
    readonly exited: Promise<number | string>,
  ) {
    this.pid = child.pid!;
    child.on('message', (msg: ToParent) => {
      if (msg.type !== 'reply') return;
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (!p) return;
      if (msg.ok) p.resolve(msg.result);
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
    return (await this.request({ op: 'snapshot' })) ?? [];
  }

  async unplug(levelId: number, downMs: number): Promise<string> {
    const [level] = (await this.request({ op: 'unplug', level_id: levelId, down_ms: downMs })) ?? [];
    if (!level) throw new Error(`simulator: no level ${levelId} after unplug`);
    this.devices.set(levelId, level.path);
    return level.path;
  }

  async stop(graceMs = 2000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.child.connected) this.request({ op: 'stop' }).catch(() => undefined);
    else this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private request(request: SimRequest): Promise<LevelSnapshot[] | undefined> {
    if (!this.child.connected) return Promise.reject(new Error('simulator is not running'));
    const id = this.nextId++;
    const message: ToChild = { type: 'request', id, request };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send(message);
    });
  }
}
