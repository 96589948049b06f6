/**
 * The node flags the daemon runs with: those of `npm start`, which test/process/systemd.test.ts holds
 * equal to the systemd unit's ExecStart. Benchmarks start dist/main.js with them, so that they
 * measure the daemon as a site runs it (the young generation's size among them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The words of `npm start` between `node` and `dist/main.js`. */
export function daemonNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  const main = words.indexOf('dist/main.js');
  if (words[0] !== 'node' || main === -1) throw new Error(`package.json's start script is not "node <flags> dist/main.js": ${start}`);
  return words.slice(1, main);
}
