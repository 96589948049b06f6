/** A command run to its end with its output kept, for tests of processes (release, upgrade). */
import { spawn } from 'node:child_process';

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` in `cwd` and resolves with its exit status and output once it has closed. */
export function run(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
