/**
 * The serial line of one level's radio gateway, over the `serialport` package: opens the
 * device at the protocol's line settings, hands every received chunk to `onData`, writes with
 * the stream's backpressure respected, and reopens the device with exponential backoff when it
 * disappears (a USB adapter unplugged, a gateway power-cycled, the simulator restarted).
 *
 * It knows nothing about frames: the link layer above (the native link, or a test acting as
 * the controller) pushes bytes in and gets bytes out. Each `write()` is kept whole, queued or
 * dropped as one piece, so a caller that writes one frame per call never puts half a frame on
 * the line (transport.ts, shared with the TCP transport).
 */
import { SerialPort } from 'serialport';
import { ReconnectingTransport, type TransportOptions } from './transport.js';

export type { TransportLogger, TransportState, TransportStats } from './transport.js';

/** PROTOCOL.md section 2: 921600 baud, 8N1, no flow control. */
export const LINE_BAUD = 921600;

export interface SerialTransportOptions extends TransportOptions {
  /** Device path (`/dev/ttyUSB0`, a pty slave, or a symlink to one). */
  path: string;
  baudRate?: number;
}

export class SerialTransport extends ReconnectingTransport<SerialPort> {
  private readonly baudRate: number;

  constructor(options: SerialTransportOptions) {
    super(options.path, options, { noun: 'serial device' });
    this.baudRate = options.baudRate ?? LINE_BAUD;
  }

  protected connect(): SerialPort {
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
    port.on('data', (chunk: Buffer) => this.received(port, chunk));
    // 'close' comes after an unplug (a DisconnectedError) or any other end of the port.
    port.on('close', (err: Error | null) => this.lost(port, err ?? new Error('port closed')));
    port.on('error', (err: Error) => this.lost(port, err));
    port.open((err) => {
      if (err) {
        this.lost(port, err);
        return;
      }
      // Bytes the device buffered while nobody listened are stale (telemetry superseded, acks
      // for frames long retransmitted): start from a clean line. The decoder would resync at
      // the next delimiter anyway; flushing saves it from counting the debris as errors.
      port.flush(() => this.opened(port, { baud: this.baudRate }));
    });
    return port;
  }

  protected async dispose(port: SerialPort): Promise<void> {
    port.removeAllListeners();
    port.on('error', () => undefined); // a late error from a port being closed is not news
    if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}
