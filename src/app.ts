/**
 * Assembles the daemon from its configuration: state directory, store, certificate, HTTPS
 * server with the route table. `main.ts` adds process concerns (signals, systemd); tests
 * start the same app on a free port.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { setLevel, type Logger } from './log/logger.js';
import { HttpServer } from './http/server.js';
import { ensureCertificate, expiryWarning, notYetValidWarning, readCertificate, selfSignedFiles, type TlsFiles } from './http/tls.js';
import { planReload } from './reload.js';
import { SLOW_COMMIT_MS, storageHealth, watchStorage } from './storage-watch.js';
import { removeStatusFile, STATUS_PERIOD_MS, writeStatusFile } from './status-file.js';
import { TlsFilesError } from './config/tls-files.js';
import { docsRoutes } from './http/routes/docs.js';
import { healthRoute } from './http/routes/health.js';
import { Store } from './store/store.js';
import { MIGRATIONS } from './store/migrations.js';
import { Auth } from './domain/auth/auth.js';
import { loadSecrets } from './domain/auth/secrets.js';
import { authRoutes } from './http/routes/auth.js';
import { API_INFO } from './version.js';
import { loadSite, type Site } from './domain/site/load.js';
import { Inventory } from './domain/inventory/inventory.js';
import { InventoryView } from './domain/inventory/view.js';
import { SkuTable } from './domain/inventory/sku-table.js';
import { OpenWork } from './domain/requests/open-work.js';
import { jobSource, requestSource } from './domain/requests/list-sources.js';
import { SkuImages } from './domain/inventory/images.js';
import { inventoryRoutes } from './http/routes/inventory.js';
import { Events } from './domain/events/events.js';
import { EVENT } from './domain/events/catalogue.js';
import { Settings } from './domain/settings/settings.js';
import { settingRegistry } from './domain/settings/registry.js';
import { authSettingsFrom } from './domain/settings/auth-settings.js';
import { settingsRoutes } from './http/routes/settings.js';
import { eventRoutes, eventStreamRoute } from './http/routes/events.js';
import { eventSource } from './domain/events/list-source.js';
import { VERSION } from './version.js';
import { holdStateDir } from './state-dir.js';
import { Diagnostics } from './domain/diagnostics/report.js';
import { reportRoutes } from './http/routes/report.js';
import type { LogTail } from './log/tail.js';
import { startLines } from './lines/start.js';
import type { SiteLines } from './lines/site-lines.js';
import type { SimulatedSite } from './lines/simulated-site.js';
import { botRoutes } from './http/routes/bots.js';
import { ledSequenceLimits } from './link/protocol/table.js';
import { botStreamRoute } from './http/routes/bot-stream.js';
import { siteMapRoutes } from './http/routes/site-map.js';
import { consoleRoutes } from './http/routes/console.js';
import { SupportOutbox } from './domain/support/outbox.js';
import { SupportForwarder } from './domain/support/forwarder.js';
import { supportRoutes } from './http/routes/support.js';
import { workflowRoutes } from './http/routes/workflows.js';
import { Workflows } from './domain/workflows/workflows.js';
import { Requests } from './domain/requests/requests.js';
import { botRecords } from './domain/bots/records.js';
import { seedBots } from './domain/bots/bots.js';
import { BrainHost } from './brain/host/host.js';
import { ALL_COLLECTIONS } from './domain/collections.js';
import { requestRoutes } from './http/routes/requests.js';
import { systemRoutes } from './http/routes/system.js';
import { SystemService } from './domain/system/control.js';
import { eventRecords } from './domain/events/events.js';
import { HistoryArchive } from './domain/history/archive.js';
import { HistoryPruner } from './domain/history/pruner.js';
import { Kpi } from './domain/kpi/kpi.js';
import { kpiRoutes } from './http/routes/kpi.js';
import { StoreUsage } from './domain/history/store-usage.js';
import { SiteMetrics } from './metrics/site-metrics.js';
import { metricsRoutes } from './http/routes/metrics.js';
import type { ActiveStart } from './replication/pair.js';

/** How often the history pruner looks for history past its retention (a pass with nothing due reads two index entries). */
const HISTORY_PASS_MS = 10 * 60_000;
/** How often the store's size is sampled for its growth and forecast. */
const USAGE_SAMPLE_MS = 10 * 60_000;

