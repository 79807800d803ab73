// What the indexes of `incidents` cost a creation on SQLite (issue 19, migration 0020): inserts into
// the real, migrated schema seeded like the incidents benchmark (ROWS incidents with random tokens),
// through one better-sqlite3 connection with `synchronous = FULL`, in transactions of GROUP (5: a
// group of commits at 10 connections, as the server forms them), each insert without RETURNING as the
// service makes it on SQLite (bench/returning-cost.ts). Three schemas, cumulative, alternating ROUNDS times:
//   before          the indexes as migration 0019 left them, a random customer_token
//   ordered token   customer_token from timeOrderedToken (the time first)
//   partial (0020)  and the assignee and source_ref indexes partial on NOT NULL (what main runs)
// Wall and CPU (process.cpuUsage) microseconds per insert, commit included.
//
//   npx tsx bench/write-index-cost.ts [--rows 300000] [--groups 1500] [--rounds 3] [--group 5]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figure docs/benchmarks.md quotes.
import { randomToken, timeOrderedToken } from '../src/lib/crypto.js';
import { withSeededDatabase } from './incidents.bench.js';
import { numberOption } from './lib.js';

const ROWS = numberOption('rows', 300_000);
const GROUPS = numberOption('groups', 1_500);
const ROUNDS = numberOption('rounds', 3);
const GROUP = numberOption('group', 5);

const FULL = `drop index if exists incidents_assignee_idx; create index incidents_assignee_idx on incidents (assignee_id, org_id, livemode, status);
  drop index if exists incidents_source_ref_idx; create index incidents_source_ref_idx on incidents (org_id, livemode, source_ref, id);
  drop index if exists incidents_open_source_ref_uq; create unique index incidents_open_source_ref_uq on incidents (org_id, livemode, source_ref) where status in ('open', 'in_progress');`;
const PARTIAL = `drop index if exists incidents_assignee_idx; create index incidents_assignee_idx on incidents (assignee_id, org_id, livemode, status) where assignee_id is not null;
  drop index if exists incidents_source_ref_idx; create index incidents_source_ref_idx on incidents (org_id, livemode, source_ref, id) where source_ref is not null;
  drop index if exists incidents_open_source_ref_uq; create unique index incidents_open_source_ref_uq on incidents (org_id, livemode, source_ref) where status in ('open', 'in_progress') and source_ref is not null;`;
const variants = [
  { name: 'before', ddl: FULL, token: () => randomToken(24) },
  { name: 'ordered token', ddl: FULL, token: (ms: number) => timeOrderedToken(ms) },
  { name: 'partial (0020)', ddl: PARTIAL, token: (ms: number) => timeOrderedToken(ms) },
];

await withSeededDatabase(ROWS, (db, c) => {
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const insert = db.prepare(
    `insert into incidents (org_id, livemode, title, description, status, priority, source, source_ref, lat, lng, location_name,
       assignee_id, creator_id, customer_token, sla_due_at, sla_warn_at, sla_warned_at, sla_breached_at, resolved_at, created_at, updated_at, escalate_at)
     values (?, 1, 'Probe', null, 'open', 'high', 'api', null, null, null, null, null, ?, ?, ?, ?, null, null, null, ?, ?, ?)`,
  );
  const results = new Map<string, string[]>();
  let ms = Date.now();
  for (let round = 0; round < ROUNDS; round++)
    for (const v of variants) {
      db.exec(v.ddl);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let g = 0; g < GROUPS; g++) {
        db.exec('begin immediate');
        for (let i = 0; i < GROUP; i++) {
          const at = new Date(++ms).toISOString();
          insert.run(c.orgId, c.userId, v.token(ms), at, at, at, at, at);
        }
        db.exec('commit');
      }
      const n = GROUPS * GROUP;
      const cpu = process.cpuUsage(cpu0);
      results.set(v.name, [...(results.get(v.name) ?? []), `${(((performance.now() - t0) * 1000) / n).toFixed(0)} / ${((cpu.user + cpu.system) / n).toFixed(0)}`]);
    }
  console.log(`inserts into incidents, ${ROWS} rows seeded, transactions of ${GROUP}, synchronous = FULL, ${ROUNDS} rounds alternating; us per insert, wall / CPU:`);
  for (const [name, r] of results) console.log(`  ${name.padEnd(16)} ${r.join('   ')}`);
});
