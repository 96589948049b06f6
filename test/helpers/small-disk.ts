// A small filesystem of its own (tmpfs) that a test can fill to the last block: a full disk
// made for real, as the box's state directory meets it.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface TestLike {
  teardown(fn: () => unknown): void;
  comment(message: string): void;
}

/** Mounts a tmpfs of `size` (say `8m`) for the test, unmounted at its end; undefined (said in a comment) where mounting needs privileges this run lacks. */
export function smallDisk(t: TestLike, size: string): string | undefined {
  const mount = mkdtempSync(path.join(tmpdir(), 'wh-small-disk-'));
  t.teardown(() => rmSync(mount, { recursive: true, force: true }));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount], { stdio: 'pipe' });
  } catch (err) {
    // CI runs as root; elsewhere a full disk cannot be made without privileges.
    t.comment(`skipped: cannot mount a small tmpfs here (${(err as Error).message.split('\n')[0]})`);
    return undefined;
  }
  t.teardown(() => execFileSync('umount', ['-l', mount]));
  return mount;
}

/** Writes `file` until the filesystem has no block left (smaller chunks as it fills); remove it to free the space. */
export function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  for (const size of [1 << 20, 64 << 10, 4 << 10]) {
    const chunk = Buffer.alloc(size, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch { /* ENOSPC: on to smaller chunks */ }
  }
  closeSync(fd);
}
