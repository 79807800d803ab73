// `npm test`: every *.test.ts under src/ and test/ through node:test and tsx, one process per file.
// `npm test -- --pg` (npm run test:pg) runs the same files on PostgreSQL (TEST_DATABASE_URL, default the local one).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const pg = args.includes('--pg');
const filters = args.filter((a) => !a.startsWith('--'));

function find(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'browser' ? [] : find(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = [...find('src'), ...find('test')].filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const env = { ...process.env };
if (pg) env.TEST_DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/test';
console.log(`running ${files.length} test files on ${env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);

const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env,
});
process.exit(result.status ?? 1);
