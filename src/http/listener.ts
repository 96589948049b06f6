/**
 * The TLS listener: the uWS SSLApp that owns the port, and the certificate reload that replaces
 * it without a moment of the port closed. What an app serves is the caller's (`serve`), the same
 * on every app.
 */
import { createServer, type AddressInfo } from 'node:net';
import { TLS12_CIPHERS } from './hardening.js';
import { SSLApp, us_listen_socket_close, us_socket_local_port, type TemplatedApp, type us_listen_socket } from './uws.js';

export class Listener {
  /** The app accepting new connections; one a certificate reload replaced keeps serving its own. */
  private app: TemplatedApp;
  private readonly retired: TemplatedApp[] = [];
  private listenSocket: us_listen_socket | undefined;
  /** The bound port, once listening. */
  port = 0;

  constructor(
    private readonly host: string,
    private readonly wantedPort: number,
    certFile: string,
    keyFile: string,
    /** Installs the handlers on a new app. */
    private readonly serve: (app: TemplatedApp) => void,
  ) {
    this.app = this.createApp(certFile, keyFile);
  }

  private createApp(certFile: string, keyFile: string): TemplatedApp {
    const app = SSLApp({ cert_file_name: certFile, key_file_name: keyFile, ssl_ciphers: TLS12_CIPHERS });
    this.serve(app);
    return app;
  }

  /** Starts listening; resolves with the bound port. */
  async listen(): Promise<number> {
    // uWS binds with SO_REUSEPORT, which a certificate reload needs (the new app joins the
    // port before the old one leaves), but which would let a second daemon share the port and
    // take half the connections: whoever holds the port is asked first, without that option.
    // uWS sets SO_REUSEPORT only on a given port: port 0 is resolved here first.
    const port = await freePort(this.host, this.wantedPort);
    const socket = port === undefined ? false : this.bind(this.app, port);
    if (!socket) return Promise.reject(new Error(`cannot listen on ${this.host}:${this.wantedPort} (address in use or not available)`));
    this.listenSocket = socket;
    this.port = us_socket_local_port(socket as unknown as Parameters<typeof us_socket_local_port>[0]);
    return this.port;
  }

  /**
   * Serves new connections with another certificate (SIGHUP after a renewal). Open connections
   * keep the old one to their end. The new app joins the port before the old one leaves it
   * (SO_REUSEPORT), so no connection attempt finds the port closed. The caller has checked the files.
   */
  useCertificate(certFile: string, keyFile: string): void {
    if (!this.listenSocket) throw new Error('the server is not listening');
    const next = this.createApp(certFile, keyFile);
    const socket = this.bind(next, this.port);
    if (!socket) throw new Error(`cannot listen on ${this.host}:${this.port} with the new certificate; the old one is kept`);
    us_listen_socket_close(this.listenSocket);
    this.retired.push(this.app);
    this.app = next;
    this.listenSocket = socket;
  }

  /** Stops accepting connections; open ones stay. */
  close(): void {
    if (this.listenSocket) us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }

  /** Binds an app to the port; uWS answers synchronously. */
  private bind(app: TemplatedApp, port: number): us_listen_socket | false {
    let bound: us_listen_socket | false = false;
    app.listen(this.host, port, (socket) => {
      bound = socket;
    });
    return bound;
  }
}

/** The port (a free one for 0) if a socket without SO_REUSEPORT can bind it: nobody listens there. */
function freePort(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(undefined));
    probe.listen({ host, port, exclusive: true }, () => {
      const bound = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
}
