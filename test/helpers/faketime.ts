/**
 * libfaketime for a process the test starts: the environment that moves its wall clock (an
 * offset such as '+120d', or '@2026-10-25 00:30:00' for an absolute start). Preloaded into the
 * process itself rather than through the `faketime` wrapper, which runs the program as a child
 * and does not pass signals on. The monotonic clock is left alone unless asked, so timers and
 * pacing keep real time while dates move.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The multi-threaded libfaketime (node runs threads), or undefined when the package is missing. */
export function libfaketime(): string | undefined {
  for (const arch of existsSync('/usr/lib') ? readdirSync('/usr/lib') : []) {
    const lib = path.join('/usr/lib', arch, 'faketime', 'libfaketimeMT.so.1');
    if (existsSync(lib)) return lib;
  }
  return undefined;
}

/** The variables that run a process with its wall clock at `spec` (libfaketime's FAKETIME syntax). */
export function fakeClock(spec: string, options: { monotonic?: boolean } = {}): Record<string, string> {
  const lib = libfaketime();
  if (!lib) throw new Error('libfaketime is not installed (apt-get install faketime; .ci/run installs it)');
  return { LD_PRELOAD: lib, FAKETIME: spec, ...(options.monotonic ? {} : { DONT_FAKE_MONOTONIC: '1' }), FAKETIME_DONT_RESET: '1' };
}

/** The variables that run a process with its wall clock offset by what `file` holds, read at every reading of the clock: writing the file steps it. */
export function steppedClock(file: string): Record<string, string> {
  const lib = libfaketime();
  if (!lib) throw new Error('libfaketime is not installed (apt-get install faketime; .ci/run installs it)');
  return { LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1', DONT_FAKE_MONOTONIC: '1' };
}
