/**
 * One fuzzing run against the daemon on the demo site: starts the app in a fresh state
 * directory with the radio links off, reads the served OpenAPI document, and sends cases
 * operation after operation (round-robin) until the time or case budget is spent.
 * Used by `npm run fuzz` (scripts/fuzz.ts) and by test/contract/fuzz.test.ts.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { startAdminApp } from '../test/helpers/app.js';
import { Client } from '../test/helpers/client.js';
import { Fuzzer, GENERATOR_MISS, type Answer, type FuzzCase, type Finding, type Guard, type Operation } from './fuzz-engine.js';

/** An answer slower than this is a finding (a hang is as bad as a 5xx for a client). */
const ANSWER_TIMEOUT_MS = 15_000;

export interface FuzzOptions {
  seed: number;
  /** Stop starting rounds after this many seconds. */
  seconds: number;
  /** Cases of each kind per operation per round. */
  perRound?: number;
  /** Stop after this many rounds (default: until `seconds`). */
  rounds?: number;
  log?: (line: string) => void;
}

export interface FuzzReport {
  seed: number;
  operations: number;
  rounds: number;
  cases: { positive: number; negative: number; 'no-auth': number };
  skipped: Record<string, number>;
  statuses: Record<string, number>;
  findings: (Finding & { count: number })[];
  seconds: number;
}

/**
 * Exclusions: cases the run does not send, so that it keeps its credential and the site stays
 * usable for the rest of the run. Each returns why; the report counts them.
 */
function guards(ownKeyId: number): Guard {
  return (op, c) => {
    // The run's own credential: deleting it, or patching its permissions, ends the run.
    if ((op.id === 'DELETE /api/v2/auth/api_keys/{api_key_id}' || op.id === 'PATCH /api/v2/auth/api_keys/{api_key_id}/permissions') && Number(c.params.api_key_id) === ownKeyId) {
      return 'own API key';
    }
    // `*` removes every bot of the site from the database (marked DO NOT USE); single ids stay in.
    if (op.id === 'DELETE /api/v2/bot' && c.kind === 'positive' && (c.query.bot_idxs as string[] | undefined)?.includes('*')) return 'DELETE /bot with *';
    // These stop and restart the brain worker, waiting up to `timeout` seconds each: positive
    // cases are not sent (their negatives, refused before the handler, are).
    if ((op.id === 'POST /api/v2/restart_brain' || op.id === 'POST /api/v2/requests/cancel_all') && c.kind === 'positive') return 'brain restart';
    return undefined;
  };
}

/** Runs the fuzzer; findings are deduplicated per operation, check and message. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const perRound = options.perRound ?? 5;
  const app = await startAdminApp({ WAREHOUSE_LOG_LEVEL: 'fatal' });
  const client = new Client(app.app.port, readFileSync(app.app.tls.certFile));
  const report: FuzzReport = {
    seed: options.seed, operations: 0, rounds: 0, cases: { positive: 0, negative: 0, 'no-auth': 0 }, skipped: {}, statuses: {}, findings: [], seconds: 0,
  };
  const seen = new Map<string, Finding & { count: number }>();
  try {
    const doc = (await app.client.request('/api/openapi.json')).json;
    const fuzzer = new Fuzzer(doc);
    const keys = (await app.admin.request('/api/v2/auth/api_keys?size=100')).json;
    // Listed keys are masked (`whk_EpK5…j3Tc`): the bootstrap key is the one named so, with our key's ends.
    const own = (keys.items as { id: number; name: string; api_key: string }[])
      .find((k) => k.name === 'bootstrap' && app.boot.api_key.startsWith(k.api_key.split('…')[0]!));
    if (!own) throw new Error('cannot find the bootstrap API key in GET /api/v2/auth/api_keys');
    const guard = guards(own.id);
    const ops = fuzzer.operations();
    report.operations = ops.length;

    const send = async (op: Operation, c: FuzzCase): Promise<void> => {
      let a: Answer;
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS)));
        a = await Promise.race([client.request(c.url, { method: c.method, headers: c.headers, body: c.body }), late]);
      } catch (err) {
        a = { status: 0, headers: {}, text: String(err), json: undefined };
      } finally {
        clearTimeout(timer);
      }
      report.cases[c.kind]++;
      report.statuses[a.status] = (report.statuses[a.status] ?? 0) + 1;
      const problems = a.status === 0 ? [{ check: 'server_error' as const, status: 0, message: `no answer: ${a.text}` }] : fuzzer.check(op, c, a);
      for (const p of problems) {
        // One finding per operation, check, status and the parameters named (not their values).
        const key = `${op.id}|${p.check}|${p.status}|${p.message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/\d+/g, 'N').slice(0, 200)}`;
        const prior = seen.get(key);
        if (prior) prior.count++;
        else {
          const f = { ...p, operation: op.id, fuzzCase: c, answer: a.text.slice(0, 600), count: 1 };
          seen.set(key, f);
          log(`FINDING ${p.check} ${op.id}: ${p.message}\n  ${c.method} ${c.url}${c.body ? `\n  body: ${String(c.body).slice(0, 300)}` : ''}\n  -> ${a.status} ${a.text.slice(0, 300)}`);
        }
      }
    };

    const skip = (why: string): void => void (report.skipped[why] = (report.skipped[why] ?? 0) + 1);
    const deadline = started + options.seconds * 1000;
    for (let round = 0; (options.rounds === undefined || round < options.rounds) && Date.now() < deadline; round++) {
      for (const [i, op] of ops.entries()) {
        if (Date.now() >= deadline) break;
        const seed = (options.seed + round * 7919 + i * 104729) | 0;
        if (round === 0 && !(Array.isArray(op.op.security) && op.op.security.length === 0)) {
          const [inputs] = fc.sample(fuzzer.inputs(op), { seed, numRuns: 1 });
          await send(op, fuzzer.request(op, 'no-auth', inputs!, undefined));
        }
        for (const inputs of fc.sample(fuzzer.inputs(op), { seed, numRuns: perRound })) {
          const why = inputs.body === GENERATOR_MISS ? 'generated body invalid by the document' : guard(op, { kind: 'positive', ...inputs });
          if (why) skip(why);
          else await send(op, fuzzer.request(op, 'positive', inputs, app.boot.api_key));
        }
        const negatives = fuzzer.negatives(op);
        if (negatives) {
          for (const inputs of fc.sample(negatives, { seed: seed ^ 0x5bd1e995, numRuns: perRound })) {
            const why = guard(op, { kind: 'negative', ...inputs });
            if (why) skip(why);
            else await send(op, fuzzer.request(op, 'negative', inputs, app.boot.api_key));
          }
        }
      }
      report.rounds = round + 1;
      log(`round ${round + 1}: ${report.cases.positive} positive, ${report.cases.negative} negative cases so far, ${seen.size} distinct findings`);
    }
  } finally {
    client.close();
    await app.close();
  }
  report.findings = [...seen.values()];
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}
