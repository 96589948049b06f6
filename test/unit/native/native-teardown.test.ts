// A worker thread holding level planners and a link, terminated while their threads deliver to
// it (POST /restart_brain when the brain does not stop in time, SIGTERM under load): the
// environment stops running JS under the callbacks, and the addon must neither touch it nor let
// node-addon-api turn the refusal into "FATAL ERROR: Error::ThrowAsJavaScriptException
// napi_throw", which aborts the whole process. That abort cannot be caught, so the rounds run in
// a child process (test/fixtures/native-teardown.ts) whose exit status is the verdict. Rounds
// terminate at a random moment after some deliveries, from inside a deliver callback, while
// callbacks throw, with close() pending, and inside the addon's read of an argument's property; a second child runs with Node's
// --force-node-api-uncaught-exceptions-policy, under which a callback's error ends the worker by
// itself. Seeded: NATIVE_TEARDOWN_SEED=<n> replays a run.
import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'native-teardown.ts');
const seed = Number(process.env.NATIVE_TEARDOWN_SEED ?? Math.floor(Math.random() * 1e9));

function run(nodeOptions: string[], childSeed: number, rounds: number, mode?: string) {
  const args = ['--import', 'tsx', ...nodeOptions, FIXTURE, String(childSeed), String(rounds), ...(mode ? [mode] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

t.test('terminating a worker while native callbacks are in flight never aborts the process', async (t) => {
  t.comment(`seed ${seed} (NATIVE_TEARDOWN_SEED=${seed} replays it)`);
  const cases = [
    { name: 'default', options: [], seed, rounds: 24 },
    { name: 'uncaught-exceptions policy', options: ['--force-node-api-uncaught-exceptions-policy=true'], seed: seed + 1, rounds: 8 },
    // Terminated inside each property read of an argument in turn: the addon read `type` twice
    // and used the second, failed read ("FATAL ERROR: Error::New napi_get_last_error_info").
    { name: 'inside an argument read', options: [], seed: seed + 2, rounds: 18, mode: 'getter' },
  ];
  const results = await Promise.all(cases.map((c) => run(c.options, c.seed, c.rounds, c.mode)));
  cases.forEach((c, i) => {
    const r = results[i]!;
    // Node's warning for each error a callback threw (DEP0168) is expected noise here.
    const stderr = r.stderr.split('\n').filter((l) => !/DEP0168|--trace-deprecation/.test(l)).join('\n').slice(-4000);
    const rounds = r.stdout.split('\n').filter((l) => l.startsWith('round '));
    const extra = { stderr, stdout: r.stdout.slice(-4000) };
    t.same({ code: r.code, signal: r.signal }, { code: 0, signal: null }, `${c.name}, seed ${c.seed}: the child exits 0`, extra);
    t.equal(rounds.length, c.rounds, `${c.name}: every round ran`);
    t.match(r.stdout, /\nsurvived\n$/, `${c.name}: the process outlived every worker`);
  });
});
