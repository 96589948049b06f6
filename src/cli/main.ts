#!/usr/bin/env node
/**
 * `warehouse-controller`: the technician's commands at the box (status, check-config, backup,
 * restore, reset-admin, bots, requests, events, history-export, compact). Each prints for a person (or JSON where
 * scripts need it) and exits with a status a script can test; none starts the daemon.
 */
import { parseArgs } from 'node:util';
import { buildIdentity } from '../version.js';
import { CliError, EXIT } from './exit.js';
import type { CliOptions } from './context.js';

/** The commands of USAGE: an unknown one is refused before any command's modules load. */
const COMMANDS = new Set(['check-config', 'status', 'backup', 'restore', 'reset-admin', 'bots', 'requests', 'events', 'history-export', 'compact', 'switchover']);

// Each command's modules (the store, the domain, the archive) load when that command runs:
// loading them all took about 2 s before even `--help` could answer.

const USAGE = `usage: warehouse-controller [--state-dir DIR] [--env-file FILE] <command> [options]

commands:
  status [--json]          is the daemon up; storage, lines, bots, open requests, last errors
                           exit 0 running and healthy, 1 running degraded, 3 not running, 4 unknown
  check-config             check environment, config file, TLS files and site without starting
                           exit 0, or 78 with one line per problem
  backup --out FILE        hot backup (the daemon may run): store, state files, config, TLS
  restore FILE             restore a backup (the daemon stopped); the old state is kept aside
  reset-admin [--out FILE] new password and API key for the first Super Admin (the daemon stopped),
                           in a 0600 file shaped as the first start's (email, password, api_key)
  bots                     bots with their live state
  requests [--all] [--limit N]   the newest N (default 20) open requests (or of all), listed oldest
                           first; a last line counts the older ones left out
  events [--limit N] [--follow]  the latest N (default 20) events, oldest first; --follow prints
                           new ones until Ctrl-C
  history-export --from T --to T --out DIR [--kinds requests,events]
                           write the requests (with their jobs) and events made from T to T
                           (dates or date-times; without an offset, in the configured zone)
                           as gzip NDJSON with a manifest and SHA256SUMS (the daemon may run)
  compact                  give the store file's free pages back to the disk (the daemon stopped)
  switchover [--to NAME]   a replicated pair's planned switchover: the active box hands the lead to
                           the standby (caught up first; no acknowledged write is lost), e.g. before
                           maintenance of the active box (docs/high-availability.md)

options:
  --state-dir DIR   the daemon's state directory; without it: WAREHOUSE_STATE_DIR (the environment
                    file's, then this shell's), else /var/lib/warehouse-controller where it exists
                    (an installed box), else ./state of the current directory (a checkout, as npm start)
  --env-file FILE   the unit's environment file (default /etc/warehouse-controller/environment, if present)
  --help, --version

On a box, run it as the service user (sudo -u warehouse warehouse-controller status); in a
checkout, from its folder (node dist/cli/main.js status). docs/operations.md.
`;

const out = (s: string) => process.stdout.write(s);
const err = (s: string) => process.stderr.write(s);

