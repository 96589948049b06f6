/**
 * Builds the browser console (browser/console/, docs/console.md) into dist/console/: one
 * minified ES module and one stylesheet, each named by its content hash, and the page that
 * names them. `npm run build` runs it, so `npm ci` (its prepare step) leaves a servable console.
 *
 *   node --import tsx scripts/build-console.ts [--out DIR] [--no-sourcemap]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Builds the console into `outDir`; returns the hashed names and the bytes of script and style.
 * Nothing is written when the output is already there (same sources, same hashes), and a new
 * output replaces the old one by renames, so a daemon or a test reading it never sees half a build.
 */
export async function buildConsole(outDir = path.join(root, 'dist', 'console'), options: { sourcemap?: boolean } = {}): Promise<{ script: string; style: string; bytes: number }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['browser/console/main.tsx'],
    bundle: true,
    minify: true,
    format: 'esm',
    // Browsers of the last few years on a site laptop or a balcony tablet.
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    outdir: path.join(outDir, 'assets'),
    // Maps name the sources by paths relative to the output: a release (built elsewhere) leaves them out.
    sourcemap: options.sourcemap === false ? false : 'linked',
    legalComments: 'eof',
    logLevel: 'warning',
    write: false,
  });
  const files = result.outputFiles.map((f) => ({ name: path.basename(f.path), contents: f.contents }));
  const name = (ext: string) => {
    const found = files.find((f) => f.name.endsWith(ext));
    if (!found) throw new Error(`the console build made no ${ext} file`);
    return found.name;
  };
  const script = name('.js');
  const style = name('.css');
  const bytes = files.filter((f) => !f.name.endsWith('.map')).reduce((n, f) => n + f.contents.length, 0);
  const html = page(script, style);
  const current = path.join(outDir, 'index.html');
  const upToDate = existsSync(current) && readFileSync(current, 'utf8') === html && files.every((f) => existsSync(path.join(outDir, 'assets', f.name)));
  if (!upToDate) {
    const fresh = `${outDir}.new-${process.pid}`;
    const old = `${outDir}.old-${process.pid}`;
    rmSync(fresh, { recursive: true, force: true });
    mkdirSync(path.join(fresh, 'assets'), { recursive: true });
    for (const f of files) writeFileSync(path.join(fresh, 'assets', f.name), f.contents);
    writeFileSync(path.join(fresh, 'index.html'), html);
    if (existsSync(outDir)) renameSync(outDir, old);
    renameSync(fresh, outDir);
    rmSync(old, { recursive: true, force: true });
  }
  return { script, style, bytes };
}

function page(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Warehouse console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out');
  const out = at > 0 ? path.resolve(process.argv[at + 1]!) : undefined;
  buildConsole(out, { sourcemap: !process.argv.includes('--no-sourcemap') }).then((r) => {
    console.log(`console built: ${r.script}, ${r.style} (${(r.bytes / 1024).toFixed(1)} KiB)`);
  }, (err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
