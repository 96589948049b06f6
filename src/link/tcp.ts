/**
 * A level's radio gateway behind a serial-to-Ethernet device server, over raw TCP: the same
 * bytes as on the serial line, so the link layer above cannot tell the two apart. Both boxes
 * of a pair reach the same device server, which is what lets a takeover reconnect to the
 * gateways; the device server follows the box that connected last.
 *
 * A connection that cannot be made within the connect timeout, that the peer closes or resets,
 * or that TCP keepalive finds dead is retried with the same backoff as a serial device
 * (transport.ts).
 */
import net from 'node:net';
import { ReconnectingTransport, type TransportOptions } from './transport.js';

export interface TcpDevice {
  host: string;
  port: number;
}

const TCP_DEVICE = /^tcp:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;

/** `tcp://host:port` (an IPv6 host in brackets) as host and port; undefined for any other device string. */
export function parseTcpDevice(device: string): TcpDevice | undefined {
  const m = TCP_DEVICE.exec(device);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

export interface TcpTransportOptions extends TransportOptions {
  /** `tcp://host:port` of the device server's port for this gateway. */
  path: string;
  /**
   * A connection not made by then is given up and retried: a SYN to a powered-off device
   * server would otherwise wait out the kernel's two minutes of retries.
   */
  connectTimeoutMs?: number;
  /**
   * Idle time before TCP keepalive probes an open connection whose peer has gone silent (a
   * device server powered off or cut off without a FIN); a dead one is then lost and retried.
   */
  keepAliveMs?: number;
}

export class TcpTransport extends ReconnectingTransport<net.Socket> {
  private readonly device: TcpDevice;
  private readonly connectTimeoutMs: number;
  private readonly keepAliveMs: number;

  constructor(options: TcpTransportOptions) {
    super(options.path, options, { noun: 'TCP device server' });
    const device = parseTcpDevice(options.path);
    if (!device) throw new RangeError(`not a tcp://host:port device: ${options.path}`);
    this.device = device;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.keepAliveMs = options.keepAliveMs ?? 5000;
  }

  protected connect(): net.Socket {
    const socket = net.connect({ host: this.device.host, port: this.device.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: this.keepAliveMs });
    socket.setTimeout(this.connectTimeoutMs, () => {
      const err: NodeJS.ErrnoException = new Error(`connect ETIMEDOUT ${this.device.host}:${this.device.port}`);
      err.code = 'ETIMEDOUT';
      this.lost(socket, err);
    });
    socket.once('connect', () => {
      socket.setTimeout(0); // from here on, keepalive tells a dead peer from a quiet line
      this.opened(socket, { host: this.device.host, port: this.device.port });
    });
    socket.on('data', (chunk: Buffer) => this.received(socket, chunk));
    socket.on('error', (err: Error) => this.lost(socket, err));
    // Without an error, the device server closed it: another box connected, or it restarted.
    socket.on('close', () => this.lost(socket, new Error('connection closed by the device server')));
    return socket;
  }

  protected async dispose(socket: net.Socket): Promise<void> {
    socket.removeAllListeners();
    socket.on('error', () => undefined); // a late reset of a socket being closed is not news
    if (socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.destroy();
    });
  }
}