export interface App {
  config: Config;
  server: HttpServer;
  store: Store;
  auth: Auth;
  events: Events;
  settings: Settings;
  site: Site;
  inventory: Inventory;
  view: InventoryView;
  requests: Requests;
  brain: BrainHost;
  system: SystemService;
  /** The figures GET /metrics exposes. */
  metrics: SiteMetrics;
  /** The radio lines, unless WAREHOUSE_LINKS=off. */
  lines: SiteLines | undefined;
  /** The supervised simulator of the simulated levels, if any. */
  simulator: SimulatedSite | undefined;
  tls: TlsFiles;
  port: number;
  /** Stops the listener, waits for in-flight requests (bounded), closes the store. */
  close(): Promise<void>;
  /** SIGHUP: reads the configuration and certificate again; applies the log level and the certificate. */
  reload(): Promise<void>;
}

export interface AppOptions {
  /** Check each answer against its response schema (tests). */
  checkResponses?: boolean;
  /** The active box of a replicated pair: the store writes through the pair's log (the pair holds the state directory). */
  replication?: ActiveStart;
  /** Recent log lines for the diagnostics report. */
  logTail?: LogTail;
  /** A brain thread already loaded (spareBrainThread) for the brain to start on. */
  brainThread?: Worker;
}

/** Starts the whole daemon except process-level concerns. */
export async function startApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  mkdirSync(config.state_dir, { recursive: true, mode: 0o700 });
  // Before anything is read or written: a second daemon on this directory stops here.
  const lock = options.replication ? { release: () => undefined } : holdStateDir(config.state_dir);
  // What a failed start has opened, closed in reverse: a start that fails leaves nothing running.
  const undo: Array<() => unknown> = [() => lock.release()];
  try {
    return await assemble(config, logger, options, undo, () => lock.release());
  } catch (err) {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (cleanup) {
        logger.error({ err: cleanup }, 'could not close what a failed start opened');
      }
    }
    throw err;
  }
}

