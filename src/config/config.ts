/**
 * Daemon configuration: defaults, then an optional JSON file (WAREHOUSE_CONFIG), then
 * WAREHOUSE_* environment variables. Validated once at start; every error names its key.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const ConfigSchema = Type.Object(
  {
    state_dir: Type.String({ minLength: 1, description: 'Directory for LMDB, certificates, keys and reports' }),
    host: Type.String({ minLength: 1, description: 'Address the HTTPS listener binds to' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'HTTPS port (0 picks a free one)' }),
    site: Type.String({ minLength: 1, description: '"demo" for the embedded simulated site, or a path to a site layout file' }),
    tls_cert: Type.Optional(Type.String({ minLength: 1, description: 'PEM certificate; a self-signed one is made when absent' })),
    tls_key: Type.Optional(Type.String({ minLength: 1, description: 'PEM private key for tls_cert' })),
    timezone: Type.String({ minLength: 1, description: 'IANA zone of legacy (naive) timestamps' }),
    log_level: Type.Enum([...LOG_LEVELS], { description: 'Least severe level written' }),
    body_limit_bytes: Type.Integer({ minimum: 1024, maximum: 1 << 30, description: 'Largest JSON body accepted' }),
    upload_limit_bytes: Type.Integer({ minimum: 1024, maximum: 1 << 30, description: 'Largest multipart body accepted' }),
    upload_quota_bytes: Type.Integer({ minimum: 1024, maximum: 2 ** 40, description: 'Multipart bytes one caller may have in flight at once (spooled to disk); more answers 429' }),
    upload_total_bytes: Type.Integer({ minimum: 1024, maximum: 2 ** 40, description: 'Multipart bytes all callers together may have in flight at once; more answers 503' }),
    max_page_size: Type.Integer({ minimum: 1, maximum: 100000, description: 'Largest `size` a list endpoint accepts' }),
    links: Type.Enum(['on', 'off'], { description: 'Talk to the bots (on), or run the API alone without radio lines or simulator (off)' }),
    support_url: Type.Optional(Type.String({ pattern: '^https?://\\S+$', description: 'Support endpoint that support issues are forwarded to (retried until accepted)' })),
    shutdown_timeout_ms: Type.Integer({ minimum: 0, maximum: 600000, description: 'Time in-flight requests get on SIGTERM' }),
    sim_speed: Type.Integer({ minimum: 1, maximum: 20, description: 'Simulated levels run this many times faster than real time (bot figures and planner steps shortened; benchmarks)' }),
    store_map_size_bytes: Type.Integer({ minimum: 1 << 24, maximum: 2 ** 46, description: 'Address space LMDB reserves for the store at start (it grows the map when needed; the disk is the real limit)' }),
    disk_low_bytes: Type.Integer({ minimum: 0, maximum: 2 ** 46, description: 'Free space on the state directory\'s filesystem below which event 0x100A warns (0: never)' }),
    archive_dir: Type.Optional(Type.String({ minLength: 1, description: 'Directory of the history archive (default: archive/ in the state directory; a mounted share keeps it off the box)' })),
    archive_quota_bytes: Type.Integer({ minimum: 1 << 20, maximum: 2 ** 46, description: 'Most bytes the history archive keeps; past it, its oldest files are removed (event 0x100D)' }),
    replication_endpoints: Type.Optional(Type.String({ pattern: '^https?://[^,\\s]+(,https?://[^,\\s]+)*$', description: 'etcd client URLs of the pair\'s cluster (both boxes and the witness), comma-separated; unset: a single box (docs/high-availability.md)' })),
    replication_name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'This box\'s name in the pair (default: the host name)' })),
    replication_pair: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'The pair\'s name: its keys in etcd are under /warehouse/<pair>/' }),
    replication_address: Type.Optional(Type.String({ minLength: 1, description: 'Address the other box reaches this one\'s peer port on (default: host)' })),
    replication_peer_port: Type.Integer({ minimum: 1, maximum: 65535, description: 'HTTPS port the active box serves snapshots to its standby on' }),
    replication_lease_seconds: Type.Integer({ minimum: 2, maximum: 60, description: 'Lease of the active box: it stops acknowledging writes this long after it last reached etcd, and the standby takes over after it' }),
    sim_battery_permille: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'Simulated bots start with this battery (permille) instead of 600..1000 (charging demos and tests)' })),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

const checkConfig = Compile(ConfigSchema);

/** The values used when neither the file nor the environment sets a key. */
export const DEFAULTS: Config = {
  state_dir: 'state',
  host: '127.0.0.1',
  port: 8443,
  site: 'demo',
  links: 'on',
  timezone: 'Europe/Berlin',
  log_level: 'info',
  body_limit_bytes: 1 << 20,
  upload_limit_bytes: 16 << 20,
  upload_quota_bytes: 64 << 20,
  upload_total_bytes: 256 << 20,
  max_page_size: 1000,
  shutdown_timeout_ms: 10000,
  sim_speed: 1,
  store_map_size_bytes: 64 * 1024 ** 3,
  disk_low_bytes: 256 * 1024 ** 2,
  archive_quota_bytes: 4 * 1024 ** 3,
  replication_pair: 'pair',
  replication_peer_port: 8444,
  replication_lease_seconds: 4,
};

