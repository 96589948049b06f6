/**
 * `warehouse-controller check-config`: the environment, the config file, the TLS files and the
 * site file checked as the daemon would at start, without starting anything. One line per
 * problem and exit 78, or a summary and exit 0.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/config.js';
import { tlsFileProblems } from '../config/tls-files.js';
import { loadSite, SiteError } from '../domain/site/load.js';
import { daemonEnvironment, EXIT, type CliOptions } from './context.js';

/** Every problem found, and a summary of what was checked. */
export function checkConfiguration(options: CliOptions): { problems: string[]; summary: string[] } {
  const { env, envFile } = daemonEnvironment(options);
  const summary = [`environment file: ${envFile ?? 'none'}`];
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return { problems: err.problems, summary };
    throw err;
  }
  const problems: string[] = [];
  if (config.tls_cert && config.tls_key) {
    problems.push(...tlsFileProblems(config.tls_cert, config.tls_key));
    summary.push(`TLS: ${config.tls_cert}`);
  } else if (config.tls_cert || config.tls_key) {
    problems.push('tls_cert and tls_key go together: set both, or neither for a self-signed certificate');
  } else {
    summary.push('TLS: self-signed (made in the state directory at first start)');
  }
  try {
    const site = loadSite(config.site);
    summary.push(`site: ${config.site} ("${site.name}", ${site.levels.length} levels, ${site.levels.reduce((n, l) => n + l.bots.length, 0)} bots)`);
  } catch (err) {
    if (!(err instanceof SiteError)) throw err;
    problems.push(...err.problems.map((p) => `site: ${p}`));
  }
  const stateDir = path.resolve(config.state_dir);
  const existing = existsSync(stateDir) ? stateDir : path.dirname(stateDir);
  try {
    accessSync(existing, constants.W_OK);
    summary.push(`state directory: ${stateDir}${existing === stateDir ? '' : ' (made at first start)'}`);
  } catch {
    problems.push(`state_dir: ${existing} is not writable by this user`);
  }
  summary.push(`listens on ${config.host}:${config.port}; log level ${config.log_level}`);
  return { problems, summary };
}

/** Runs the check; returns the exit status. */
export function checkConfigCommand(options: CliOptions, out: (s: string) => void, err: (s: string) => void): number {
  const { problems, summary } = checkConfiguration(options);
  if (problems.length > 0) {
    for (const p of problems) err(`${p}\n`);
    return EXIT.config;
  }
  out(`configuration OK\n${summary.map((s) => `  ${s}\n`).join('')}`);
  return EXIT.ok;
}
