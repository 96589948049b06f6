/**
 * A whole store, from the active box to a standby that cannot continue the log from its own
 * (a new box, one whose store went past what the log kept, or one that was trimmed past). The
 * active serves a hot backup (readers and writers go on meanwhile) over HTTPS on the pair's
 * peer port, to a caller that proves it holds the pair's shared secret keys; the standby
 * writes it beside its store and swaps it in whole. The backup carries the log point it was
 * taken at, so the standby follows the log from there.
 */
import { createHmac } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Store } from '../store/store.js';

export const SNAPSHOT_PATH = '/replication/snapshot';
/** Longest a snapshot download may stall before it is given up and tried again. */
const IDLE_MS = 30_000;

/** The bearer token of the peer port: both boxes derive it from the token key they share. */
export function peerToken(tokenKey: Buffer): string {
  return createHmac('sha256', tokenKey).update('warehouse-controller replication peer').digest('hex');
}

export interface PeerServerOptions {
  store: Store;
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
  token: string;
  /** Where the backup is written before it is sent (removed after). */
  scratchDir: string;
}

/** Serves snapshots of `store` on the peer port; resolves once it listens. */
export async function servePeer(options: PeerServerOptions): Promise<Server> {
  mkdirSync(options.scratchDir, { recursive: true, mode: 0o700 });
  let next = 0;
  const server = createServer({ cert: readFileSync(options.certFile), key: readFileSync(options.keyFile) }, (req, res) => {
    if (req.url !== SNAPSHOT_PATH || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401).end();
      return;
    }
    const file = path.join(options.scratchDir, `snapshot-${process.pid}-${next++}.mdb`);
    options.store.backup(file).then(
      async () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        try {
          await pipeline(createReadStream(file), res);
        } finally {
          rmSync(file, { force: true });
        }
      },
      (err: unknown) => {
        rmSync(file, { force: true });
        res.writeHead(503, { 'content-type': 'text/plain' }).end(`no snapshot: ${(err as Error).message}`);
      },
    ).catch(() => rmSync(file, { force: true }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}

/** Downloads the active's snapshot from `peerUrl` into `file` (written whole or not at all). */
export async function fetchSnapshot(peerUrl: string, token: string, file: string): Promise<void> {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const partial = `${file}.part`;
  await new Promise<void>((resolve, reject) => {
    // The peer's certificate is the box's own (often self-signed): the shared token, not the
    // certificate, tells the boxes of a pair apart from anything else.
    const req = request(new URL(SNAPSHOT_PATH, peerUrl), { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: IDLE_MS }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`the active box refused a snapshot: HTTP ${res.statusCode}`));
        return;
      }
      pipeline(res, createWriteStream(partial, { mode: 0o600 })).then(resolve, reject);
    });
    req.on('timeout', () => req.destroy(new Error(`snapshot download from ${peerUrl} stalled`)));
    req.on('error', reject);
    req.end();
  }).catch((err: unknown) => {
    rmSync(partial, { force: true });
    throw err;
  });
  renameSync(partial, file);
}

/** Puts a downloaded snapshot in place of the (closed) store in `dbDir`. */
export function installSnapshot(file: string, dbDir: string): void {
  const replaced = `${dbDir}.replaced`;
  rmSync(replaced, { recursive: true, force: true });
  renameSync(dbDir, replaced);
  mkdirSync(dbDir, { recursive: true, mode: 0o700 });
  renameSync(file, path.join(dbDir, 'warehouse.mdb'));
  rmSync(replaced, { recursive: true, force: true });
}
