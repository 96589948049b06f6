/**
 * How tests start the product's own processes (the daemon, the CLI): from sources through tsx,
 * or, with WAREHOUSE_TEST_DIST=1 (.ci/run, on a clean clone where `npm ci` has just built
 * dist/), the compiled build that ships. Each tsx start compiles the sources again (1-2 s of CPU
 * a process); CI starts some fifty of them.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '../..');

/** Node arguments that run `src/<name>.ts`, or its `dist/<name>.js` when CI asks for the build. */
export function entryArgs(name: 'main' | 'cli/main' | 'sim/main'): string[] {
  const built = path.join(ROOT, 'dist', `${name}.js`);
  if (process.env.WAREHOUSE_TEST_DIST === '1') {
    if (!existsSync(built)) throw new Error(`WAREHOUSE_TEST_DIST=1 but ${built} is missing: run npm run build`);
    return ['--enable-source-maps', built];
  }
  return ['--import', 'tsx', path.join(ROOT, 'src', `${name}.ts`)];
}
