// `npm test`: every *.test.ts under src/ and test/ through node:test and tsx, one process per file.
// `npm test -- --pg` (npm run test:pg) runs the same files on PostgreSQL (TEST_DATABASE_URL, default the local one).
// The output ends with one line of every test it ran: `N passed, M failed, K skipped (...)` (both
// groups below added up; failed includes cancelled, skipped includes todo). CI reads that line.
//
// The files run compiled: src/, test/, clients/, scripts/ and web/src/*.ts are transpiled by esbuild (what tsx does
// file by file) into .test-build/<run>/, a mirror of the repository (one per run, removed after it), and node runs the JavaScript. A
// process under tsx resolves every module it loads through tsx's loader thread, which cost a large
// share of the suites' CPU; the test files and their servers are the same code either way.
// test/bench/ stays under tsx: its files fork bench/*.ts scripts themselves. A single file can
// still be run straight from its source: node --import tsx --test path/to/file.test.ts
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { compileTests } from './compile-tests.mjs';

const args = process.argv.slice(2);
const filters = args.filter((a) => !a.startsWith('--'));

function find(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'browser' ? [] : find(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

// test/cluster/ starts several server processes on one PostgreSQL database (SQLite is one instance by design): --pg only.
const onPostgres = args.includes('--pg');
const selected = [...find('src'), ...find('test')]
  .filter((f) => onPostgres || !f.split(path.sep).join('/').startsWith('test/cluster/'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

/**
 * Whether a test file can reach the database: its static imports, followed through the repository's
 * own TypeScript, reach src/db/ (or a database driver), or it names TEST_DATABASE_URL or starts
 * processes (a server it spawns may open one). The PostgreSQL run skips the others: they would run
 * the same code a second time with the same result.
 */
// `import type` and `export type` load nothing at run time: they are not followed.
const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm;
const reachesDb = new Map();
function usesDatabase(file, seen = new Set()) {
  if (reachesDb.has(file)) return reachesDb.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  let uses = file.split(path.sep).join('/').startsWith('src/db/') || /TEST_DATABASE_URL|child_process|\bspawn\(|\bfork\(/.test(text);
  for (const m of uses ? [] : text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec === 'pg' || spec === 'better-sqlite3' || spec === 'ioredis') uses = true;
    if (!spec.startsWith('.')) continue;
    const target = path.normalize(path.join(path.dirname(file), spec.replace(/\.js$/, '.ts')));
    if (fs.existsSync(target) && usesDatabase(target, seen)) uses = true;
    if (uses) break;
  }
  // Only a definite answer is kept (an import circle still being walked reads as false above).
  if (uses || seen.size === 1) reachesDb.set(file, uses);
  return uses;
}
// The longest files start first: two at a time, a 2-minute file begun last would run alone at the end
// (longest-first is the classic greedy schedule for parallel lanes). Measured on CI's 2 cores; the rest keep their order.
const LONGEST_FIRST = [
  'test/security-suites/crash.test.ts',
  'test/security-suites/fuzz.test.ts',
  'test/operations.test.ts',
  'test/security-suites/access-matrix.test.ts',
  'test/cluster/two-instances.test.ts',
  'test/ops/privacy-race.test.ts',
  'test/tracks-crash.test.ts',
  'test/security/idempotency.test.ts',
  'test/security/rate-limit.test.ts',
  'test/cluster/credential-cache.test.ts',
  'src/modules/users/users.test.ts',
  'src/modules/integrations/heartbeats.test.ts',
];
const rank = (f) => {
  const i = LONGEST_FIRST.indexOf(f.split(path.sep).join('/'));
  return i === -1 ? LONGEST_FIRST.length : i;
};
const files = (onPostgres && !args.includes('--all') ? selected.filter((f) => usesDatabase(f)) : selected)
  .map((f, i) => ({ f, i }))
  .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
  .map(({ f }) => f);
if (onPostgres && files.length < selected.length) {
  console.log(`skipping ${selected.length - files.length} test files that never reach the database (they ran on SQLite; --all runs them here too):`);
  console.log(`  ${selected.filter((f) => !files.includes(f)).join(' ')}`);
}
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// The CalDAV tests talk to a real Radicale server (Debian's package). On a fresh machine where we
// are root with apt, install it as `npm test` runs; elsewhere those tests say what is missing.
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
if (!has('radicale') && has('apt-get') && process.getuid?.() === 0) {
  console.log("installing Debian's radicale for the CalDAV tests (apt-get install radicale)");
  spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq radicale >/dev/null'], { stdio: 'inherit' });
}
// The paging test of a real alert starts Debian's prometheus-alertmanager.
if (!fs.existsSync('/usr/bin/prometheus-alertmanager') && has('apt-get') && process.getuid?.() === 0) {
  console.log("installing Debian's prometheus-alertmanager for the alert path test (apt-get install prometheus-alertmanager)");
  spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-alertmanager >/dev/null'], { stdio: 'inherit' });
}
// The on-call feed test reads a feed with python's `icalendar` too (Debian's python3-icalendar).
const pyIcal = () => spawnSync('/usr/bin/python3', ['-c', 'import icalendar'], { stdio: 'ignore' }).status === 0;
if (!pyIcal() && has('apt-get') && process.getuid?.() === 0) {
  console.log("installing Debian's python3-icalendar for the calendar feed tests");
  spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-icalendar >/dev/null'], { stdio: 'inherit' });
}

const BUILD = path.join('.test-build', `run-${process.pid}`);
const compile = () => compileTests(BUILD);
const underTsx = (f) => f.split(path.sep).join('/').startsWith('test/bench/');
const compiledFiles = files.filter((f) => !underTsx(f));
const tsxFiles = files.filter(underTsx);
if (compiledFiles.length > 0) await compile();

const env = { ...process.env };
if (onPostgres) env.TEST_DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/test';
// Test files never drop their PostgreSQL schemas while others run (a drop during another file's
// migration breaks its catalog listing); every schema of this run carries its id and goes at the end.
if (env.TEST_DATABASE_URL) env.TEST_RUN_ID = `r${randomBytes(3).toString('hex')}`;
console.log(`running ${files.length} test files on ${env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);

// Two files at a time (TEST_CONCURRENCY to change it): on 2 cores, 3 was slower on PostgreSQL
// (`time TEST_CONCURRENCY=3 npm run test:pg`: 6.4 against 5.2 min at 2).
// Each run keeps node's own report on stdout (spec on a terminal, TAP otherwise, as before) and
// also writes its totals through scripts/count-reporter.mjs, so the two runs end in one summary.
fs.mkdirSync(BUILD, { recursive: true });
const REPORTER = path.resolve('scripts/count-reporter.mjs');
const TIMES_REPORTER = path.resolve('scripts/file-times-reporter.mjs');
const runs = [];
const timeFiles = [];
const run = (args, list) => {
  if (list.length === 0) return 0;
  const totals = path.join(BUILD, `totals-${runs.length}.json`);
  const times = path.join(BUILD, `times-${runs.length}.json`);
  runs.push(totals);
  timeFiles.push(times);
  const reporters = [
    ...['--test-reporter', process.stdout.isTTY ? 'spec' : 'tap', '--test-reporter-destination', 'stdout'],
    ...['--test-reporter', REPORTER, '--test-reporter-destination', totals],
    ...['--test-reporter', TIMES_REPORTER, '--test-reporter-destination', times],
  ];
  return spawnSync(process.execPath, [...args, '--test', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...reporters, ...list], { stdio: 'inherit', env }).status ?? 1;
};
let status = Math.max(
  run(['--enable-source-maps'], compiledFiles.map((f) => path.join(BUILD, f.replace(/\.ts$/, '.js')))),
  run(['--import', 'tsx'], tsxFiles),
);

/** Every run's totals added up: `N passed, M failed, K skipped`, the last line of the output (CI reads it). */
const sum = { pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
let complete = true;
for (const file of runs) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  const totals = text ? JSON.parse(text) : {};
  if (totals.tests === undefined) complete = false;
  for (const k of Object.keys(sum)) sum[k] += totals[k] ?? 0;
}
const failed = sum.fail + sum.cancelled;
if (!complete) status = status || 1;
const summaryLine = () =>
  complete
    ? `${sum.pass} passed, ${failed} failed, ${sum.skipped + sum.todo} skipped (${files.length} test files on ${env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`
    : `summary unavailable: a test run ended without its totals (${files.length} test files on ${env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`;

if (env.TEST_DATABASE_URL) {
  const client = new pg.Client({ connectionString: env.TEST_DATABASE_URL });
  await client.connect();
  const { rows } = await client.query('select schema_name from information_schema.schemata where schema_name ~ $1', [`^[a-z]+_${env.TEST_RUN_ID}_`]);
  for (const { schema_name } of rows) await client.query(`drop schema if exists "${schema_name}" cascade`);
  await client.end();
}
/** The slowest files of the run (their top-level tests' durations added up), above the summary. */
const spans = timeFiles.flatMap((f) => {
  const text = fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim() : '';
  return Object.entries(text ? JSON.parse(text) : {});
});
if (spans.length > 1) {
  const total = spans.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`\nslowest test files (of ${spans.length}, ${Math.round(total / 1000)} s in all; ${process.env.TEST_CONCURRENCY ?? 2} at a time):`);
  for (const [file, ms] of spans.sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
  }
}
fs.rmSync(BUILD, { recursive: true, force: true });
console.log(summaryLine());
process.exit(status);
