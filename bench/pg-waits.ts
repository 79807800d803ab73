// Where a PostgreSQL backend serving Muster's Events API spends its time under load: pg_stat_activity
// sampled every 5 ms during ROUNDS loads of triggers with new dedup keys (10 connections, 4 s each),
// counted by wait event, state and statement; then the plan of the dedup lookup and the tables'
// statistics. Not a benchmark of the registry (bench/run.ts): the tool behind the write-limit
// profile notes (bench/profile-notes.ts).
//
//   TEST_DATABASE_URL=postgres://... npx tsx bench/pg-waits.ts [--rounds 3] [--history 0] [--analyze]
//
// --history N: the org's N incidents of the past year written first (as the list benchmark writes
// them) and analysed; --analyze: the tables analysed after the setup only.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropPgSchemas } from './bulk-writer.js';
import { caller, seedPg } from './incidents.bench.js';
import { load, numberOption, startMuster } from './lib.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = numberOption('rounds', 3);
const HISTORY = numberOption('history', 0);
const schema = `bench_pg_waits_${randomBytes(4).toString('hex')}`;
const muster = await startMuster({ DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
const client = new pg.Client({ connectionString: PG_URL });
await client.connect();
try {
  const c = await caller(muster.app);
  const created = await muster.app.inject({ method: 'POST', url: '/v1/integrations', headers: { 'x-api-key': c.key }, payload: { name: 'bench' } });
  const path = new URL(created.json<{ events_url: string }>().events_url).pathname;
  const body = JSON.stringify({ event_action: 'trigger', dedup_key: '@KEY@', payload: { summary: 'Disk', source: 'db-1', severity: 'critical' } });
  if (HISTORY > 0) await seedPg(schema, c, HISTORY);
  if (process.argv.includes('--analyze')) await client.query(`analyze ${schema}.incidents, ${schema}.incident_events, ${schema}.integration_events`);
  const keys = Array.from({ length: 200_000 }, (_, i) => `k-${i}`);
  let next = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const tally = new Map<string, number>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await client.query<{ t: string; e: string; state: string; q: string }>(
          `select coalesce(wait_event_type, 'CPU') as t, coalesce(wait_event, '-') as e, state, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as q
           from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`,
        );
        for (const r of rows) {
          const key = `${r.t}/${r.e} ${r.state} | ${r.q}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const m = await load({ url: `${muster.url}${path}`, method: 'POST', body, sequencePlaceholder: '@KEY@', sequenceValues: keys, sequenceStart: next, seconds: 4 });
    sampling = false;
    await sampler;
    next += m.completed + 100;
    console.log(`round ${round + 1}: ${Math.round(m.requestsPerSec)} req/s, p50 ${m.p50.toFixed(1)} ms; backends seen (samples):`);
    for (const [k, n] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${String(n).padStart(6)}  ${k}`);
  }
  await client.query(`set search_path = ${schema}`);
  const plan = await client.query<Record<string, unknown>>(`explain select * from incidents where org_id = ${c.orgId} and livemode = 1 and source_ref = 'k-0' and status in ('open', 'in_progress') for update`);
  console.log('the dedup lookup:');
  for (const r of plan.rows) console.log(`  ${String(r['QUERY PLAN'])}`);
} finally {
  await client.end();
  await muster.close();
  await dropPgSchemas(PG_URL, [schema]).catch(() => undefined);
}
