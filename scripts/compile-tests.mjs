// Transpiles the TypeScript that tests load into a mirror of the repository under `.test-build/`
// (what tsx does file by file, once for the whole run): node then runs plain JavaScript, without
// tsx's loader thread resolving every module (a large share of the suites' CPU). Used by
// scripts/test.mjs (npm test) and scripts/test-browser.mjs (npm run test:browser).
import fs from 'node:fs';
import path from 'node:path';

/**
 * Transpiles src/, test/, clients/, scripts/ and web/src/*.ts into `dir`, keeping the tree (so
 * relative paths hold), with `dist` linked in (the built pages are found relative to
 * src/modules/web). test/browser/ only when `browser` is set.
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
}
