// What a trigger on `incidents` costs each insert on SQLite (docs/architecture.md, "Incident list cache"):
// inserts into the real, migrated schema through one better-sqlite3 connection, in transactions of
// BATCH rows, with the list version bumped four ways, alternating, ROUNDS times:
//   none             no bump at all
//   code             a separate upsert statement after the insert (what incidents.repository.ts does on SQLite)
//   trigger          an AFTER INSERT trigger doing the same upsert
//   trigger, memory  the trigger with `temp_store = MEMORY` (statement journals in memory)
//
//   npx tsx bench/trigger-cost.ts [--batch 10000] [--rounds 3]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figure the architecture notes quote.
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { caller } from './incidents.bench.js';
import { numberOption, startMuster } from './lib.js';

const BATCH = numberOption('batch', 10_000);
const ROUNDS = numberOption('rounds', 3);

const UPSERT = `insert into incident_list_versions (org_id, livemode, version) values (?, 1, 1)
  on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`;
const TRIGGER = `create trigger probe_list_version after insert on incidents begin
  insert into incident_list_versions (org_id, livemode, version) values (new.org_id, new.livemode, 1)
  on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1; end`;

const muster = await startMuster();
try {
  const c = await caller(muster.app);
  const db = new SQLite(path.join(muster.dataDir, 'muster.db'));
  db.pragma('synchronous = OFF');
  db.pragma('foreign_keys = ON');
  const insert = db.prepare(
    `insert into incidents (org_id, livemode, title, status, priority, source, creator_id, customer_token, sla_due_at, sla_warn_at, created_at, updated_at)
     values (?, 1, 'Probe', 'open', 'high', 'api', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  );
  const upsert = db.prepare(UPSERT);
  let seq = 0;
  const variants = ['none', 'code', 'trigger', 'trigger, memory'] as const;
  const us: Record<(typeof variants)[number], number[]> = { none: [], code: [], trigger: [], 'trigger, memory': [] };
  for (let round = 0; round < ROUNDS; round++)
    for (const v of variants) {
      db.exec('drop trigger if exists probe_list_version');
      if (v.startsWith('trigger')) db.exec(TRIGGER);
      db.pragma(`temp_store = ${v === 'trigger, memory' ? 'MEMORY' : 'DEFAULT'}`);
      const t0 = performance.now();
      db.transaction(() => {
        for (let i = 0; i < BATCH; i++) {
          insert.run(c.orgId, c.userId, `probe-${++seq}`);
          if (v === 'code') upsert.run(c.orgId);
        }
      })();
      us[v].push(((performance.now() - t0) * 1000) / BATCH);
    }
  const rows = (db.prepare('select count(*) as n from incidents').get() as { n: number }).n;
  db.close();
  console.log(`inserts into incidents (13 indexes), batches of ${BATCH}, ${ROUNDS} rounds alternating, ${rows} rows at the end; us per insert:`);
  for (const v of variants) console.log(`  ${v.padEnd(16)} ${us[v].map((x) => x.toFixed(1)).join(' / ')}`);
} finally {
  await muster.close();
}
