/**
 * A simulated gateway behind a serial-to-Ethernet device server: it listens on the TCP port
 * its level's layout names (tcp://host:port) and carries the same bytes as the pty line. As a
 * device server does, it serves one controller at a time and the newest connection wins: a
 * box taking over connects while the old box may still hold its connection, and the gateway
 * must follow the new one. While no controller is connected the gateway's bytes towards it are
 * lost (its uplink is down); the nodes behind it go on as physical bots would.
 */
import net from 'node:net';
import { writeBounded, type GatewayLine, type LineCounters } from './line.js';

/** What a TCP line tells its owner, for the log. */
export interface TcpLineEvents {
  connected(remote: string, replaced: string | undefined): void;
  disconnected(remote: string): void;
  failed(err: Error): void;
}

export interface TcpLineCounters extends LineCounters {
  /** controller connections accepted */
  connections: number;
  /** frames dropped because no controller was connected */
  unconnected_drops: number;
}

export class TcpLine implements GatewayLine {
  readonly counters: TcpLineCounters = { bytes_in: 0, bytes_out: 0, overflow_drops: 0, connections: 0, unconnected_drops: 0 };
  private readonly server: net.Server;
  private socket: net.Socket | undefined;
  private closed = false;
  /** Settles once the port listens, or with why it cannot. */
  readonly listening: Promise<void>;

  /** Listens on `bind`:`port` for the controller; `path` is the device string controllers open. */
  constructor(readonly path: string, bind: string, port: number, private readonly onBytes: (bytes: Buffer) => void, private readonly events?: TcpLineEvents) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.listening = new Promise((resolve, reject) => {
      this.server.once('listening', () => resolve());
      this.server.once('error', (err) => {
        reject(err);
        events?.failed(err);
      });
    });
    this.listening.catch(() => undefined); // the owner awaits it; a late failure is also reported to `failed`
    this.server.listen({ host: bind, port });
  }

  /** Writes one wire frame; false when it was dropped (no controller, or the connection backed up). */
  write(wire: Buffer): boolean {
    const socket = this.socket;
    if (this.closed || !socket) {
      this.counters.unconnected_drops++;
      return false;
    }
    return writeBounded(socket, wire, this.counters);
  }

  /** Stops listening and drops the controller's connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.destroy();
    this.socket = undefined;
    this.server.close();
  }

  private accept(socket: net.Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    const older = this.socket;
    const replaced = older ? `${older.remoteAddress ?? '?'}:${older.remotePort ?? '?'}` : undefined;
    this.socket = socket;
    this.counters.connections++;
    older?.destroy();
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 5000);
    socket.on('data', (chunk: Buffer) => {
      if (socket !== this.socket) return;
      this.counters.bytes_in += chunk.length;
      this.onBytes(chunk);
    });
    socket.on('error', () => undefined); // a reset is a close like any other
    socket.on('close', () => {
      if (socket === this.socket) this.socket = undefined;
      this.events?.disconnected(remote);
    });
    this.events?.connected(remote, replaced);
  }
}
