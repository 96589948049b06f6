/**
 * What every transport of a level's radio line shares, whatever carries the bytes (a serial
 * device, a TCP connection to a serial-to-Ethernet device server): the states, the counters,
 * writes kept whole (queued or dropped as one piece while the stream pushes back), and
 * reconnection with exponential backoff, logged once per kind of trouble rather than per retry.
 * A subclass only opens its connection and reports what becomes of it.
 */

/** The part of a pino logger the transport uses. */
export interface TransportLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export type TransportState = 'opening' | 'open' | 'waiting' | 'closed';

/** The options every transport takes besides where its device is. */
export interface TransportOptions {
  /** Every chunk read from the device, in order; the buffer is the callee's to keep. */
  onData: (bytes: Buffer) => void;
  /** Called on every state change (after it is logged). */
  onState?: (state: TransportState, error?: Error) => void;
  log?: TransportLogger;
  /**
   * Bytes held while the stream reports backpressure; a write that would exceed it is
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
  /** failed open attempts and losses of an open connection */
  failures: number;
  bytesIn: number;
  bytesOut: number;
  /** writes dropped because the queue was full */
  droppedFull: number;
  /** writes dropped because the connection was not open */
  droppedClosed: number;
  /** times a write waited for 'drain' */
  backpressureWaits: number;
  queuedBytes: number;
}

/** The stream a transport writes to: a serial port or a socket. */
export interface ByteStream {
  write(chunk: Buffer): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** How a transport names itself in its log lines ("serial device", "TCP device server"). */
export interface TransportWords {
  noun: string;
}

const silent: TransportLogger = { info: () => undefined, warn: () => undefined };

/** A level's line that reconnects by itself; `connect` and `dispose` are the subclass's. */
export abstract class ReconnectingTransport<S extends ByteStream> {
  readonly stats: TransportStats = {
    opens: 0, failures: 0, bytesIn: 0, bytesOut: 0, droppedFull: 0, droppedClosed: 0, backpressureWaits: 0, queuedBytes: 0,
  };
  protected readonly log: TransportLogger;
  private readonly maxQueuedBytes: number;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private stream: S | undefined;
  private stateNow: TransportState = 'closed';
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly queue: Buffer[] = [];
  private draining = false;
  private stopped = false;
  /** The error code of the last failure logged, so a device that stays away is logged once. */
  private lastLoggedFailure: string | undefined;
  private openWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(readonly path: string, private readonly options: TransportOptions, private readonly words: TransportWords) {
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

  /** Resolves once the device is open (at once when it already is); rejects if closed first. */
  whenOpen(): Promise<void> {
    if (this.stateNow === 'open') return Promise.resolve();
    if (this.stopped) return Promise.reject(new Error(`transport ${this.path} is closed`));
    return new Promise((resolve, reject) => this.openWaiters.push({ resolve, reject }));
  }

  /**
   * Queues `bytes` for the line. Returns false when they were dropped (device not open, or the
   * backpressure queue full); the link layer's retransmission covers a dropped frame.
   */
  write(bytes: Uint8Array): boolean {
    const stream = this.stream;
    if (this.stateNow !== 'open' || !stream) {
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
    this.push(stream, chunk);
    return true;
  }

  /** Closes the device and stops reconnecting; idempotent. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.dropQueue();
    const stream = this.stream;
    this.stream = undefined;
    if (stream) await this.dispose(stream);
    this.setState('closed');
  }

  /**
   * Starts opening the device and returns its stream at once; the subclass reports the outcome
   * with `opened`, `received` and `lost`, each ignored unless the stream is still the current one.
   */
  protected abstract connect(): S;

  /** Lets go of a stream (its listeners removed, late errors swallowed); resolves once it is closed. */
  protected abstract dispose(stream: S): Promise<void>;

  /** The stream is open and usable; `fields` go into the log line. */
  protected opened(stream: S, fields: object): void {
    if (stream !== this.stream) return;
    this.stats.opens++;
    if (this.attempt > 0 || this.lastLoggedFailure !== undefined) {
      this.log.info({ path: this.path, attempts: this.attempt }, `${this.words.noun} reopened`);
    } else this.log.info({ path: this.path, ...fields }, `${this.words.noun} open`);
    this.attempt = 0;
    this.lastLoggedFailure = undefined;
    this.setState('open');
  }

  /** Bytes read from the stream. */
  protected received(stream: S, chunk: Buffer): void {
    if (stream !== this.stream) return;
    this.stats.bytesIn += chunk.length;
    this.options.onData(chunk);
  }

  /** The stream failed to open or was lost: it is let go, and the device is tried again after the backoff. */
  protected lost(stream: S, err: Error): void {
    if (stream !== this.stream || this.stopped) return;
    this.stream = undefined;
    void this.dispose(stream);
    this.dropQueue();
    this.stats.failures++;
    const code = (err as NodeJS.ErrnoException).code ?? err.message;
    const delay = Math.min(this.maxBackoffMs, this.initialBackoffMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    // One line per kind of trouble, not one per retry: a gateway unplugged for an hour would
    // otherwise fill the journal with the same ENOENT every five seconds.
    if (code !== this.lastLoggedFailure) {
      this.lastLoggedFailure = code;
      this.log.warn({ path: this.path, err: err.message, retry_ms: delay, max_backoff_ms: this.maxBackoffMs }, `${this.words.noun} unavailable; retrying with backoff`);
    }
    this.setState('waiting', err);
    this.retryTimer = setTimeout(() => this.openNow(), delay);
  }

  private push(stream: S, chunk: Buffer): void {
    this.stats.bytesOut += chunk.length;
    if (!stream.write(chunk)) {
      // The stream keeps this chunk; later ones wait here, where the bound and the counter are.
      this.draining = true;
      this.stats.backpressureWaits++;
      stream.once('drain', () => this.onDrain(stream));
    }
  }

  private onDrain(stream: S): void {
    if (stream !== this.stream) return;
    this.draining = false;
    while (this.queue.length > 0 && !this.draining) {
      const chunk = this.queue.shift()!;
      this.stats.queuedBytes -= chunk.length;
      this.push(stream, chunk);
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
    this.stream = this.connect();
  }

  private setState(state: TransportState, error?: Error): void {
    if (state === this.stateNow) return;
    this.stateNow = state;
    if (state === 'open' || state === 'closed') {
      const waiters = this.openWaiters;
      this.openWaiters = [];
      for (const w of waiters) {
        if (state === 'open') w.resolve();
        else w.reject(new Error(`transport ${this.path} closed before it opened`));
      }
    }
    this.options.onState?.(state, error);
  }
}
