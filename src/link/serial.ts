/**
 * The serial line of one level's radio gateway, over the `serialport` package: opens the
 * device at the protocol's line settings, hands every received chunk to `onData`, writes with
 * the stream's backpressure respected, and reopens the device with exponential backoff when it
 * disappears (a USB adapter unplugged, a gateway power-cycled, the simulator restarted).
 *
 * It knows nothing about frames: the link layer above (the native link, or a test acting as
 * the controller) pushes bytes in and gets bytes out. Each `write()` is kept whole, queued or
 * dropped as one piece, so a caller that writes one frame per call never puts half a frame on
 * the line.
 */
import { SerialPort } from 'serialport';

/** PROTOCOL.md section 2: 921600 baud, 8N1, no flow control. */
export const LINE_BAUD = 921600;

/** The part of a pino logger the transport uses. */
export interface TransportLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export type TransportState = 'opening' | 'open' | 'waiting' | 'closed';

export interface SerialTransportOptions {
  /** Device path (`/dev/ttyUSB0`, a pty slave, or a symlink to one). */
  path: string;
  /** Every chunk read from the device, in order; the buffer is the callee's to keep. */
  onData: (bytes: Buffer) => void;
  /** Called on every state change (after it is logged). */
  onState?: (state: TransportState, error?: Error) => void;
  baudRate?: number;
  log?: TransportLogger;
  /**
   * Bytes held while the port's stream reports backpressure; a write that would exceed it is
   * dropped whole and counted. 16 KiB is 0.18 s of line time at 921600 baud: anything older
   * than that is a frame the link layer has already retransmitted or given up.
   */
  maxQueuedBytes?: number;
  /** First reopen delay; doubles per failed attempt up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface TransportStats {
  /** successful opens, the first one included */
  opens: number;
  /** failed open attempts and losses of an open port */
  failures: number;
  bytesIn: number;
  bytesOut: number;
  /** writes dropped because the queue was full */
  droppedFull: number;
  /** writes dropped because the port was not open */
  droppedClosed: number;
  /** times a write waited for 'drain' */
  backpressureWaits: number;
  queuedBytes: number;
}

const silent: TransportLogger = { info: () => undefined, warn: () => undefined };

export class SerialTransport {
  readonly path: string;
  readonly stats: TransportStats = {
    opens: 0, failures: 0, bytesIn: 0, bytesOut: 0, droppedFull: 0, droppedClosed: 0, backpressureWaits: 0, queuedBytes: 0,
  };
  private readonly baudRate: number;
  private readonly log: TransportLogger;
  private readonly maxQueuedBytes: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private port: SerialPort | undefined;
  private stateNow: TransportState = 'closed';
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly queue: Buffer[] = [];
  private draining = false;
  private stopped = false;
  /** The error code of the last failure logged, so a device that stays away is logged once. */
  private lastLoggedFailure: string | undefined;
  private openWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(private readonly options: SerialTransportOptions) {
    this.path = options.path;
    this.baudRate = options.baudRate ?? LINE_BAUD;
    this.log = options.log ?? silent;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 16 * 1024;
    this.initialBackoffMs = options.initialBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 5000;
  }

  get state(): TransportState {
    return this.stateNow;
  }

  /** Starts opening the device; retries by itself until close(). */
  start(): void {
    if (this.stopped || this.stateNow !== 'closed') return;
    this.openNow();
  }

