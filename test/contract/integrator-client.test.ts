// The document as a WMS vendor meets it: a TypeScript client generated from what the daemon
// serves, an integration (test/contract/integrator/flow.ts) written against that client alone
// and type-checked strictly, then run against a simulated site until every one of the 12
// request kinds has ended. A document that drifts from the daemon breaks the vendor's build or
// run here, not in the field. Each run works in its own temporary directory, so parallel runs
// and the repo never see a generated client.
import t from 'tap';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAdminApp } from '../helpers/app.js';
import { chaosSite } from '../fixtures/chaos-site.js';

t.setTimeout(400_000);

const here = path.dirname(fileURLToPath(import.meta.url));
const integrator = path.join(here, 'integrator');
const root = path.resolve(here, '../..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

const KINDS = ['FULFILLMENT', 'REPLENISHMENT', 'PUTAWAY', 'FETCH', 'CARRIER_ONBOARDING', 'RFID_WRITE', 'RECHARGE', 'UNCHARGING', 'OFFBOARD', 'ONBOARD', 'PAUSE', 'RESUME'];

interface Ran { code: number | null; stdout: string; stderr: string; ms: number }

/**
 * Runs a command to its end in a bare environment (PATH, HOME and `env`): a vendor's build
 * does not inherit tap's loaders, and what the run needs must be said here.
 */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

t.test('a client generated from the served document drives all 12 request kinds to SUCCEEDED', async (t) => {
  const work = mkdtempSync(path.join(tmpdir(), 'wh-integrator-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const siteFile = path.join(work, 'site.json');
  writeFileSync(siteFile, JSON.stringify(chaosSite()));
  const a = await startAdminApp({ WAREHOUSE_SITE: siteFile, WAREHOUSE_LINKS: 'on', WAREHOUSE_SIM_SPEED: '5', WAREHOUSE_LOG_LEVEL: 'info' });
  t.teardown(() => a.close());

  const doc = await a.admin.request('/api/openapi.json');
  t.equal(doc.status, 200, 'the document is served');
  writeFileSync(path.join(work, 'doc.json'), doc.text);

  // The vendor's project: their code, ESM, their compiler settings, node's types from the repo.
  for (const file of ['flow.ts', 'run.ts']) copyFileSync(path.join(integrator, file), path.join(work, file));
  writeFileSync(path.join(work, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const tsconfig = (include: string[]) => JSON.stringify({
    extends: path.join(integrator, 'tsconfig.json'),
    compilerOptions: { typeRoots: [path.join(root, 'node_modules', '@types')] },
    include: [...include, 'generated/**/*.ts'],
  });
  writeFileSync(path.join(work, 'tsconfig.json'), tsconfig(['flow.ts', 'run.ts']));
  // A typo in a filter value must not compile: the filters name their values in the document.
  writeFileSync(path.join(work, 'misspelt.ts'), [
    "import { getJobs, getRequests } from './generated/sdk.gen.js';",
    '',
    "export const requests = getRequests({ query: { status__eq: 'EXECUTNG' } });",
    "export const jobs = getJobs({ query: { status__eq: 'EXECUTNG' } });",
    '',
  ].join('\n'));
  writeFileSync(path.join(work, 'tsconfig.misspelt.json'), tsconfig(['misspelt.ts']));

  const generated = await run(bin('openapi-ts'), ['-i', 'doc.json', '-o', 'generated', '--no-log-file'], work);
  t.equal(generated.code, 0, `openapi-ts generates a client (${generated.ms} ms)`, { output: generated.stdout + generated.stderr });
  if (generated.code !== 0) return;

  const [checked, misspelt] = await Promise.all([
    run(bin('tsc'), ['-p', 'tsconfig.json', '--strict', '--noEmit'], work),
    run(bin('tsc'), ['-p', 'tsconfig.misspelt.json', '--strict', '--noEmit'], work),
  ]);
  t.equal(checked.code, 0, `the integration type-checks strictly against the generated client (${checked.ms} ms)`, { output: checked.stdout + checked.stderr });
  t.not(misspelt.code, 0, 'a misspelt status filter does not compile', { output: misspelt.stdout + misspelt.stderr });
  // One error a line; elaborations are indented under it.
  const errors = misspelt.stdout.split('\n').filter((l) => /^\S/.test(l));
  t.ok(errors.length === 2 && /^misspelt\.ts\(3,.*EXECUTNG/.test(errors[0]!) && /^misspelt\.ts\(4,.*EXECUTNG/.test(errors[1]!),
    'for the misspelling alone, on GET /requests and on GET /jobs', { output: misspelt.stdout });
  if (checked.code !== 0) return;

  const tsx = import.meta.resolve('tsx');
  const ran = await run(process.execPath, ['--import', tsx, 'run.ts'], work, {
    BASE_URL: `https://localhost:${a.app.port}`,
    API_KEY: a.boot.api_key,
    NODE_EXTRA_CA_CERTS: a.app.tls.certFile,
  }, 300_000);
  const took = ran.stderr.split('\n').filter((l) => / in [\d.]+ s$/.test(l));
  t.comment(`the integration ran in ${(ran.ms / 1000).toFixed(1)} s: ${took.join('; ')}`);
  t.equal(ran.code, 0, 'the integration runs to its end', { log: ran.stderr });
  const outcome: unknown = ran.code === 0 ? JSON.parse(ran.stdout) : {};
  t.same(outcome, Object.fromEntries(KINDS.map((k) => [k, 'SUCCEEDED'])), 'every kind SUCCEEDED', { log: ran.stderr });
});
