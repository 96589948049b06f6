/**
 * The main thread's side of the brain: it runs the brain in a worker thread, restarts it there
 * without touching the API (POST /restart_brain, cancel_all), and bridges what the worker
 * needs: every commit of either thread (the commit bridge, on a port of its own), settings,
 * bot and line news from the radio lines, and the commands the worker sends to bots.
 */
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { Config } from '../../config/config.js';
import type { Site } from '../../domain/site/load.js';
import { EVENT } from '../../domain/events/catalogue.js';
import type { Events } from '../../domain/events/events.js';
import type { BrainControl, StorageStatus } from '../../domain/system/control.js';
import { shareCommits, shareGate, type SharedGate, type SharedStore } from '../../domain/system/shared-store.js';
import type { Logger } from '../../log/logger.js';
import type { SiteLines } from '../../lines/site-lines.js';
import { startThread } from '../../entry-points.js';
import { Outbox } from '../../outbox.js';
import { SPARE_THREAD, type BeginBrain, type BrainFigures, type BrainInit, type BrainSettings, type FromBrain, type ToBrain } from '../messages.js';

export interface BrainHostDeps {
  config: Config;
  site: Site;
  store: SharedStore;
  logger: Logger;
  events: Events;
  lines: SiteLines | undefined;
  settings: () => BrainSettings;
  /** On the active box of a replicated pair: the gate the worker's writes go through too. */
  replication?: SharedGate;
  /** How long a graceful stop may take before the thread is terminated. */
  stopTimeoutMs?: number;
  /** A spareBrainThread() for the first start; one that ended already is passed over. */
  spare?: Worker;
}

/** The ports a BrainInit carries, which travel in the transfer list of whatever hands it over. */
function transferred(init: BrainInit): MessagePort[] {
  return init.replication ? [init.commits, init.replication] : [init.commits];
}

/** The brain's thread, handed what it starts from and the ports it is bridged by. */
function spawnWorker(init: BrainInit): Worker {
  return startThread('../worker/main', import.meta.url, { workerData: init, transferList: transferred(init) });
}

/**
 * A brain thread that loads its modules now and starts its brain when a BrainHost takes it
 * (BrainHostDeps.spare): a standby box keeps one, so a takeover does not wait for the loading
 * (about a second of CPU, on cores the takeover's other work needs too).
 */
export function spareBrainThread(): Worker {
  return startThread('../worker/main', import.meta.url, { workerData: SPARE_THREAD });
}

/**
 * How long the brain may take to stop before its thread is terminated: its stop closes the
 * level planners and the store, well under a second when healthy. Short enough that a daemon
 * stop (in-flight requests get 10 s first) stays within the unit's TimeoutStopSec of 20 s.
 */
const STOP_TIMEOUT_MS = 5000;

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

export class BrainHost implements BrainControl {
  private worker: Worker | undefined;
  /** The current worker's batches of messages. */
  private outbox: Outbox<ToBrain> | undefined;
  private status: StorageStatus = 'OFF';
  private latest: BrainFigures | undefined;
  private nextCall = 1;
  private readonly calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  /** Ends what the current worker is wired to: bot and line news, the commit bridge. */
  private unwire: (() => void)[] = [];
  private readonly log: Logger;
  private restarting: Promise<void> | undefined;
  /** Delay before replacing a thread that died; doubles while it keeps dying young. */
  private respawnMs = 1000;
  private startedAt = 0;
  /** The level the worker logs at: the configuration's until a reload changes it. */
  private logLevel: Config['log_level'];

  /** The spare thread not yet taken. */
  private spare: Worker | undefined;

  constructor(private readonly deps: BrainHostDeps) {
    this.log = deps.logger.child({ component: 'brain' });
    this.logLevel = deps.config.log_level;
    this.spare = deps.spare;
  }

  /** A reload's new log level, for the running worker and those started later. */
  setLogLevel(level: Config['log_level']): void {
    this.logLevel = level;
    this.post({ type: 'log-level', level });
  }

