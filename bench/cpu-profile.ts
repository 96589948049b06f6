// node --import tsx bench/cpu-profile.ts top <profile.cpuprofile> [--from s --to s | --kind K --marks FILE] [--rows N]
// node --import tsx bench/cpu-profile.ts stalls <profile.cpuprofile> [--min ms]
//
// Reads a V8 CPU profile (`node --cpu-prof`, or `bench:load --node-flags="--cpu-prof
// --cpu-prof-dir=DIR"`) the way the long load runs need it:
//   top     self and inclusive time by function over the whole profile, or over a window given
//           in seconds from its start, or over each window of one kind that `bench:load
//           --daemon-out FILE` marked (`# <kind> alone: ...`, stamped with the monotonic µs that
//           a profile's timestamps count in);
//   stalls  every stretch of at least --min ms (default 250) without an idle sample, with its
//           heaviest functions: the turns of the event loop that made the longest waits.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }

const { positionals, values: args } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, kind: { type: 'string' }, marks: { type: 'string' }, rows: { type: 'string', default: '25' }, min: { type: 'string', default: '250' } },
});
const [command, file] = positionals;
if ((command !== 'top' && command !== 'stalls') || !file) {
  console.error('usage: cpu-profile.ts top|stalls <profile.cpuprofile> [options] (see the head of this file)');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;

/** Self and inclusive µs by function over the samples in [from, to) µs from the profile's start. */
function tally(from: number, to: number): { total: number; self: Map<string, number>; inclusive: Map<string, number> } {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let t = 0;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i]!;
    t += dt;
    if (t < from || t >= to) continue;
    total += dt;
    const leaf = byId.get(profile.samples[i]!)!;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const k = name(byId.get(id)!);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    }
  }
  return { total, self, inclusive };
}

function printTop(from: number, to: number, title: string): void {
  const { total, self, inclusive } = tally(from, to);
  const rows = Number(args.rows);
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, rows).map(([k, v]) => `  ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`).join('\n');
  console.log(`${title}: ${(total / 1000).toFixed(0)} ms sampled\n self\n${top(self)}\n inclusive\n${top(inclusive)}\n`);
}

/** The windows of one kind, µs from the profile's start, from the marks bench:load wrote. */
function kindWindows(kind: string, marks: string): [number, number][] {
  const at = readFileSync(marks, 'utf8').split('\n').filter((l) => l.includes(`# ${kind} alone:`)).map((l) => Number(/monotonic (\d+)/.exec(l)?.[1]) - profile.startTime);
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < at.length; i += 2) out.push([at[i]!, at[i + 1]!]);
  return out;
}

if (command === 'top') {
  if (args.kind) {
    if (!args.marks) throw new Error('--kind needs --marks, the --daemon-out file of the bench:load run');
    for (const [from, to] of kindWindows(args.kind, args.marks)) printTop(from, to, `${args.kind} alone, ${(from / 1e6).toFixed(1)}-${(to / 1e6).toFixed(1)} s`);
  } else {
    const from = args.from ? Number(args.from) * 1e6 : 0;
    const to = args.to ? Number(args.to) * 1e6 : Infinity;
    printTop(from, to, args.from || args.to ? `${args.from ?? 0}-${args.to ?? 'end'} s` : 'whole profile');
  }
} else {
  const min = Number(args.min) * 1000;
  let t = 0;
  let start: number | undefined;
  const flush = () => {
    if (start !== undefined && t - start >= min) printTop(start, t, `busy ${((t - start) / 1000).toFixed(0)} ms from ${(start / 1e6).toFixed(2)} s`);
    start = undefined;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (byId.get(profile.samples[i]!)!.callFrame.functionName === '(idle)') flush();
    else start ??= t;
  }
  flush();
}
