// npm run lint:openapi
//
// Lints the OpenAPI document exactly as the daemon serves it (the app starts on the demo site in
// a temporary state directory) with Redocly CLI and the rules of redocly.yaml. Offline: Redocly's
// telemetry and update check are off. Exits with the linter's status: non-zero on any error.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { servedOpenApi } from './served-openapi.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs the linter on a document; returns its exit status and output. */
export function lintOpenApi(doc: unknown): { status: number; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'wh-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 1));
    const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    const r = spawnSync(process.execPath, [cli, 'lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'stylish'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    });
    // Redocly prints a Node 20 end-of-support banner on every run: not a finding.
    const output = `${r.stdout}${r.stderr}`.split('\n').filter((l) => !/[║╔╚]/.test(l)).join('\n');
    return { status: r.status ?? 1, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { status, output } = lintOpenApi(await servedOpenApi());
  console.log(output.trim());
  process.exit(status);
}