  /** Starts the worker; resolves once the brain in it has rebuilt its state and runs. */
  async start(): Promise<void> {
    const channel = new MessageChannel();
    const lines = this.deps.lines;
    const init: BrainInit = {
      config: { ...this.deps.config, log_level: this.logLevel }, settings: this.deps.settings(), links: lines !== undefined, lines: lines?.lineStates() ?? [], commits: channel.port2,
      // The geometry only: a large site's initial carriers and boxes would double the memory for nothing.
      layout: { ...this.deps.site.layout, carriers: [], skus: [] },
    };
    this.wireOff();
    this.unwire.push(shareCommits(this.deps.store, channel.port1));
    if (this.deps.replication) {
      const gate = new MessageChannel();
      init.replication = gate.port2;
      this.unwire.push(shareGate(this.deps.replication, gate.port1));
    }
    const worker = this.begin(init) ?? spawnWorker(init);
    this.worker = worker;
    this.outbox = new Outbox((batch) => worker.postMessage(batch));
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (batch: FromBrain[]) => {
        for (const m of batch) {
          if (m.type === 'ready') resolve();
          else this.onMessage(m);
        }
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the brain's thread exited with code ${code} while starting`)));
    });
    ready.catch(() => undefined); // onExit replaces a thread that dies while starting
    worker.on('error', (err) => this.log.error({ err }, 'the brain thread failed; it is restarted'));
    worker.on('exit', (code) => this.onExit(worker, code));
    if (lines) {
      this.unwire.push(lines.onBot((event) => this.post({ type: 'bot', event })), lines.onLine((status) => this.post({ type: 'line', status })));
    }
    this.startedAt = performance.now();
    await ready;
  }

  /** The spare thread, handed `init`, if there is one still running. */
  private begin(init: BrainInit): Worker | undefined {
    const spare = this.spare;
    this.spare = undefined;
    // A thread that ended has threadId -1, even before its 'exit' event.
    if (!spare || spare.threadId === -1) return undefined;
    spare.ref();
    spare.postMessage({ type: 'begin', init } satisfies BeginBrain, transferred(init));
    return spare;
  }

  /** The id of the thread the brain runs on (-1 once it ended), for tests. */
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  /** Asks the brain to stop and waits for its thread to end (terminating it after the timeout). */
  async stop(): Promise<void> {
    const worker = this.worker;
    const outbox = this.outbox;
    if (!worker || !outbox) return;
    this.worker = undefined;
    this.outbox = undefined;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const timeout = this.deps.stopTimeoutMs ?? STOP_TIMEOUT_MS;
    const graceful = this.call(outbox, 'stop', []).catch(() => undefined);
    const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeout).unref());
    if ((await Promise.race([graceful, late])) === 'late') this.log.warn({ timeout_ms: timeout }, 'the brain did not stop in time; terminating its thread');
    await worker.terminate();
    await ended;
    this.wireOff();
    this.status = 'OFF';
  }

  private wireOff(): void {
    for (const off of this.unwire.splice(0)) off();
  }

  /** POST /restart_brain: a new thread rebuilds everything from the store. */
  restart(): Promise<void> {
    this.restarting ??= (async () => {
      try {
        await this.stop();
        await this.start();
        await this.deps.events.emit(EVENT.brainRestarted, 'brain restarted from the stored state in a new thread');
      } finally {
        this.restarting = undefined;
      }
    })();
    return this.restarting;
  }

  storageStatus(): StorageStatus {
    return this.status;
  }

  /** The figures the brain's thread posted last (undefined before its first), for /metrics: reading them never asks the thread. */
  figures(): BrainFigures | undefined {
    return this.latest;
  }

  /** Bots a charge-all would send to charge (asked of the brain). */
  async chargeAllCandidates(force: boolean): Promise<number[]> {
    if (!this.outbox) return [];
    return (await this.call(this.outbox, 'chargeAllCandidates', [force])) as number[];
  }

  /** Settings changed: the brain reads the new values. */
  settingsChanged(): void {
    this.post({ type: 'settings', settings: this.deps.settings() });
  }

  private post(message: ToBrain): void {
    this.outbox?.post(message);
  }

  private call(outbox: Outbox<ToBrain>, method: 'stop' | 'chargeAllCandidates', args: unknown[]): Promise<unknown> {
    const id = this.nextCall++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      outbox.post({ type: 'call', id, method, args });
    });
  }

  private onMessage(m: FromBrain): void {
    switch (m.type) {
      case 'status':
        this.status = m.status;
        break;
      case 'figures':
        this.latest = m.figures;
        break;
      case 'log':
        this.relog(m.line);
        break;
      case 'send':
        void this.send(m.id, m.levelId, m.node, m.command, m.timeoutMs);
        break;
      case 'result': {
        const call = this.calls.get(m.id);
        this.calls.delete(m.id);
        if (m.error !== undefined) call?.reject(new Error(m.error));
        else call?.resolve(m.result);
        break;
      }
      case 'ready':
        break;
    }
  }

  private async send(id: number, levelId: number, node: number, command: Parameters<SiteLines['send']>[2], timeoutMs: number): Promise<void> {
    const outcome = this.deps.lines ? await this.deps.lines.send(levelId, node, command, timeoutMs) : { delivered: false as const, reason: 'the radio lines are off' };
    this.post({ type: 'sent', id, outcome });
  }

  /** A worker log line goes out through the main logger (one journal, one log tail). */
  private relog(line: string): void {
    try {
      const { level, msg, time: _time, pid: _pid, hostname: _host, service: _service, ...fields } = JSON.parse(line) as Record<string, unknown>;
      const method = LEVELS[level as number] ?? (typeof level === 'string' ? (level as 'info') : 'info');
      this.deps.logger[method](fields, String(msg ?? ''));
    } catch {
      this.log.info({ line }, 'brain');
    }
  }

  /** A thread that ends on its own (a crash) is replaced, so the site keeps working. */
  private onExit(worker: Worker, code: number): void {
    for (const call of this.calls.values()) call.reject(new Error('the brain thread ended'));
    this.calls.clear();
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.outbox = undefined;
    this.wireOff();
    this.status = 'ERROR';
    // A thread that dies young dies again: wait longer each time (up to a minute).
    this.respawnMs = performance.now() - this.startedAt < 60_000 ? Math.min(this.respawnMs * 2, 60_000) : 1000;
    this.log.error({ code, retry_in_ms: this.respawnMs }, 'the brain thread ended unexpectedly; starting a new one');
    setTimeout(() => {
      if (this.worker) return;
      this.start().catch((err: unknown) => this.log.error({ err }, 'the brain could not be restarted'));
    }, this.respawnMs).unref();
  }
}
