/**
 * One daemon per state directory: the first to start holds an exclusive lock on `daemon.lock`
 * there for as long as it runs; a second one is refused at once, naming the holder's pid. Two
 * daemons on one directory would write the same LMDB environment and dispatch the same bots.
 */
import { closeSync } from 'node:fs';
import path from 'node:path';
import { lockStateDir } from './native/addon.js';

/** Another process holds the state directory. */
export class StateDirInUse extends Error {
  constructor(readonly dir: string, readonly holder: string) {
    super(`state directory ${dir} is in use by another daemon (pid ${holder || 'unknown'}); stop it, or give this one another WAREHOUSE_STATE_DIR`);
    this.name = 'StateDirInUse';
  }
}

/** Takes the state directory's lock; `release()` gives it up (the end of the process does too). */
export function holdStateDir(dir: string): { release(): void } {
  const lock = lockStateDir(path.join(dir, 'daemon.lock'));
  if (!lock.locked) throw new StateDirInUse(dir, lock.holder);
  let held = true;
  return {
    release() {
      if (held) closeSync(lock.fd);
      held = false;
    },
  };
}
