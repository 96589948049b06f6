/** The daemon as a child process, run from sources, and what it logs. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from './client.js';
import { entryArgs } from './entry.js';

export interface Daemon {
  child: ChildProcess;
  lines: any[];
  stderr: () => string;
  /** Resolves with the port once the API listens. */
  listening: Promise<number>;
}

/**
 * Starts the daemon (`src/main.ts`, or its build: helpers/entry.ts) with only `env` (plus PATH and HOME) as its environment; `main` names a
 * compiled entry instead (an installed release), run by plain node from `cwd`.
 */
export function startDaemon(env: Record<string, string>, options: { main?: string; cwd?: string; node?: string } = {}): Daemon {
  const args = options.main === undefined ? entryArgs('main') : ['--enable-source-maps', options.main];
  const child = spawn(options.node ?? process.execPath, args, {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: any[] = [];
  let err = '';
  let buffered = '';
  let onListening: (port: number) => void;
  const listening = new Promise<number>((resolve) => (onListening = resolve));
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      if (line.msg === 'HTTPS API listening') onListening(line.port);
    }
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, lines, stderr: () => err, listening };
}

/** Resolves with the exit code (null when killed by a signal). */
export const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));


/**
 * Starts the daemon on a state directory (with `env` added) and a client holding the bootstrap
 * key; the test's teardown kills the one and closes the other.
 */
export async function startWithClient(t: { teardown(fn: () => unknown): void }, stateDir: string, env: Record<string, string>): Promise<{ d: Daemon; c: Client }> {
  const d = startDaemon({ WAREHOUSE_STATE_DIR: stateDir, ...env });
  t.teardown(() => d.child.kill('SIGKILL'));
  const port = await d.listening;
  const key = JSON.parse(readFileSync(path.join(stateDir, 'bootstrap-admin.json'), 'utf8')).api_key as string;
  const c = new Client(port, readFileSync(path.join(stateDir, 'tls/self-signed-cert.pem')), key);
  t.teardown(() => c.close());
  return { d, c };
}
