// `npm run test:browser`: builds the service and the pages, then runs test/browser/*.test.ts two
// files at a time (BROWSER_TEST_CONCURRENCY=1 for one at a time); each file starts `node dist/server.js` on its own data directory and drives
// Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium) through playwright-core.
// The test files run compiled (scripts/compile-tests.mjs, as npm test does) into .test-build/browser-<pid>/, removed
// after the run: under tsx, loading the harness and playwright-core took ~3 s of CPU per file. A single file can still
// be run from its source: node --import tsx --test test/browser/map.test.ts
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compileTests } from './compile-tests.mjs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  console.error(`Chromium not found at ${chromium}. Install it with: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  process.exit(1);
}
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!process.argv.includes('--no-build')) {
  const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const dir = 'test/browser';
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => path.join(dir, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no browser test files matched');
  process.exit(1);
}
console.log(`running ${files.length} browser test files (screenshots in ${process.env.SCREENSHOT_DIR ?? 'test/browser/screenshots'})`);
const BUILD = path.join('.test-build', `browser-${process.pid}`);
await compileTests(BUILD, { browser: true });
const compiled = files.map((f) => path.join(BUILD, f.replace(/\.ts$/, '.js')));
const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', `--test-concurrency=${process.env.BROWSER_TEST_CONCURRENCY ?? 2}`, ...compiled], { stdio: 'inherit' });
fs.rmSync(BUILD, { recursive: true, force: true });
process.exit(result.status ?? 1);
