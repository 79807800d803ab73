// What a RETURNING clause costs an insert on SQLite (db/fixed.ts, insertedId): the incident insert
// into the real, migrated schema seeded like the incidents benchmark, through one better-sqlite3
// connection in transactions of 5,000, three ways alternating ROUNDS times: `returning *`,
// `returning id`, and no RETURNING (better-sqlite3's run() answers the rowid). SQLite runs RETURNING
// like a trigger: the statement keeps a statement journal of the pages it changes and buffers its
// rows. With --memory, `temp_store = MEMORY` (the journal in memory). CPU microseconds per insert.
//
//   npx tsx bench/returning-cost.ts [--rows 300000] [--rounds 4] [--memory]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figure the code and docs quote.
import { timeOrderedToken } from '../src/lib/crypto.js';
import { withSeededDatabase } from './incidents.bench.js';
import { numberOption } from './lib.js';

const ROWS = numberOption('rows', 300_000);
const ROUNDS = numberOption('rounds', 4);
const MEMORY = process.argv.includes('--memory');
const BATCH = 5_000;

await withSeededDatabase(ROWS, (db, c) => {
  db.pragma('synchronous = OFF');
  if (MEMORY) db.pragma('temp_store = MEMORY');
  const insert = `insert into incidents (org_id, livemode, title, description, status, priority, source, source_ref, lat, lng, location_name,
       assignee_id, creator_id, customer_token, sla_due_at, sla_warn_at, sla_warned_at, sla_breached_at, resolved_at, created_at, updated_at, escalate_at)
     values (?, 1, 'Probe', null, 'open', 'high', 'api', null, null, null, null, null, ?, ?, ?, ?, null, null, null, ?, ?, ?)`;
  const ways = [
    { name: 'returning *', stmt: db.prepare(`${insert} returning *`), all: true },
    { name: 'returning id', stmt: db.prepare(`${insert} returning id`), all: true },
    { name: 'no returning', stmt: db.prepare(insert), all: false },
  ];
  const us = new Map<string, number[]>();
  let ms = Date.now();
  for (let round = 0; round < ROUNDS; round++)
    for (const w of ways) {
      const cpu0 = process.cpuUsage();
      db.transaction(() => {
        for (let i = 0; i < BATCH; i++) {
          const at = new Date(++ms).toISOString();
          const values = [c.orgId, c.userId, timeOrderedToken(ms), at, at, at, at, at];
          if (w.all) w.stmt.all(...values);
          else w.stmt.run(...values);
        }
      })();
      const cpu = process.cpuUsage(cpu0);
      us.set(w.name, [...(us.get(w.name) ?? []), (cpu.user + cpu.system) / BATCH]);
    }
  console.log(`incident inserts, ${ROWS} rows seeded, transactions of ${BATCH}, ${ROUNDS} rounds alternating${MEMORY ? ', temp_store = MEMORY' : ''}; CPU us per insert:`);
  for (const [name, r] of us) console.log(`  ${name.padEnd(14)} ${r.map((x) => x.toFixed(1)).join(' / ')}`);
});
