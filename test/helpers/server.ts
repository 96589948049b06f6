/** Starts the framework on a free port with a fresh certificate, for tests of the HTTP layer. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { LogTail } from '../../src/log/tail.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { HttpServer, type ServerOptions } from '../../src/http/server.js';
import { ensureCertificate } from '../../src/http/tls.js';
import type { AnyRoute } from '../../src/http/route.js';
import { Client } from './client.js';

/** A logger whose lines are kept for assertions. */
export function memoryLogger(level = 'debug', tail?: LogTail): { logger: Logger; lines: any[] } {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger(level, sink, tail), lines };
}

let certCache: Promise<{ certFile: string; keyFile: string; dir: string }> | undefined;

/** One self-signed certificate per test process. */
export function testCertificate(): Promise<{ certFile: string; keyFile: string; dir: string }> {
  certCache ??= (async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wh-cert-'));
    const tls = await ensureCertificate(dir);
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { certFile: tls.certFile, keyFile: tls.keyFile, dir };
  })();
  return certCache;
}

export interface TestServer {
  server: HttpServer;
  client: Client;
  lines: any[];
  close(): Promise<void>;
}

/** Starts an HttpServer with the given routes on 127.0.0.1 and a free port. */
export async function startServer(routes: AnyRoute[], options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const cert = await testCertificate();
  const { logger, lines } = memoryLogger();
  const server = new HttpServer({
    host: '127.0.0.1', port: 0, certFile: cert.certFile, keyFile: cert.keyFile,
    bodyLimit: 64 * 1024, uploadLimit: 256 * 1024, logger, checkResponses: true, ...options,
  });
  server.register(...routes);
  const port = await server.listen();
  const client = new Client(port, readFileSync(cert.certFile));
  return {
    server, client, lines,
    async close() {
      client.close();
      await server.close(1000);
    },
  };
}
