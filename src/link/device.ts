/**
 * Which transport carries a level's line, by its layout's device string: `tcp://host:port` is
 * a serial-to-Ethernet device server, anything else a serial device path.
 */
import { SerialTransport } from './serial.js';
import { parseTcpDevice, TcpTransport } from './tcp.js';
import type { ReconnectingTransport, ByteStream, TransportOptions } from './transport.js';

/** A level's line, whatever carries it. */
export type LineTransport = ReconnectingTransport<ByteStream>;

/** The transport for `device` (not started). */
export function createLineTransport(device: string, options: TransportOptions): LineTransport {
  if (parseTcpDevice(device)) return new TcpTransport({ ...options, path: device });
  return new SerialTransport({ ...options, path: device });
}