async function assemble(config: Config, logger: Logger, options: AppOptions, undo: Array<() => unknown>, releaseLock: () => void): Promise<App> {
  // The site and the certificate first: a bad file stops the start before anything is written.
  const site = loadSite(config.site);
  logger.info({ site: config.site, name: site.name, levels: site.levels.length, spaces: site.levels.reduce((n, l) => n + l.storage.length, 0) }, 'site layout loaded');
  const tls = await ensureCertificate(config.state_dir, config.tls_cert, config.tls_key);
  logger.info({ cert: tls.certFile, sha256: tls.fingerprint256, self_signed: tls.selfSigned, created: tls.created, valid_to: new Date(tls.validTo).toISOString() }, 'TLS certificate');
  const store = await Store.open(
    { dir: path.join(config.state_dir, 'db'), mapSize: config.store_map_size_bytes },
    ALL_COLLECTIONS,
    MIGRATIONS,
  );
  undo.push(() => store.close());
  // Before anything is written: an unstamped batch would be missing from the pair's log.
  const replication = options.replication?.gate(store);
  store.replicateTo(replication);
  logger.info({ dir: path.join(config.state_dir, 'db'), schema_version: store.schemaVersion(), replicated: replication !== undefined }, 'store opened');
  const events = new Events(store, Date.now);
  const settings = new Settings(store, settingRegistry({ timeZone: config.timezone, maxPageSize: config.max_page_size }), Date.now, events);
  // Both are restart_required: read once, here. A stored setting wins over the configuration.
  const timeZone = settings.value<string>('time.zone');
  const maxPageSize = settings.value<number>('api.maxPageSize');
  const pending = settings.pendingRestart();
  if (Object.keys(pending).length > 0) logger.warn({ pending }, 'settings pending a restart');
  const auth = await Auth.open({
    store, secrets: loadSecrets(config.state_dir), settings: authSettingsFrom(settings), logger, stateDir: config.state_dir, now: Date.now, events,
  });
  undo.push(() => auth.close());
  const stopWatching = watchStorage({ store, dir: path.join(config.state_dir, 'db'), lowBytes: config.disk_low_bytes, events, logger, everyMs: 30_000, now: Date.now });
  undo.push(stopWatching);

  const view = new InventoryView(site, store);
  // Open work holds SKUs against deletion; the requests are built right after the inventory.
  const inventory: Inventory = new Inventory({ store, site, view, now: Date.now, events, skuHolds: (id): string | undefined => requests.skuHold(id) });
  if (await inventory.seedFromLayout()) logger.info({ carriers: site.layout.carriers.length, skus: site.layout.skus.length }, 'inventory seeded from the site layout');
  const building = performance.now();
  view.build();
  logger.info({ rows: view.size, ms: Math.round(performance.now() - building) }, 'inventory view built');
  // The SKU list's source, in memory: a search reads every SKU.
  const skuTable = new SkuTable(store);
  undo.push(() => skuTable.close());

  if (await seedBots(store, site, Date.now())) logger.info({ bots: site.levels.reduce((n, l) => n + l.bots.length, 0) }, 'bots registered from the site layout');
  const refresh = (carrierIds: readonly string[], skuIds: readonly string[]) => {
    if (carrierIds.length > 0) view.refreshCarriers(carrierIds);
    for (const id of skuIds) view.refreshSku(id);
  };
  const requests: Requests = new Requests({
    store, site, inventory, refresh, events, now: Date.now,
    externalPicking: () => settings.value<boolean>('picking.external.enabled'),
    botLevel: (id) => store.collection(botRecords).get(id)?.level_id,
  });
  // The open jobs in memory, for lists of open statuses (the brain's thread keeps its own).
  const openWork = new OpenWork(store, site.levels.map((l) => l.id));
  undo.push(() => openWork.close());

  const supportOutbox = await SupportOutbox.open(config.state_dir, { limits: { maxTotalBytes: config.upload_limit_bytes } });
  supportOutbox.onCreated((key) => {
    events.emit(EVENT.supportIssue, `support issue ${key} stored${config.support_url ? ' and queued for forwarding' : ' (no support endpoint configured)'}`)
      .catch((err: unknown) => logger.error({ err }, 'could not record a support issue event'));
  });
  const storeDir = path.join(config.state_dir, 'db');
  const archive = await HistoryArchive.open(config.archive_dir ?? path.join(config.state_dir, 'archive'), config.archive_quota_bytes);
  const retention = () => ({
    requestDays: settings.value<number>('history.retentionDays'), eventDays: settings.value<number>('events.retentionDays'),
    storeSharePercent: settings.value<number>('history.maxStoreSharePercent'),
  });
  const historyLog = logger.child({ component: 'history' });
  const pruner = new HistoryPruner({ store, events, archive, outbox: supportOutbox, storeDir, now: Date.now, settings: retention, log: historyLog });
  const usage = new StoreUsage({ store, events, pruner, archive, archiveQuotaBytes: config.archive_quota_bytes, storeDir, settings: retention, now: Date.now, log: historyLog });
  const stopPruning = pruner.keep(HISTORY_PASS_MS);
  undo.push(() => pruner.settle(), stopPruning);
  const stopSampling = usage.keep(USAGE_SAMPLE_MS, (err) => historyLog.warn({ err }, 'could not sample the store\'s size'));
  undo.push(stopSampling);

  const supportForwarder = config.support_url
    ? new SupportForwarder({ outbox: supportOutbox, url: config.support_url, logger: logger.child({ component: 'support' }) })
    : undefined;

  const started = config.links === 'on' ? await startLines(config, site, store, events, logger) : undefined;
  undo.push(() => started?.close());
  const lines = started?.lines;
  const brain = new BrainHost({
    config, site, store, logger, events, lines, replication, spare: options.brainThread,
    settings: () => ({ externalPicking: settings.value<boolean>('picking.external.enabled'), chargeBelow: settings.value<number>('brain.chargeBelowPercent'),
      faultClearSeconds: settings.value<number>('brain.faultClearSeconds'),
    }),
  });
  // What the brain's thread commits: the inventory view and the live event stream follow; a
  // setting changed here goes to the brain, and to the pruner (a shorter retention takes effect
  // now, not at the next pass; a pass with nothing due costs two index reads).
  const stopFollowing = store.onCommit((notice, origin) => {
    if (origin === 'remote') {
      if (notice['carriers']) view.refreshCarriers(notice['carriers'].map(String));
      for (const id of notice['skus'] ?? []) view.refreshSku(String(id));
      for (const id of notice['events'] ?? []) {
        const event = store.collection(eventRecords).get(id);
        if (event) events.announce(event);
      }
    } else if (notice['settings']) {
      brain.settingsChanged();
      void pruner.pass().catch(() => undefined);
    }
  });
  undo.push(stopFollowing);
  const system = new SystemService({
    store, requests, events, brain, liveBots: () => lines?.list() ?? [],
    lineUp: (levelId) => lines?.lineStates().find((l) => l.level_id === levelId)?.up ?? true,
  });

  const metrics = new SiteMetrics({
    store, storeDir, slowCommitMs: SLOW_COMMIT_MS, brain: () => brain.figures(), storageStatus: () => system.storageStatus(),
    lines: () => lines?.figures() ?? [], bots: () => lines?.list() ?? [],
    pair: options.replication && (() => options.replication!.status()),
  });
  undo.push(() => metrics.close());
  // The WebSocket streams check a socket's credential again whenever the auth version moves.
  const streamAuth = { authenticate: (headers: Record<string, string>) => auth.authenticate(headers.authorization), version: () => auth.authVersion() };
  const server = new HttpServer({
    host: config.host,
    port: config.port,
    certFile: tls.certFile,
    keyFile: tls.keyFile,
    bodyLimit: config.body_limit_bytes,
    uploadLimit: config.upload_limit_bytes,
    uploadQuota: config.upload_quota_bytes,
    uploadTotal: config.upload_total_bytes,
    uploadDir: path.join(config.state_dir, 'uploads'),
    logger,
    checkResponses: options.checkResponses,
    authenticate: (headers) => auth.authenticate(headers.authorization),
    meter: metrics.http,
    answersWait: replication && (() => replication.settledThrough()),
  });
  const kpi = new Kpi({ store, balconyIds: [...new Set(site.balconies.map((b) => b.id))] });
  await kpi.begin(Date.now());
  metrics.balconies(() => kpi.balconyTotals(Date.now()));
  server.register(
    healthRoute,
    ...kpiRoutes(kpi, timeZone),
    ...docsRoutes(() => server.router.routes, API_INFO),
    ...authRoutes(auth, {
      timeZone, maxPageSize,
      settingsOf: (caller) => ({ ...settings.resolved(caller, 'system', null), ...settings.resolved(caller, 'user', caller.kind === 'user' ? caller.id! : null) }),
      settingsVersion: () => settings.version(),
    }),
    ...inventoryRoutes({ site, inventory, view, skus: skuTable, images: new SkuImages(config.state_dir), timeZone, maxPageSize }),
    ...settingsRoutes(settings, timeZone),
    ...eventRoutes(eventSource(store), { timeZone, maxPageSize }),
    eventStreamRoute(events, { timeZone, maxPageSize, auth: streamAuth }),
    ...supportRoutes({ outbox: supportOutbox, timeZone }),
    ...workflowRoutes({ workflows: new Workflows(store) }),
    ...requestRoutes({
      requests, timeZone, maxPageSize, requestSource: requestSource(store),
      jobSource: jobSource(store, () => settings.value<boolean>('api.jobs.showCreated'), openWork),
    }),
    ...systemRoutes(system, usage, timeZone),
    ...botRoutes(site, system, lines, ledSequenceLimits()),
    botStreamRoute(system, streamAuth),
    ...siteMapRoutes(site),
    ...consoleRoutes(),
    ...metricsRoutes(metrics),
    ...reportRoutes(new Diagnostics({
      config, store, site, events, logTail: options.logTail, now: Date.now, counts: () => store.counts(), linkStats: lines && (() => lines.stats()),
      settings: () => ({ values: settings.known(), pending_restart: settings.pendingRestart() }),
    })),
  );

  metrics.http.prepare(server.router.routes);
  // The brain first: when the API says it listens, requests are dispatched. A brain that cannot
  // start is retried in the background; the API serves meanwhile.
  undo.push(() => brain.stop());
  await brain.start().catch((err: unknown) => logger.error({ err }, 'the brain did not start; retrying in the background'));
  const port = await server.listen();
  undo.push(() => server.close(0));
  logger.info({ url: `https://${config.host}:${port}/api`, host: config.host, port }, 'HTTPS API listening');
  await supportForwarder?.start();
  await events.emit(EVENT.started, `controller ${VERSION} started on port ${port} with site "${site.name}"`);
  const pairEvents = { took_over: EVENT.pairTookOver, unprotected: EVENT.pairUnprotected, protected: EVENT.pairProtected } as const;
  options.replication?.onChange((kind, message) => {
    events.emit(pairEvents[kind], message).catch((err: unknown) => logger.error({ err }, 'could not record a pair event'));
  });

  let running = config;
  let certificate: TlsFiles = tls;
  const record = (kind: typeof EVENT[keyof typeof EVENT], message: string) => events.emit(kind, message).catch((err: unknown) => logger.error({ err }, 'could not record an event'));
  // At start and daily: a renewal is due before clients start refusing the controller.
  const checkExpiry = () => {
    const now = Date.now();
    const warning = expiryWarning(certificate.certFile, certificate.validTo, now);
    if (warning) {
      logger.warn({ cert: certificate.certFile, valid_to: new Date(certificate.validTo).toISOString() }, warning);
      void record(EVENT.certificateExpiring, warning);
    }
    const early = notYetValidWarning(certificate.certFile, certificate.validFrom, now);
    if (early) {
      logger.warn({ cert: certificate.certFile, valid_from: new Date(certificate.validFrom).toISOString() }, early);
      void record(EVENT.certificateNotYetValid, early);
    }
  };
  checkExpiry();
  const expiryTimer = setInterval(checkExpiry, 24 * 3600_000).unref();
  const startedAt = new Date().toISOString();
  const writeStatus = () => {
    try {
      writeStatusFile(config.state_dir, {
        version: VERSION, pid: process.pid, started_at: startedAt, written_at: new Date().toISOString(), port,
        storage_status: system.storageStatus(), storage: storageHealth(store, storeDir), store: usage.report(),
        certificate: { file: certificate.certFile, valid_to: new Date(certificate.validTo).toISOString() },
        lines: lines?.lineStates() ?? [], bots: [...(lines?.list() ?? [])],
        ...(options.replication ? { replication: options.replication.status() } : {}),
      });
    } catch (err) {
      // A full disk must not stop the daemon: the file is for the technician's convenience.
      logger.debug({ err }, 'could not write status.json');
    }
  };
  writeStatus();
  const statusTimer = setInterval(writeStatus, STATUS_PERIOD_MS).unref();

  return {
    config, server, store, auth, events, settings, site, inventory, view, requests, brain, system, metrics, lines, simulator: started?.simulator, tls, port,
    async reload() {
      const refuse = async (problems: string[]) => {
        logger.error({ code: 'reload_refused', problems }, 'reload refused; the running configuration and certificate are kept');
        await record(EVENT.reloadRefused, `reload refused, nothing changed: ${problems.join('; ')}`);
      };
      let next: Config;
      try {
        next = loadConfig();
      } catch (err) {
        return refuse(err instanceof ConfigError ? err.problems : [String(err)]);
      }
      const plan = planReload(running, next);
      const pair = plan.tls ?? selfSignedFiles(config.state_dir);
      let renewed: ReturnType<typeof readCertificate>;
      try {
        renewed = readCertificate(pair.cert, pair.key);
      } catch (err) {
        return refuse(err instanceof TlsFilesError ? err.problems : [String(err)]);
      }
      const changes: string[] = [];
      if (renewed.fingerprint256 !== certificate.fingerprint256 || renewed.certFile !== certificate.certFile) {
        try {
          server.useCertificate(renewed.certFile, renewed.keyFile);
        } catch (err) {
          return refuse([(err as Error).message]);
        }
        certificate = { ...certificate, ...renewed };
        changes.push(`certificate ${renewed.certFile} (sha256 ${renewed.fingerprint256}, valid to ${new Date(renewed.validTo).toISOString()})`);
      }
      if (plan.logLevel) {
        setLevel(logger, plan.logLevel);
        brain.setLogLevel(plan.logLevel);
        changes.push(`log level ${plan.logLevel}`);
      }
      running = { ...running, log_level: next.log_level, tls_cert: next.tls_cert, tls_key: next.tls_key };
      const waiting = plan.restartOnly.length > 0 ? `; waiting for a restart: ${plan.restartOnly.join(', ')}` : '';
      const summary = `${changes.length > 0 ? changes.join(', ') : 'nothing changed'}${waiting}`;
      logger.info({ changes, restart_only: plan.restartOnly, valid_to: new Date(certificate.validTo).toISOString() }, `configuration reloaded: ${summary}`);
      await record(EVENT.reloaded, `configuration reloaded: ${summary}`);
      checkExpiry();
    },
    async close() {
      clearInterval(expiryTimer);
      clearInterval(statusTimer);
      removeStatusFile(config.state_dir);
      await events.emit(EVENT.stopping, 'controller stopping').catch((err: unknown) => logger.error({ err }, 'could not record the stop event'));
      stopPruning();
      stopSampling();
      stopWatching();
      const { unfinished } = await server.close(config.shutdown_timeout_ms);
      await brain.stop();
      await pruner.settle();
      if (unfinished > 0) logger.warn({ unfinished }, 'shutdown timeout: requests still running were cut off');
      await supportForwarder?.close();
      stopFollowing();
      await started?.close();
      await auth.close();
      metrics.close();
      await store.close();
      releaseLock();
    },
  };
}