  /** Resolves once the port is open (at once when it already is); rejects if closed first. */
  whenOpen(): Promise<void> {
    if (this.stateNow === 'open') return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`serial transport ${this.path} is closed`));
    return new Promise((resolve, reject) => this.openWaiters.push({ resolve, reject }));
  }

  /**
   * Queues `bytes` for the line. Returns false when they were dropped (port not open, or the
   * backpressure queue full); the link layer's retransmission covers a dropped frame.
   */
  write(bytes: Uint8Array): boolean {
    const port = this.port;
    if (this.stateNow !== 'open' || !port) {
      this.stats.droppedClosed++;
      return false;
    }
    const chunk = Buffer.from(bytes); // the caller may reuse its buffer
    if (this.draining) {
      if (this.stats.queuedBytes + chunk.length > this.maxQueuedBytes) {
        this.stats.droppedFull++;
        return false;
      }
      this.queue.push(chunk);
      this.stats.queuedBytes += chunk.length;
      return true;
    }
    this.pushToPort(port, chunk);
    return true;
  }

  /** Closes the port and stops reconnecting; idempotent. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.dropQueue();
    const port = this.port;
    this.port = undefined;
    if (port) {
      port.removeAllListeners();
      port.on('error', () => undefined); // a late error from a port being closed is not news
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    }
    this.setState('closed');
  }

  private pushToPort(port: SerialPort, chunk: Buffer): void {
    this.stats.bytesOut += chunk.length;
    if (!port.write(chunk)) {
      // The stream keeps this chunk; later ones wait here, where the bound and the counter are.
      this.draining = true;
      this.stats.backpressureWaits++;
      port.once('drain', () => this.onDrain(port));
    }
  }

  private onDrain(port: SerialPort): void {
    if (port !== this.port) return;
    this.draining = false;
    while (this.queue.length > 0 && !this.draining) {
      const chunk = this.queue.shift()!;
      this.stats.queuedBytes -= chunk.length;
      this.pushToPort(port, chunk);
    }
  }

  private dropQueue(): void {
    this.stats.droppedClosed += this.queue.length;
    this.queue.length = 0;
    this.stats.queuedBytes = 0;
    this.draining = false;
  }

  private openNow(): void {
    this.retryTimer = undefined;
    this.setState('opening');
    const port = new SerialPort({
      path: this.path,
      baudRate: this.baudRate,
      dataBits: 8,
      parity: 'none',
      stopBits: 1,
      rtscts: false,
      xon: false,
      xoff: false,
      autoOpen: false,
    });
    this.port = port;
    port.on('data', (chunk: Buffer) => {
      if (port !== this.port) return;
      this.stats.bytesIn += chunk.length;
      this.options.onData(chunk);
    });
    // 'close' comes after an unplug (a DisconnectedError) or any other end of the port.
    port.on('close', (err: Error | null) => this.lost(port, err ?? new Error('port closed')));
    port.on('error', (err: Error) => this.lost(port, err));
    port.open((err) => {
      if (port !== this.port) return;
      if (err) {
        this.lost(port, err);
        return;
      }
      // Bytes the device buffered while nobody listened are stale (telemetry superseded, acks
      // for frames long retransmitted): start from a clean line. The decoder would resync at
      // the next delimiter anyway; flushing saves it from counting the debris as errors.
      port.flush(() => {
        if (port !== this.port) return;
        this.stats.opens++;
        if (this.attempt > 0 || this.lastLoggedFailure !== undefined) {
          this.log.info({ path: this.path, attempts: this.attempt }, 'serial device reopened');
        } else this.log.info({ path: this.path, baud: this.baudRate }, 'serial device open');
        this.attempt = 0;
        this.lastLoggedFailure = undefined;
        this.setState('open');
      });
    });
  }

  private lost(port: SerialPort, err: Error): void {
    if (port !== this.port || this.stopped) return;
    this.port = undefined;
    port.removeAllListeners();
    port.on('error', () => undefined);
    if (port.isOpen) port.close(() => undefined);
    this.dropQueue();
    this.stats.failures++;
    const code = (err as NodeJS.ErrnoException).code ?? err.message;
    const delay = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    // One line per kind of trouble, not one per retry: a gateway unplugged for an hour would
    // otherwise fill the journal with the same ENOENT every five seconds.
    if (code !== this.lastLoggedFailure) {
      this.lastLoggedFailure = code;
      this.log.warn({ path: this.path, err: err.message, retry_ms: delay, max_backoff_ms: this.maxBackoffMs }, 'serial device unavailable; retrying with backoff');
    }
    this.setState('waiting', err);
    this.retryTimer = setTimeout(() => this.openNow(), delay);
  }

  private setState(state: TransportState, error?: Error): void {
    if (state === this.stateNow) return;
    this.stateNow = state;
    if (state === 'open' || state === 'closed') {
      const waiters = this.openWaiters;
      this.openWaiters = [];
      for (const w of waiters) {
        if (state === 'open') w.resolve();
        else w.reject(new Error(`serial transport ${this.path} closed before it opened`));
      }
    }
    this.options.onState?.(state, error);
  }
}
