// Builds the web app into dist/ (or the folder after --out): one minified script and one
// stylesheet, named by their content's hash, and the index.html that loads them (no inline script
// or style: the gateway's Content-Security-Policy allows none), the chunks the app loads later (the
// editor's), each asset gzipped beside it. Prints what the first load ships, gzipped, and the
// chunks. The gateway serves the folder (WEB_ROOT).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const at = process.argv.indexOf('--out');
const root = path.resolve(process.argv[1] ? path.dirname(process.argv[1]) : '.');
const out = at > 0 ? path.resolve(process.argv[at + 1]!) : path.join(root, 'dist');

rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'assets'), { recursive: true });
const result = await build({
  entryPoints: { app: path.join(root, 'src', 'main.tsx'), style: path.join(root, 'src', 'app.css') },
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  // What only some pages need (the editor's Markdown) is a chunk of its own, loaded when first used.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});
const files = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
const script = files.find((f) => f.startsWith('app-') && f.endsWith('.js'))!;
const style = files.find((f) => f.startsWith('style-') && f.endsWith('.css'))!;
writeFileSync(
  path.join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Knowledge network</title>
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`,
);
// Each asset also gzipped beside it: the gateway sends that to browsers that take gzip.
const gz = (file: string) => {
  const zipped = gzipSync(readFileSync(path.join(out, 'assets', file)), { level: 9 });
  writeFileSync(path.join(out, 'assets', `${file}.gz`), zipped);
  return zipped.length;
};
const later = files.filter((f) => f.startsWith('chunk-'));
console.log(
  `web app built in ${out}: ${script} ${gz(script)} B gzipped, ${style} ${gz(style)} B gzipped; loaded when needed: ${later.map((f) => `${f} ${gz(f)} B gzipped`).join(', ') || 'nothing'}`,
);
