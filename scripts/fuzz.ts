// npm run fuzz [-- --seconds 180 --seed N --per-round 5]
//
// Property-based fuzzing of the API against its own served OpenAPI document (scripts/fuzz-engine.ts
// says what is generated and checked; scripts/fuzz-run.ts what is excluded and why). Prints the
// seed first: `--seed` with the same value replays the same cases in the same order. Exits 1
// when anything was found.
import { parseArgs } from 'node:util';
import { runFuzz } from './fuzz-run.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    seed: { type: 'string' },
    'per-round': { type: 'string', default: '5' },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
console.log(`fuzz: seed ${seed} (replay with --seed ${seed}), ${values.seconds} s`);
const report = await runFuzz({ seed, seconds: Number(values.seconds), perRound: Number(values['per-round']), log: (l) => console.log(l) });
console.log(`\nfuzz summary (seed ${report.seed}, ${report.seconds} s, ${report.operations} operations, ${report.rounds} rounds)`);
console.log(`  cases: ${report.cases.positive} positive, ${report.cases.negative} negative, ${report.cases['no-auth']} without credentials`);
console.log(`  statuses: ${Object.entries(report.statuses).map(([s, n]) => `${s}×${n}`).join(' ')}`);
console.log(`  excluded: ${Object.entries(report.skipped).map(([w, n]) => `${w}×${n}`).join(', ') || 'none'}`);
console.log(`  findings: ${report.findings.length}`);
for (const f of report.findings) console.log(`    ${f.check} ${f.operation} (${f.count}×): ${f.message}`);
process.exit(report.findings.length > 0 ? 1 : 0);
