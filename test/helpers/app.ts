/** Starts the whole app (store, certificate, routes) in a fresh state directory on a free port. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config/config.js';
import { startApp, type App } from '../../src/app.js';
import { Client } from './client.js';
import { memoryLogger } from './server.js';
import { LogTail } from '../../src/log/tail.js';

export interface TestApp {
  app: App;
  client: Client;
  lines: any[];
  stateDir: string;
  close(): Promise<void>;
}

/** Starts an app; `env` adds WAREHOUSE_* settings. */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-app-'));
  const config: Config = loadConfig({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LOG_LEVEL: 'debug', ...env });
  const logTail = new LogTail();
  const { logger, lines } = memoryLogger('debug', logTail);
  const app = await startApp(config, logger, { checkResponses: true, logTail });
  const client = new Client(app.port, readFileSync(app.tls.certFile));
  return {
    app, client, lines, stateDir,
    async close() {
      client.close();
      await app.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
