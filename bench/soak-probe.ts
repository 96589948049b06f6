/**
 * What `bench:soak` reads from inside the daemon that the daemon does not show: the event loop's
 * delay on the API's thread, and the time of each of the brain's dispatch passes. A small module
 * the daemon preloads (`node --import`), in its main thread and in the brain's worker (workers
 * inherit the flag), so the daemon measured is the build a site runs, unchanged. On SIGUSR2 the
 * main thread asks the brain's thread for its figures over a BroadcastChannel, writes both to a
 * file (renamed into place, never read half-written) and starts the next window.
 *
 * The pass is timed by wrapping the Brain class's own `pass` method (the one its wake() times for
 * its pacing), read from the same dist/ module the worker imports, so both see one class.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Milliseconds: count, p50, p99 and max of one window; null when nothing was recorded. An event loop's figures are its delay beyond the probe's 10 ms timer. */
export interface Spread {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

/** What the probe writes for one window. */
export interface ProbeWindow {
  /** Counts the windows; a new one means the signal was handled. */
  seq: number;
  /** The API thread's event-loop delay. */
  loop: Spread | null;
  /** V8 heap in use on the API's thread after a full collection, bytes. */
  heap: number;
  /** The brain's thread, or null when it did not answer in time. */
  brain: { pass: Spread | null; loop: Spread | null; heap: number } | null;
}

const SOURCE = `
import { isMainThread, BroadcastChannel } from 'node:worker_threads';
import { monitorEventLoopDelay, createHistogram } from 'node:perf_hooks';
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env.SOAK_PROBE_FILE;
const brainModule = process.env.SOAK_PROBE_BRAIN;
// Histograms hold integers: nanoseconds for the loop (perf_hooks' own unit), microseconds for passes.
const spread = (h, toMs, less = 0) => h.count === 0 ? null : {
  n: h.count, p50: Math.max(0, h.percentile(50) * toMs - less), p99: Math.max(0, h.percentile(99) * toMs - less), max: Math.max(0, h.max * toMs - less),
};
// The loop's histogram holds the whole time between two of its 10 ms timers: the delay is what exceeds 10 ms.
const RESOLUTION_MS = 10;
const loopSpread = () => spread(loop, 1e-6, RESOLUTION_MS);
const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
loop.enable();
// The heap a full collection keeps (the daemon runs with --expose-gc under the probe): heapUsed at
// an arbitrary instant also holds whatever garbage the young generation has not yet scavenged,
// which swung one run's samples by 30 MiB and hid any trend.
const heapKept = () => {
  if (typeof globalThis.gc === 'function') globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const channel = new BroadcastChannel('soak-probe');
channel.unref();

if (isMainThread) {
  let seq = 0;
  process.on('SIGUSR2', () => {
    const mine = { seq: ++seq, loop: loopSpread(), heap: heapKept(), brain: null };
    loop.reset();
    const write = () => {
      clearTimeout(late);
      channel.onmessage = null;
      writeFileSync(file + '.tmp', JSON.stringify(mine));
      renameSync(file + '.tmp', file);
    };
    // A brain thread busy in a long pass answers late; the window is written without it then.
    const late = setTimeout(write, 3000);
    channel.onmessage = (e) => {
      if (e.data.type !== 'brain' || e.data.seq !== mine.seq) return;
      mine.brain = { pass: e.data.pass, loop: e.data.loop, heap: e.data.heap };
      write();
    };
    channel.postMessage({ type: 'collect', seq: mine.seq });
  });
} else if (brainModule) {
  const { Brain } = await import(brainModule);
  const passes = createHistogram();
  const pass = Brain.prototype.pass;
  Brain.prototype.pass = async function (...args) {
    const started = performance.now();
    try {
      return await pass.apply(this, args);
    } finally {
      passes.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
    }
  };
  channel.onmessage = (e) => {
    if (e.data.type !== 'collect') return;
    channel.postMessage({ type: 'brain', seq: e.data.seq, pass: spread(passes, 1e-3), loop: loopSpread(), heap: heapKept() });
    passes.reset();
    loop.reset();
  };
}
`;

/** Writes the probe into `dir`; returns the node flags that preload it and the variables that tell it where to write. */
export function installProbe(dir: string, root: string): { flags: string[]; env: Record<string, string>; file: string } {
  const module = path.join(dir, 'soak-probe.mjs');
  writeFileSync(module, SOURCE);
  const file = path.join(dir, 'soak-probe.json');
  return {
    flags: ['--expose-gc', '--import', pathToFileURL(module).href],
    env: { SOAK_PROBE_FILE: file, SOAK_PROBE_BRAIN: pathToFileURL(path.join(root, 'dist/brain/worker/brain.js')).href },
    file,
  };
}

/** Signals the daemon and waits (up to 10 s) for the window the probe writes in answer. */
export async function readProbe(pid: number, file: string, lastSeq: number): Promise<ProbeWindow | null> {
  process.kill(pid, 'SIGUSR2');
  const until = performance.now() + 10_000;
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      const w = JSON.parse(readFileSync(file, 'utf8')) as ProbeWindow;
      if (w.seq > lastSeq) return w;
    } catch {
      // Not written yet.
    }
  }
  return null;
}
