/**
 * The one typed door to the C++ addon (native/): pseudo-terminals for the simulator, systemd
 * notifications, the bot link's class (typed in ./link.ts) and the level planner's class and
 * plan validator (typed in ./planner.ts). The .node file is loaded on the
 * first call, so importing this module never throws; a missing or stale build fails that call
 * with one message naming the fix.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NativeLinkClass } from './link.js';
import type { NativeLevelPlannerClass, NativeValidatePlan } from './planner.js';

/** The ABI this wrapper was written for; must equal kAddonAbi in native/src/addon.cc. */
export const ADDON_ABI = 4;

/** The command that (re)builds the addon; every load error names it. */
export const BUILD_COMMAND = 'npm run build:native';

/** A pseudo-terminal pair: the master descriptor (the caller closes it) and the slave's path. */
export interface Pty {
  fd: number;
  path: string;
}

/** What the .node file exports (native/src/addon.cc). */
export interface Binding {
  abi: number;
  openPty(): Pty;
  notify(state: string): boolean;
  lockStateDir(path: string): { locked: true; fd: number } | { locked: false; holder: string };
  /** The bot link of one serial line; use createLink() from ./link.ts. */
  Link: NativeLinkClass;
  /** The realtime planner of one level; use createLevelPlanner() from ./planner.ts. */
  LevelPlanner: NativeLevelPlannerClass;
  /** The independent plan validator; use validatePlan() from ./planner.ts. */
  validatePlan: NativeValidatePlan;
}

const requireNative = createRequire(import.meta.url);
let binding: Binding | undefined;

/** The nearest folder above `start` holding package.json: the repo root from src/ and from dist/. */
export function packageRoot(start: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json in ${start} or above`);
  }
}

/** Where native/build.sh (cmake-js) and binding.gyp (node-gyp) put the addon. */
export function addonPath(root: string = packageRoot()): string {
  return path.join(root, 'native', 'build', 'Release', 'warehouse_native.node');
}

/** Loads `file` and checks its ABI; exported for tests, the rest of the code calls the functions below. */
export function loadAddon(file: string, expectedAbi: number = ADDON_ABI): Binding {
  const fail = (problem: string, cause?: unknown): Error =>
    Object.assign(
      new Error(`native addon ${problem}: ${file}; build it with \`${BUILD_COMMAND}\``, cause === undefined ? undefined : { cause }),
      { code: 'ERR_NATIVE_ADDON' },
    );
  if (!existsSync(file)) throw fail('is not built (no such file)');
  let loaded: Partial<Binding> | undefined;
  try {
    loaded = requireNative(file) as Partial<Binding> | undefined;
  } catch (err) {
    // Typically a NODE_MODULE_VERSION mismatch or a file for another architecture.
    const reason = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    throw fail(`cannot be loaded (${reason})`, err);
  }
  if (loaded?.abi !== expectedAbi) {
    throw fail(`is stale (ABI ${String(loaded?.abi)}, this code needs ${expectedAbi})`);
  }
  return loaded as Binding;
}

/** The loaded addon (loaded on the first call); for the typed wrappers beside this file. */
export function addon(): Binding {
  binding ??= loadAddon(addonPath());
  return binding;
}

/** Opens a pseudo-terminal pair in raw mode; a serial library opens `path`, the simulator uses `fd`. */
export function openPty(): Pty {
  return addon().openPty();
}

/** Sends one sd_notify(3) message; false when not started by systemd (NOTIFY_SOCKET unset), throws when sending fails. */
export function notify(state: string): boolean {
  return addon().notify(state);
}

/**
 * Takes the exclusive lock of a state directory's lock file (flock on the returned descriptor:
 * closing it, or the end of the process, releases it); when another holds it, returns what that
 * one wrote there (its pid).
 */
export function lockStateDir(file: string): { locked: true; fd: number } | { locked: false; holder: string } {
  const r = addon().lockStateDir(file);
  return r.locked ? r : { locked: false, holder: r.holder.trim() };
}

/** Tells systemd that start-up is complete (Type=notify). */
export function notifyReady(): boolean {
  return notify('READY=1');
}

/** Sets the line `systemctl status` shows; a newline would start a new assignment, so it becomes a space. */
export function notifyStatus(text: string): boolean {
  return notify(`STATUS=${text.replace(/[\r\n]+/g, ' ')}`);
}

/** Pets the watchdog (WatchdogSec= in the unit). */
export function notifyWatchdog(): boolean {
  return notify('WATCHDOG=1');
}

/** Tells systemd that a graceful shutdown has begun. */
export function notifyStopping(): boolean {
  return notify('STOPPING=1');
}

/** How often to pet the watchdog: half its timeout, or undefined when it is off or meant for another process. */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const usec = env.WATCHDOG_USEC;
  if (usec === undefined || !/^\d+$/.test(usec) || Number(usec) === 0) return undefined;
  // As sd_watchdog_enabled(3): WATCHDOG_PID, when set, names the process the watchdog watches.
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== String(process.pid)) return undefined;
  return Math.max(1, Math.floor(Number(usec) / 2000));
}
