/**
 * The serial line between a simulated gateway and the controller: a pseudo-terminal pair from
 * the addon. The simulator keeps the master end; the controller opens the slave's path with
 * `serialport` exactly as it opens a USB adapter.
 *
 * The simulator also holds the slave open itself, for one reason: when the last holder of the
 * slave closes it, reading the master fails with EIO until someone reopens it, and Node's tty
 * stream treats that as the end and closes the master, which would remove the device for
 * good. With our own slave descriptor the line stays up while the controller closes and
 * reopens the device, the way a gateway stays powered while its USB cable is replugged.
 */
import fs from 'node:fs';
import tty from 'node:tty';
import { openPty } from '../native/addon.js';

/**
 * Bytes the gateway holds towards the controller while nobody reads the line. PROTOCOL.md 2
 * asks for at least 4 KiB per direction; beyond that a gateway drops, and so does this one.
 */
export const GATEWAY_BUFFER_BYTES = 4096;

export interface LineCounters {
  bytes_in: number;
  bytes_out: number;
  /** frames the gateway dropped because its buffer towards the controller was full */
  overflow_drops: number;
}

/**
 * Writes one wire frame towards the controller unless the gateway's buffer is full, where a
 * gateway drops it (and counts it); false when dropped.
 */
export function writeBounded(stream: NodeJS.WritableStream & { writableLength: number }, wire: Buffer, counters: LineCounters): boolean {
  if (stream.writableLength > GATEWAY_BUFFER_BYTES) {
    counters.overflow_drops++;
    return false;
  }
  counters.bytes_out += wire.length;
  stream.write(wire);
  return true;
}

/** The gateway's end of the line to the controller: a pty here, a TCP port in tcp-line.ts. */
export interface GatewayLine {
  /** what the controller opens: the pty slave's path, or the layout's tcp://host:port */
  readonly path: string;
  readonly counters: LineCounters;
  /** Settles once the controller can reach the line (a TCP port listens); absent when it can at once. */
  readonly listening?: Promise<void>;
  /** Writes one wire frame; false when it was dropped. */
  write(wire: Buffer): boolean;
  /** Takes the line away: a controller holding it sees a disconnect. */
  close(): void;
}

export class PtyLine implements GatewayLine {
  readonly path: string;
  readonly counters: LineCounters = { bytes_in: 0, bytes_out: 0, overflow_drops: 0 };
  private readonly stream: tty.ReadStream;
  private readonly slaveFd: number;
  private closed = false;

  constructor(onBytes: (bytes: Buffer) => void) {
    const pty = openPty();
    this.path = pty.path;
    this.slaveFd = fs.openSync(pty.path, fs.constants.O_RDWR | fs.constants.O_NOCTTY);
    // A tty stream reads and writes the master without blocking a thread of the libuv pool.
    this.stream = new tty.ReadStream(pty.fd);
    this.stream.on('data', (chunk: Buffer) => {
      this.counters.bytes_in += chunk.length;
      onBytes(chunk);
    });
    this.stream.on('error', () => undefined); // only seen while closing
  }

  /** Writes one wire frame; false when it was dropped because the line is backed up. */
  write(wire: Buffer): boolean {
    if (this.closed) return false;
    return writeBounded(this.stream, wire, this.counters);
  }

  /** Closes both ends: the device path disappears and a controller holding it sees a disconnect. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.destroy();
    fs.closeSync(this.slaveFd);
  }
}