async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        'state-dir': { type: 'string' }, 'env-file': { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'V' },
        json: { type: 'boolean' }, out: { type: 'string' }, all: { type: 'boolean' }, limit: { type: 'string' }, follow: { type: 'boolean', short: 'f' },
        from: { type: 'string' }, to: { type: 'string' }, kinds: { type: 'string' },
      },
    });
  } catch (e) {
    err(`${(e as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    out(buildIdentity());
    return EXIT.ok;
  }
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    out(USAGE);
    return EXIT.ok;
  }
  const options: CliOptions = { stateDir: values['state-dir'], envFile: values['env-file'] };
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new CliError(`--limit takes a whole number above 0 (got ${values.limit})`, EXIT.usage);
  const expect = (n: number, what: string) => {
    if (rest.length !== n) throw new CliError(`${command} takes ${what}\n\n${USAGE}`, EXIT.usage);
  };

  if (!COMMANDS.has(command)) return unknownCommand(command);
  // Every command reads the daemon's configuration: its module loads here, each command's own below.
  const { cliConfig } = await import('./context.js');
  switch (command) {
    case 'check-config': {
      expect(0, 'no arguments');
      const { checkConfigCommand } = await import('./check-config.js');
      return checkConfigCommand(options, out, err);
    }
    case 'status': {
      expect(0, 'no arguments');
      const { formatStatus, statusExit, statusReport } = await import('./status.js');
      let report;
      try {
        report = await statusReport(cliConfig(options));
      } catch (e) {
        // status answers with its own codes: 4 when it cannot tell.
        err(`warehouse-controller: ${(e as Error).message}\n`);
        return EXIT.unknown;
      }
      out(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
      return statusExit(report);
    }
    case 'backup': {
      expect(0, '--out FILE');
      if (!values.out) throw new CliError('backup needs --out FILE', EXIT.usage);
      const { backup } = await import('./backup.js');
      const manifest = await backup(cliConfig(options), options, values.out);
      out(`backup written to ${values.out}: ${Object.keys(manifest.files).length} files, version ${manifest.version}, schema ${manifest.schema_version}\n`);
      return EXIT.ok;
    }
    case 'restore': {
      expect(1, 'the archive: restore FILE');
      const { restore } = await import('./backup.js');
      const done = await restore(cliConfig(options), rest[0]!);
      out(`restored ${rest[0]} (made ${done.manifest.created_at} by ${done.manifest.version} on ${done.manifest.hostname}); the previous state is in ${done.previous}\n`);
      if (done.config) out(`the configuration and TLS files of the backup are in ${done.config}: compare them with /etc/warehouse-controller before starting\n`);
      return EXIT.ok;
    }
    case 'reset-admin': {
      expect(0, 'no arguments (--out FILE)');
      const { resetAdmin } = await import('./reset-admin.js');
      const done = await resetAdmin(cliConfig(options), values.out);
      const expiry = done.keyExpiresAt === null ? 'never expiring' : `expiring ${new Date(done.keyExpiresAt).toISOString()}`;
      out(`new password and API key (every permission, ${expiry}) for ${done.email} written to ${done.file} (mode 0600): log in, change the password, then delete the file\n`);
      return EXIT.ok;
    }
    case 'bots': {
      expect(0, 'no arguments');
      const { botsTable } = await import('./reads.js');
      out(await botsTable(cliConfig(options)));
      return EXIT.ok;
    }
    case 'requests': {
      expect(0, 'no arguments');
      const { requestsTable } = await import('./reads.js');
      out(await requestsTable(cliConfig(options), { all: values.all ?? false, limit }));
      return EXIT.ok;
    }
    case 'events': {
      expect(0, 'no arguments');
      const { events } = await import('./reads.js');
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      await events(cliConfig(options), { limit, follow: values.follow ?? false, write: out, signal: stop.signal });
      return EXIT.ok;
    }
    case 'history-export': {
      expect(0, '--from T --to T --out DIR');
      const { historyExport } = await import('./history.js');
      const files = await historyExport(cliConfig(options), { from: values.from, to: values.to, out: values.out, kinds: values.kinds });
      if (files.length === 0) out('nothing was made in that range; no file written\n');
      for (const f of files) out(`${f.file}: ${f.records} records, ${f.bytes} bytes, sha256 ${f.sha256}\n`);
      return EXIT.ok;
    }
    case 'compact': {
      expect(0, 'no arguments');
      const { compact } = await import('./history.js');
      const { before, after } = await compact(cliConfig(options));
      const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
      out(`store compacted: ${mib(before)} -> ${mib(after)}\n`);
      return EXIT.ok;
    }
    case 'switchover': {
      expect(0, 'no arguments (--to NAME)');
      const { switchover } = await import('./switchover.js');
      const done = await switchover(cliConfig(options), values.to);
      out(`${done.from} handed the lead to ${done.to} (term ${done.term}) in ${done.ms} ms\n`);
      return EXIT.ok;
    }
    default:
      return unknownCommand(command);
  }
}

function unknownCommand(command: string): number {
  err(`unknown command "${command}"\n\n${USAGE}`);
  return EXIT.usage;
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (e: unknown) => {
    // Loaded already when one of them was thrown; otherwise loading them costs only this error path.
    const [{ StoreVersionError }, { ConfigError }] = await Promise.all([import('../store/store.js'), import('../config/config.js')]);
    if (e instanceof CliError) {
      err(`warehouse-controller: ${e.message}\n`);
      process.exitCode = e.exit;
    } else if (e instanceof StoreVersionError) {
      err(`warehouse-controller: ${e.message}\n`);
      process.exitCode = EXIT.config;
    } else if (e instanceof ConfigError) {
      err(`warehouse-controller: ${e.message}\n(check-config lists every problem)\n`);
      process.exitCode = EXIT.config;
    } else {
      err(`warehouse-controller: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = EXIT.software;
    }
  },
);
