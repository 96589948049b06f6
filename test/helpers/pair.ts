/**
 * A replicated pair's boxes as processes of a test: each box is the daemon from sources (or its
 * build) with the pair's settings, started on a host of a test network through the network's
 * own spawn, its JSON log kept. The first box makes the pair's secrets and certificate; the
 * others get copies before they start, as an installer would give them.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { entryArgs } from './entry.js';
import { until } from './until.js';
import type { DaemonStatus } from '../../src/status-file.js';

/** How the test network starts a process on one of its hosts. */
export type SpawnOn = (host: string, command: string, args: string[], env: Record<string, string>) => ChildProcess;

export interface BoxOptions {
  /** The box's name in the pair, and the host it runs on. */
  name: string;
  host: string;
  /** The host's address, where the other box and the clients reach it. */
  address: string;
  stateDir: string;
  endpoints: readonly string[];
  pair: string;
  port: number;
  env?: Record<string, string>;
}

/** One box of the pair. */
export class PairBox {
  readonly lines: Record<string, unknown>[] = [];
  private stderr = '';

  private constructor(readonly options: BoxOptions, readonly child: ChildProcess) {
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          this.lines.push({ ...JSON.parse(line), seen: Date.now() });
        } catch {
          this.stderr += `${line}\n`;
        }
      }
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }

  /** Starts the box; `from` is a box whose secrets and certificate it takes first. */
  static start(spawnOn: SpawnOn, options: BoxOptions, from?: PairBox): PairBox {
    mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    if (from) {
      for (const dir of ['secrets', 'tls']) {
        if (!existsSync(path.join(options.stateDir, dir))) cpSync(path.join(from.options.stateDir, dir), path.join(options.stateDir, dir), { recursive: true });
      }
    }
    // Only the daemon's own settings: it refuses a WAREHOUSE_* name it does not know (the test
    // runner's WAREHOUSE_TEST_DIST chooses the entry through entryArgs instead).
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root',
      WAREHOUSE_STATE_DIR: options.stateDir, WAREHOUSE_HOST: '0.0.0.0', WAREHOUSE_PORT: String(options.port),
      WAREHOUSE_REPLICATION_ENDPOINTS: options.endpoints.join(','), WAREHOUSE_REPLICATION_NAME: options.name,
      WAREHOUSE_REPLICATION_PAIR: options.pair, WAREHOUSE_REPLICATION_ADDRESS: options.address,
      ...options.env,
    };
    return new PairBox(options, spawnOn(options.host, process.execPath, entryArgs('main'), env));
  }

  /** The API's address. */
  url(): string {
    return `https://${this.options.address}:${this.options.port}`;
  }

  /** The bootstrap administrator's API key (the first box wrote it; the others hold it through the log). */
  apiKey(): string {
    return (JSON.parse(readFileSync(path.join(this.options.stateDir, 'bootstrap-admin.json'), 'utf8')) as { api_key: string }).api_key;
  }

  /** The pair's certificate (every box serves the first box's). */
  certificate(): string {
    return path.join(this.options.stateDir, 'tls', 'self-signed-cert.pem');
  }

  /** The box's status file, if it wrote one. */
  status(): DaemonStatus | undefined {
    try {
      return JSON.parse(readFileSync(path.join(this.options.stateDir, 'status.json'), 'utf8')) as DaemonStatus;
    } catch {
      return undefined;
    }
  }

  /** The log lines with this message. */
  logged(msg: string | RegExp): Record<string, unknown>[] {
    return this.lines.filter((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(String(l.msg))));
  }

  /** Resolves once the box logged a role change to `role`; returns when (ms since the epoch). */
  async became(role: 'active' | 'standby', timeoutMs = 60_000, after = 0): Promise<number> {
    return until(`box ${this.options.name} to become ${role}`, async () => {
      const line = this.lines.find((l) => l.msg === `this box is now ${role}` && (l.seen as number) > after);
      return line ? (line.seen as number) : undefined;
    }, timeoutMs);
  }

  /** What the box wrote to stderr and the last log lines, for a failure's message. */
  tail(n = 30): string {
    return `${this.stderr}\n${this.lines.slice(-n).map((l) => JSON.stringify(l)).join('\n')}`;
  }

  /** Sends a signal; resolves once the process ended. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const ended = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    await ended;
  }
}
