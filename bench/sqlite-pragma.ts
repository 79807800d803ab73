// What one SQLite setting costs the creation path (issue 19): two Musters, each on its own file seeded
// with ROWS incidents as the incidents benchmark seeds them, one as configured (src/db/database.ts)
// and one with PRAGMA run on its connection after it opened; `POST /v1/tickets` with 10 connections,
// ROUNDS alternating runs of SECONDS each after a 1 s warm-up. Per run: creations per second, p95,
// creations per COMMIT (the group of commits), write syscalls per creation (write, writev, pwrite:
// /proc/self/io of this process, the load worker's socket writes included, the same for both) and
// how busy the event loop was.
//
//   npx tsx bench/sqlite-pragma.ts "temp_store = DEFAULT" [--rows 1000000] [--rounds 3] [--seconds 5]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figures docs/benchmarks.md quotes.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { caller, seed } from './incidents.bench.js';
import { load, numberOption, startMuster, type MusterServer } from './lib.js';

const PRAGMA = process.argv[2];
if (!PRAGMA || PRAGMA.startsWith('--')) throw new Error('usage: npx tsx bench/sqlite-pragma.ts "<pragma> = <value>" [--rows N] [--rounds N] [--seconds N]');
const ROWS = numberOption('rows', 1_000_000);
const ROUNDS = numberOption('rounds', 3);
const SECONDS = numberOption('seconds', 5);

/** Write-like syscalls of this process so far (Linux). */
const writeSyscalls = () => Number(/^syscw: (\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))![1]);

interface Side {
  label: string;
  muster: MusterServer;
  key: string;
  commits: number;
  rps: number[];
  p95: number[];
  group: number[];
  writes: number[];
  busy: number[];
}

const sides: Side[] = [];
try {
  for (const label of ['as configured', PRAGMA]) {
    const side = { label, commits: 0, rps: [], p95: [], group: [], writes: [], busy: [] } as unknown as Side;
    side.muster = await startMuster({}, { onQuery: (q) => void (q === 'commit' && side.commits++) });
    sides.push(side);
    const c = await caller(side.muster.app);
    seed(path.join(side.muster.dataDir, 'muster.db'), c, ROWS);
    side.key = c.key;
    if (label === PRAGMA) await sql.raw(`pragma ${PRAGMA}`).execute(side.muster.ctx.db);
  }
  const body = { title: 'Pump station 4: pressure low', priority: 'high' };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of sides) {
      const commits = side.commits;
      const writes = writeSyscalls();
      const elu = performance.eventLoopUtilization();
      const r = await load({ url: `${side.muster.url}/v1/tickets`, method: 'POST', body, headers: { 'x-api-key': side.key }, seconds: SECONDS });
      side.busy.push(performance.eventLoopUtilization(elu).utilization);
      side.writes.push((writeSyscalls() - writes) / r.completed);
      side.group.push(r.completed / (side.commits - commits));
      side.rps.push(r.requestsPerSec);
      side.p95.push(r.p95);
    }
  }
  const list = (values: number[], f: (v: number) => string) => values.map(f).join(' / ');
  process.stdout.write(`POST /v1/tickets, ${ROWS.toLocaleString('en-US')} incidents seeded, 10 connections, ${ROUNDS} rounds of ${SECONDS} s alternating:\n`);
  for (const s of sides) {
    process.stdout.write(
      `  ${s.label}: req/s ${list(s.rps, (v) => Math.round(v).toLocaleString('en-US'))}; p95 ms ${list(s.p95, (v) => v.toFixed(2))}; ` +
        `creations per commit ${list(s.group, (v) => v.toFixed(1))}; write syscalls per creation ${list(s.writes, (v) => v.toFixed(1))}; ` +
        `event loop busy ${list(s.busy, (v) => `${Math.round(v * 100)} %`)}\n`,
    );
  }
} finally {
  for (const s of sides) await s.muster.close();
}
