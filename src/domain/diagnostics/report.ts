/**
 * The diagnostics report (`GET /report`): one `.tar.gz` in `<state dir>/reports/` with what
 * a support engineer needs to understand a box without logging into it. What goes in is
 * listed here and nowhere else, so that it is easy to check that no secret can: keys,
 * passwords, tokens, the TLS key and custom setting values are never read by this module.
 */
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { create as createTar } from 'tar';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/store.js';
import type { LogTail } from '../../log/tail.js';
import type { Site } from '../site/load.js';
import type { Events } from '../events/events.js';
import { EVENT } from '../events/catalogue.js';
import { eventRecords } from '../events/events.js';
import { VERSION } from '../../version.js';

/** Reports kept; older ones are deleted after each new one. */
export const REPORTS_KEPT = 10;
/** Newest events put in a report. */
const EVENTS_IN_REPORT = 5000;

export interface ReportDeps {
  config: Config;
  store: Store;
  site: Site;
  events: Events;
  logTail?: LogTail;
  /** Resolved values of the controller's own settings (never custom ones). */
  settings: () => Record<string, unknown>;
  /** Counters of each level's radio link, when the links run. */
  linkStats?: () => unknown;
  /** Counts of the store's collections by name. */
  counts: () => Record<string, number>;
  now: () => number;
}

export interface Report {
  tarFilename: string;
  reportPath: string;
}

export class Diagnostics {
  readonly dir: string;
  private last = 0;

  constructor(private readonly deps: ReportDeps) {
    this.dir = path.join(deps.config.state_dir, 'reports');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Writes a new archive and prunes old ones. */
  async create(): Promise<Report> {
    const { deps } = this;
    // Millisecond names sort by time; a second report in the same millisecond takes the next one.
    let at = deps.now();
    if (at <= this.last) at = this.last + 1;
    this.last = at;
    const stamp = new Date(at).toISOString().replace(/[-:.]/g, '');
    const name = `report-${stamp}`;
    const work = mkdtempSync(path.join(os.tmpdir(), 'wh-report-'));
    try {
      const folder = path.join(work, name);
      mkdirSync(folder);
      const put = (file: string, value: unknown) => writeFileSync(path.join(folder, file), typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
      put('versions.json', versions());
      put('config.json', publicConfig(deps.config));
      put('settings.json', deps.settings());
      put('store.json', { ...deps.store.stats(), schema_version: deps.store.schemaVersion(), collections: deps.counts() });
      put('events.json', [...deps.store.collection(eventRecords).range(undefined, true)].slice(0, EVENTS_IN_REPORT));
      put('log.jsonl', (deps.logTail?.recent() ?? []).join(''));
      put('site.json', deps.site.layout);
      put('links.json', deps.linkStats?.() ?? { links: 'off' });
      put('README.txt', `Diagnostics report of warehouse controller ${VERSION}, made ${new Date(deps.now()).toISOString()}.\n`
        + 'versions.json, config.json (no secrets; URLs without user:password@, query or fragment), settings.json (the controller\'s settings), store.json (LMDB statistics),\n'
        + 'events.json (newest first), log.jsonl (recent log lines, redacted), site.json (the site layout),\n'
        + 'links.json (per level: device, link counters, transport counters).\n');

      const tarFilename = `${name}.tar.gz`;
      const reportPath = path.join(this.dir, tarFilename);
      const partial = `${reportPath}.partial`;
      await createTar({ gzip: true, file: partial, cwd: work, portable: true, mode: 0o600 } as never, [name]);
      renameSync(partial, reportPath);
      this.prune();
      await deps.events.emit(EVENT.reportCreated, `diagnostics report ${tarFilename} created (${statSync(reportPath).size} bytes)`);
      return { tarFilename, reportPath };
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  /** Deletes all but the newest REPORTS_KEPT archives (names sort by time). */
  private prune(): void {
    const archives = readdirSync(this.dir).filter((f) => /^report-.*\.tar\.gz$/.test(f)).sort();
    for (const old of archives.slice(0, Math.max(0, archives.length - REPORTS_KEPT))) rmSync(path.join(this.dir, old), { force: true });
  }
}

function versions(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const packageVersion = (name: string) => {
    try {
      return (require(`${name}/package.json`) as { version: string }).version;
    } catch {
      return null;
    }
  };
  return {
    controller: VERSION,
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    hostname: os.hostname(),
    uptime_seconds: Math.round(process.uptime()),
    memory: process.memoryUsage(),
    packages: { lmdb: packageVersion('lmdb'), pino: packageVersion('pino'), typebox: packageVersion('typebox') },
  };
}

/** The configuration as a support engineer may see it: paths and numbers, no credentials. */
export function publicConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const [key, value] of Object.entries(out)) if (typeof value === 'string') out[key] = redactUrl(value);
  return out;
}

/**
 * A URL without what may carry a credential: user:password@, the query (?token=...) and the
 * fragment; scheme, host and path stay, to show where it points. Other strings pass unchanged.
 */
export function redactUrl(value: string): string {
  const url = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^?#]*)(\?[^#]*)?(#.*)?$/is.exec(value);
  if (!url) return value;
  const [, scheme, userinfo, rest, query, fragment] = url;
  return `${scheme}${userinfo ? '[redacted]@' : ''}${rest}${query ? '?[redacted]' : ''}${fragment ? '#[redacted]' : ''}`;
}
