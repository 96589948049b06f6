/**
 * The daemon's handle on its radio lines' process (./process/main.ts): it starts the process,
 * passes messages both ways, starts a new one when one ends without being asked (a native
 * fault, an uncaught error, a kill), with a growing pause while they keep ending young, and
 * stops it, killing a process that does not end in time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { entryCommand } from '../entry-points.js';
import type { Logger } from '../log/logger.js';
import { Outbox } from '../outbox.js';
import type { FromLine, FromLines, ToLines } from './messages.js';

/** How long the process may take to close its lines before it is killed. */
const STOP_TIMEOUT_MS = 3000;
/** A process that lived this long before it ended is replaced at once. */
const YOUNG_MS = 60_000;
const MAX_RESTART_MS = 30_000;

export class LinesProcess {
  private child: ChildProcess;
  /** The current process's batches of messages. */
  private outbox!: Outbox<ToLines>;
  /** Messages for a process that has not said `ready` yet: one sent before it listens would be lost. */
  private pending: ToLines[] | undefined;
  private stopping = false;
  private startedAt = 0;
  private restartMs = 0;
  private restartTimer: NodeJS.Timeout | undefined;

  /** `hear` gets every message of the current process; `restarted` is called once a replacement runs, with no line open in it. */
  constructor(private readonly log: Logger, private readonly hear: (message: FromLine) => void, private readonly restarted: () => void) {
    this.child = this.spawn();
  }

  /** The current process's id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends to the current process (dropped while a replacement is awaited: its lines are reopened then). */
  post(message: ToLines): void {
    if (this.pending) this.pending.push(message);
    else this.outbox.post(message);
  }

  /** Asks the process to close every line and end; kills it after STOP_TIMEOUT_MS. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.post({ type: 'stop' });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
    });
    if ((await Promise.race([ended, late])) === 'late') {
      this.log.warn({ timeout_ms: STOP_TIMEOUT_MS, pid: child.pid }, "the radio lines' process did not stop in time; killing it");
      child.kill('SIGKILL');
    }
    clearTimeout(timer);
    await ended;
  }

  private spawn(): ChildProcess {
    const child = spawn(process.execPath, entryCommand('./process/main', import.meta.url), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.startedAt = performance.now();
    this.pending = [];
    this.outbox = new Outbox((batch) => {
      if (child.connected) child.send(batch);
    });
    child.on('message', (batch: FromLines[]) => {
      if (child !== this.child) return;
      for (const message of batch) {
        if (message.type !== 'ready') {
          this.hear(message);
          continue;
        }
        const pending = this.pending ?? [];
        this.pending = undefined;
        for (const m of pending) this.post(m);
      }
    });
    child.on('error', (err) => this.log.error({ err }, "the radio lines' process failed"));
    child.on('exit', (code, signal) => {
      if (child !== this.child || this.stopping) return;
      const young = performance.now() - this.startedAt < YOUNG_MS;
      this.restartMs = young ? Math.min(MAX_RESTART_MS, Math.max(1000, this.restartMs * 2)) : 0;
      this.log.error({ code, signal, restart_ms: this.restartMs }, "the radio lines' process ended; it is started again and every line reopened");
      this.restartTimer = setTimeout(() => {
        this.child = this.spawn();
        this.restarted();
      }, this.restartMs);
    });
    return child;
  }
}
