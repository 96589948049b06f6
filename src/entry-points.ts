/**
 * How the daemon runs its own modules on another thread or in another process. Built, a module
 * is its .js file under dist/; from sources (tests, benchmarks) it is its .ts file run through
 * tsx, whose loader a worker does not always inherit from `--import tsx`.
 */
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker on `entry` (a path without its extension, relative to the module `from`). */
export function startThread(entry: string, from: string, options: WorkerOptions): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`${entry}.js`, from), options);
  const source = new URL(`${entry}.ts`, from).href;
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

/** The Node arguments that run `entry` (as for startThread) in a process of its own. */
export function entryCommand(entry: string, from: string): string[] {
  if (from.endsWith('.ts')) return ['--import', 'tsx', fileURLToPath(new URL(`${entry}.ts`, from))];
  return ['--enable-source-maps', fileURLToPath(new URL(`${entry}.js`, from))];
}
