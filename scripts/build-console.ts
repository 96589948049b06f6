/**
 * Builds the browser console (browser/console/, docs/console.md) into dist/console/: one
 * minified ES module and one stylesheet, each named by its content hash, and the page that
 * names them. `npm run build` runs it, so `npm ci` (its prepare step) leaves a servable console.
 *
 *   node --import tsx scripts/build-console.ts [--out DIR]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Builds the console into `outDir`; returns the asset names (hashed), page first in none. */
export async function buildConsole(outDir = path.join(root, 'dist', 'console')): Promise<{ script: string; style: string; bytes: number }> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = path.join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
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
    outdir: assets,
    sourcemap: 'linked',
    metafile: true,
    legalComments: 'eof',
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const name = (ext: string) => {
    const found = outputs.find(([file]) => file.endsWith(ext) && !file.endsWith('.map'));
    if (!found) throw new Error(`the console build made no ${ext} file`);
    return path.basename(found[0]);
  };
  const script = name('.js');
  const style = name('.css');
  const bytes = outputs.filter(([file]) => !file.endsWith('.map')).reduce((n, [, o]) => n + o.bytes, 0);
  writeFileSync(path.join(outDir, 'index.html'), page(script, style));
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
  buildConsole(out).then((r) => {
    console.log(`console built: ${r.script}, ${r.style} (${(r.bytes / 1024).toFixed(1)} KiB)`);
  }, (err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
