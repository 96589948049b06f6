/**
 * What SIGHUP (`systemctl reload`) changes, decided from the running configuration and the one
 * read again: the log level at once; every other key waits for a restart and is named so. The
 * certificate files are read again whatever the keys say: a renewal keeps their paths.
 */
import type { Config } from './config/config.js';

/** Keys a reload applies without a restart. */
export const RELOADABLE_KEYS: ReadonlySet<keyof Config> = new Set(['log_level', 'tls_cert', 'tls_key']);

export interface ReloadPlan {
  /** The new log level, when it changed. */
  logLevel: Config['log_level'] | undefined;
  /** Which certificate pair to load: the configured one, or undefined for the self-signed one. */
  tls: { cert: string; key: string } | undefined;
  /** Keys whose new value takes effect only at the next start. */
  restartOnly: string[];
}

/** Decides a reload from the configuration running and the one just read. */
export function planReload(running: Config, next: Config): ReloadPlan {
  const keys = new Set([...Object.keys(running), ...Object.keys(next)] as (keyof Config)[]);
  const restartOnly = [...keys].filter((k) => !RELOADABLE_KEYS.has(k) && running[k] !== next[k]).sort();
  return {
    logLevel: next.log_level !== running.log_level ? next.log_level : undefined,
    tls: next.tls_cert && next.tls_key ? { cert: next.tls_cert, key: next.tls_key } : undefined,
    restartOnly,
  };
}
