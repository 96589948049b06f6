// Configuration: defaults, file, environment, and errors that name the bad key.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, DEFAULTS, loadConfig } from '../../../src/config/config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wh-config-'));

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

t.test('defaults apply with an empty environment', async (t) => {
  const c = loadConfig({});
  t.equal(c.port, 8443);
  t.equal(c.timezone, 'Europe/Berlin');
  t.equal(c.site, 'demo');
  t.equal(c.state_dir, path.resolve(DEFAULTS.state_dir), 'state dir made absolute');
});

t.test('environment variables override the file, which overrides defaults', async (t) => {
  const file = path.join(dir, 'good.json');
  writeFileSync(file, JSON.stringify({ port: 9000, host: '0.0.0.0', log_level: 'debug' }));
  const c = loadConfig({ WAREHOUSE_CONFIG: file, WAREHOUSE_PORT: '9443', WAREHOUSE_TIMEZONE: 'America/New_York', WAREHOUSE_STATE_DIR: '/tmp/x' });
  t.equal(c.port, 9443);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.log_level, 'debug');
  t.equal(c.timezone, 'America/New_York');
  t.equal(c.state_dir, '/tmp/x');
});

t.test('every bad key is named, with its source', async (t) => {
  const p = problems({ WAREHOUSE_PORT: 'abc', WAREHOUSE_LOG_LEVEL: 'loud', WAREHOUSE_TIMEZONE: 'Mars/Olympus', WAREHOUSE_PROT: '1' });
  t.match(p.join('\n'), /WAREHOUSE_PORT: .*"abc"/);
  t.match(p.join('\n'), /WAREHOUSE_LOG_LEVEL/);
  t.match(p.join('\n'), /unknown IANA time zone "Mars\/Olympus"/);
  t.match(p.join('\n'), /WAREHOUSE_PROT: unknown variable/);
  t.match(problems({ WAREHOUSE_PORT: '70000' }).join(), /WAREHOUSE_PORT: must be <= 65535/);
  t.match(problems({ WAREHOUSE_TLS_CERT: '/x.pem' }).join(), /tls_cert and tls_key must be set together/);
});

t.test('file problems are named with the file', async (t) => {
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{"port": "x", "colour": 1}');
  const p = problems({ WAREHOUSE_CONFIG: bad }).join('\n');
  t.match(p, new RegExp(`${bad}: unknown key "colour"`));
  t.match(p, new RegExp(`${bad}: port: must be integer`));
  const broken = path.join(dir, 'broken.json');
  writeFileSync(broken, '{port');
  t.match(problems({ WAREHOUSE_CONFIG: broken }).join(), /not valid JSON/);
  writeFileSync(broken, '[1]');
  t.match(problems({ WAREHOUSE_CONFIG: broken }).join(), /must hold a JSON object/);
  t.match(problems({ WAREHOUSE_CONFIG: path.join(dir, 'missing.json') }).join(), /cannot read/);
});

t.test('the error message lists all problems', async (t) => {
  t.throws(() => loadConfig({ WAREHOUSE_PORT: '-1' }), { name: 'ConfigError', message: /invalid configuration:\n {2}- WAREHOUSE_PORT/ });
});

t.test('upload quotas: defaults, and never below the largest upload', async (t) => {
  const c = loadConfig({});
  t.same([c.upload_limit_bytes, c.upload_quota_bytes, c.upload_total_bytes], [16 << 20, 64 << 20, 256 << 20]);
  const raised = loadConfig({ WAREHOUSE_UPLOAD_LIMIT_BYTES: String(100 << 20) });
  t.same([raised.upload_quota_bytes, raised.upload_total_bytes], [100 << 20, 256 << 20], 'a default follows a raised limit');
  const p = problems({ WAREHOUSE_UPLOAD_QUOTA_BYTES: String(1 << 20) });
  t.equal(p.length, 1);
  t.match(p[0], /^WAREHOUSE_UPLOAD_QUOTA_BYTES: must be at least upload_limit_bytes/);
});
