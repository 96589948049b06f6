/** Starts the whole app (store, certificate, routes) in a fresh state directory on a free port. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config/config.js';
import { startApp, type App, type AppOptions } from '../../src/app.js';
import { Client } from './client.js';
import { memoryLogger } from './server.js';
import { LogTail } from '../../src/log/tail.js';
import { e2eSite } from '../fixtures/e2e-site.js';
import { until } from './until.js';

export interface TestApp {
  app: App;
  client: Client;
  lines: any[];
  stateDir: string;
  close(): Promise<void>;
}

/** Starts an app; `env` adds WAREHOUSE_* settings, `options` the app's own. */
export async function startTestApp(env: Record<string, string> = {}, options: AppOptions = {}): Promise<TestApp> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'wh-app-'));
  const config: Config = loadConfig({ WAREHOUSE_STATE_DIR: stateDir, WAREHOUSE_PORT: '0', WAREHOUSE_LOG_LEVEL: 'debug', WAREHOUSE_LINKS: 'off', ...env });
  const logTail = new LogTail();
  const { logger, lines } = memoryLogger('debug', logTail);
  const app = await startApp(config, logger, { checkResponses: true, logTail, ...options });
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

/** The first administrator's credentials, as the daemon writes them on first start. */
export interface Bootstrap {
  email: string;
  password: string;
  api_key: string;
}

export interface AdminApp extends TestApp {
  boot: Bootstrap;
  /** A client authenticated with the bootstrap API key (every permission). */
  admin: Client;
}

/** Starts an app and a client holding the bootstrap key; `close` closes both. */
export async function startAdminApp(env: Record<string, string> = {}): Promise<AdminApp> {
  const a = await startTestApp(env);
  const boot = JSON.parse(readFileSync(path.join(a.stateDir, 'bootstrap-admin.json'), 'utf8')) as Bootstrap;
  const admin = new Client(a.app.port, readFileSync(a.app.tls.certFile), boot.api_key);
  return {
    ...a, boot, admin,
    async close() {
      admin.close();
      await a.close();
    },
  };
}

/** The whole daemon on the end-to-end site (test/fixtures/e2e-site.ts, or a variant of it) with its simulated bots, once all three are online. */
export async function startE2eApp(env: Record<string, string> = {}, site = e2eSite()): Promise<AdminApp> {
  const siteFile = path.join(mkdtempSync(path.join(tmpdir(), 'wh-e2e-')), 'site.json');
  writeFileSync(siteFile, JSON.stringify(site));
  const a = await startAdminApp({ WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '4', ...env });
  await until('three bots online', async () => (await a.admin.request('/api/v2/bots')).json.filter((b: { online: boolean }) => b.online).length === 3, 30_000);
  return a;
}
