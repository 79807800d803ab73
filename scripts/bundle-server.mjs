// `npm run build:server`, second step: bundles src/server.ts with the packages it loads into one
// file, dist/server.js, over the copy tsc wrote. A start then reads one large module instead of
// ~1,000 small ones (docs/benchmarks.md, "Cold start": importing was most of a start). The rest of
// dist/ (tsc's output) stays: the CLIs, the calendar worker, and the files `import.meta.url` points
// at (below).
import path from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS, importMetaUrlPlugin, SERVER_EXTERNAL } from './esbuild-shared.mjs';

// One file, no chunks: code that reads `import.meta.url` gets the URL its compiled copy has in dist/,
// relative to the bundle's own URL, so dist/ can move (a chunk in a folder of its own would resolve
// the same relative path elsewhere). Modules imported on demand are in the file and run on demand.
const besideDist = importMetaUrlPlugin((rel) => {
  const inDist = path.relative('src', rel).split(path.sep).join('/');
  if (inDist.startsWith('..')) throw new Error(`${rel} is outside src/: no copy of it in dist/`);
  return `new URL(${JSON.stringify(`./${inDist}`)}, import.meta.url).href`;
});

await build({
  ...BUNDLE_OPTIONS,
  entryPoints: ['src/server.ts'],
  outfile: 'dist/server.js',
  external: SERVER_EXTERNAL,
  plugins: [besideDist],
});
