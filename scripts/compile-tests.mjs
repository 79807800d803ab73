// Transpiles the TypeScript that tests load into a mirror of the repository under `.test-build/`
// (what tsx does file by file, once for the whole run): node then runs plain JavaScript, without
// tsx's loader thread resolving every module (a large share of the suites' CPU). Used by
// scripts/test.mjs (npm test) and scripts/test-browser.mjs (npm run test:browser).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUNDLE_OPTIONS, importMetaUrlPlugin, SERVER_EXTERNAL } from './esbuild-shared.mjs';

/** The server's, and what only tests load: packages that find files of their own, or run tools. */
const EXTERNAL = [...SERVER_EXTERNAL, 'playwright-core', 'tsx', 'esbuild', 'axe-core'];

/**
 * Transpiles src/, test/, clients/, scripts/ and web/src/*.ts into `dir`, keeping the tree (so
 * relative paths hold), with `dist` linked in (the built pages are found relative to
 * src/modules/web). test/browser/ only when `browser` is set.
 *
 * Then each test file is bundled over its mirror (with the packages it loads, code shared between
 * test files in chunks under `_chunks/`): a test process loads a few large modules instead of ~1,300
 * small ones (~0.7 s less CPU a test file; the servers tests spawn are bundled too).
 * `import.meta.url` in bundled code is the URL of the file's mirror, so paths relative to a source
 * file (the built pages, the calendar worker, a spawned entry point) resolve as in the mirror, whose
 * files the spawned servers and workers still run.
 */
export async function compileTests(dir, { browser = false } = {}) {
  const { build } = await import('esbuild');
  const ts = (d) =>
    fs.existsSync(d)
      ? fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => {
          const p = path.join(d, e.name);
          if (e.isDirectory()) return e.name === 'node_modules' || (e.name === 'browser' && !browser) ? [] : ts(p);
          return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
        })
      : [];
  // web/src: the pages' plain-TypeScript helpers that tests import (map-people.ts...).
  const entryPoints = ['src', 'test', 'clients', 'scripts', 'web/src'].flatMap(ts);
  await build({ entryPoints, outdir: dir, outbase: '.', format: 'esm', platform: 'node', target: 'node20', sourcemap: 'inline', logLevel: 'warning' });
  fs.symlinkSync(path.join('..', '..', 'dist'), path.join(dir, 'dist'));

  const root = path.resolve(dir);
  const mirrorUrl = importMetaUrlPlugin((rel) => JSON.stringify(pathToFileURL(path.join(root, rel)).href));
  await build({
    // The test files, and the entry points tests start as processes (test/entry.ts).
    entryPoints: [
      ...entryPoints.filter((f) => f.endsWith('.test.ts') && !f.startsWith(`test${path.sep}bench`)),
      ...['src/server.ts', 'src/ops/backup-cli.ts', 'src/db/migrate-cli.ts'].map((f) => path.normalize(f)),
    ],
    ...BUNDLE_OPTIONS,
    outdir: dir,
    outbase: '.',
    splitting: true,
    chunkNames: '_chunks/[name]-[hash]',
    external: EXTERNAL,
    plugins: [mirrorUrl],
  });
}
