/**
 * The daemon as one box of a replicated pair (WAREHOUSE_REPLICATION_ENDPOINTS set): it holds
 * the state directory for as long as it runs, whatever its role, runs the pair member, starts
 * the whole app when the box becomes the active one, and keeps the status file written while
 * it is a standby (the app writes it while active). While standby it also keeps a brain thread
 * loaded, so a takeover starts the brain without waiting for its modules.
 */
import { mkdirSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startApp, type App, type AppOptions } from '../app.js';
import { spareBrainThread } from '../brain/host/host.js';
import type { Config } from '../config/config.js';
import { loadSecrets } from '../domain/auth/secrets.js';
import { ensureCertificate } from '../http/tls.js';
import type { Logger } from '../log/logger.js';
import { holdStateDir } from '../state-dir.js';
import { removeStatusFile, STATUS_PERIOD_MS, writeStatusFile } from '../status-file.js';
import { VERSION } from '../version.js';
import { PairMember } from './pair.js';
import { peerToken } from './snapshot.js';

/** The daemon of one box of a pair, as main.ts drives it. */
export interface PairDaemon {
  /** The app while this box is the active one. */
  app(): App | undefined;
  pair: PairMember;
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the box's pair member; the app follows whenever the box becomes the active one. */
export async function startPairDaemon(config: Config, logger: Logger, options: AppOptions = {}): Promise<PairDaemon> {
  mkdirSync(config.state_dir, { recursive: true, mode: 0o700 });
  const lock = holdStateDir(config.state_dir);
  const tls = await ensureCertificate(config.state_dir, config.tls_cert, config.tls_key);
  const secrets = loadSecrets(config.state_dir);
  let app: App | undefined;
  let spare: Worker | undefined;
  let closing = false;
  const failed = (err: Error) => logger.warn({ err }, 'the standby\'s spare brain thread failed; a takeover starts a new one');
  const ended = () => (spare = undefined);
  const prepareSpare = () => {
    if (spare || closing) return;
    spare = spareBrainThread();
    // Unref'd: a spare never keeps the process alive. One that fails is replaced at the takeover.
    spare.unref();
    spare.on('error', failed).on('exit', ended);
  };
  /** The spare, no longer the standby's to watch: the app's brain handles its errors and its end. */
  const takeSpare = () => {
    const thread = spare;
    spare = undefined;
    thread?.off('error', failed).off('exit', ended);
    return thread;
  };
  const pair = new PairMember({
    config, logger, endpoints: config.replication_endpoints!.split(','), peerToken: peerToken(secrets.tokenKey),
    tls: { certFile: tls.certFile, keyFile: tls.keyFile },
    startActive: async (start) => {
      const brainThread = takeSpare();
      const started = await startApp(config, logger, { ...options, replication: start, brainThread }).catch(async (err: unknown) => {
        await brainThread?.terminate();
        prepareSpare();
        throw err;
      });
      app = started;
      return {
        close: async () => {
          app = undefined;
          await started.close();
          prepareSpare();
        },
      };
    },
  });
  const startedAt = new Date().toISOString();
  const writeStandbyStatus = () => {
    if (app) return;
    try {
      writeStatusFile(config.state_dir, {
        version: VERSION, pid: process.pid, started_at: startedAt, written_at: new Date().toISOString(), port: 0,
        storage_status: 'OFF', storage: { free_bytes: null, full: false, fault: null },
        certificate: { file: tls.certFile, valid_to: new Date(tls.validTo).toISOString() }, lines: [], bots: [], replication: pair.status(),
      });
    } catch (err) {
      logger.debug({ err }, 'could not write status.json');
    }
  };
  const statusTimer = setInterval(writeStandbyStatus, Math.min(STATUS_PERIOD_MS, 1000)).unref();
  prepareSpare();
  pair.start();
  return {
    app: () => app,
    pair,
    reload: async () => {
      await app?.reload();
    },
    close: async () => {
      closing = true;
      clearInterval(statusTimer);
      await pair.close();
      await spare?.terminate();
      removeStatusFile(config.state_dir);
      lock.release();
    },
  };
}