/** Raised for any configuration problem; the message lists every bad key. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const ENV_PREFIX = 'WAREHOUSE_';
const INTEGER_KEYS = new Set(['port', 'body_limit_bytes', 'upload_limit_bytes', 'upload_quota_bytes', 'upload_total_bytes', 'max_page_size', 'shutdown_timeout_ms', 'sim_speed', 'sim_battery_permille', 'store_map_size_bytes', 'disk_low_bytes', 'archive_quota_bytes', 'replication_peer_port', 'replication_lease_seconds']);
const KNOWN_KEYS = new Set(Object.keys(ConfigSchema.properties));

/** Builds the configuration from a file and an environment, or throws ConfigError. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const merged: Record<string, unknown> = { ...DEFAULTS };
  const sourceOf = new Map<string, string>();

  const file = env[`${ENV_PREFIX}CONFIG`];
  if (file !== undefined) {
    for (const [key, value] of Object.entries(readConfigFile(file, problems))) {
      if (!KNOWN_KEYS.has(key)) problems.push(`${file}: unknown key "${key}"`);
      merged[key] = value;
      sourceOf.set(key, `${file}: ${key}`);
    }
  }

  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || raw === undefined || name === `${ENV_PREFIX}CONFIG`) continue;
    const key = name.slice(ENV_PREFIX.length).toLowerCase();
    if (!KNOWN_KEYS.has(key)) {
      problems.push(`${name}: unknown variable (known: ${[...KNOWN_KEYS].map((k) => ENV_PREFIX + k.toUpperCase()).join(', ')})`);
      continue;
    }
    merged[key] = INTEGER_KEYS.has(key) && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
    sourceOf.set(key, name);
  }

  for (const error of checkConfig.Errors(merged)) {
    const key = error.instancePath.split('/')[1] ?? '';
    if (key === '') continue; // additionalProperties: already reported as unknown above
    const where = sourceOf.get(key) ?? `default ${key}`;
    problems.push(`${where}: ${error.message} (got ${JSON.stringify(merged[key])})`);
  }
  if (typeof merged.timezone === 'string' && !isTimeZone(merged.timezone)) {
    problems.push(`${sourceOf.get('timezone') ?? 'timezone'}: unknown IANA time zone "${merged.timezone}"`);
  }
  for (const key of ['upload_quota_bytes', 'upload_total_bytes']) {
    // Below the largest upload, an upload of that size could never be taken: a default follows
    // a raised upload_limit_bytes, a value given explicitly is a mistake.
    const limit = merged.upload_limit_bytes;
    if (typeof merged[key] !== 'number' || typeof limit !== 'number' || merged[key] >= limit) continue;
    if (sourceOf.has(key)) problems.push(`${sourceOf.get(key)}: must be at least upload_limit_bytes (${limit}), or no upload of that size is ever taken`);
    else merged[key] = limit;
  }
  if ((merged.tls_cert === undefined) !== (merged.tls_key === undefined)) {
    problems.push('tls_cert and tls_key must be set together (WAREHOUSE_TLS_CERT, WAREHOUSE_TLS_KEY)');
  }
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);

  const config = merged as Config;
  config.state_dir = path.resolve(config.state_dir);
  if (config.archive_dir !== undefined) config.archive_dir = path.resolve(config.archive_dir);
  return config;
}

function readConfigFile(file: string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`WAREHOUSE_CONFIG: cannot read ${file}: ${(err as Error).message}`);
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    problems.push(`${file}: must hold a JSON object`);
  } catch (err) {
    problems.push(`${file}: not valid JSON: ${(err as Error).message}`);
  }
  return {};
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
