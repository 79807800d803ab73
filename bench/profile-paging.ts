// Where the paging of an alert spends its time: N alerts (each a new incident through an integration
// whose policy pages a schedule, as bench/paging.bench.ts sets it up) are sent at once, then the
// paging runs (the walk's level 1, the notification sent, the push queued) and the outbox worker
// (the push encrypted, signed and posted to a local push service) drain them. Prints the wall time
// of the draining, the CPU of this process, and every SQL statement's count and time per alert
// (better-sqlite3's statements timed around run/get/all: the COMMITs carry the fsyncs).
//
// Then the time of one whoIsOnCall (what a schedule target costs each page), over 500 calls.
//
//   npx tsx bench/profile-paging.ts [--n 500] [--three-layers] [--pg]
//
// --three-layers: the schedule has the three layers of bench/oncall.bench.ts's (all of them the one user's).
// --pg: Muster on PostgreSQL with Redis (TEST_DATABASE_URL or the machine's; a schema and key prefix of its own,
// dropped at the end); statements counted from the query log, with the round trips they took (src/db/pipeline.ts)
// and the time each waited for its answer.
//
// Not a benchmark of the registry (bench/run.ts): a tool for the notes of the paging section.
import https from 'node:https';
import SQLite from 'better-sqlite3';
import { createSenders } from '../src/jobs/outbox-senders.js';
import { startOutboxWorker } from '../src/modules/deliveries/index.js';
import { whoIsOnCall } from '../src/modules/oncall/index.js';
import { selfSignedCert, startReceiver } from '../test/peers.js';
import { numberOption, startMuster } from './lib.js';
import { pgRedis } from './pg-redis.js';
import { setupPaging, trigger } from './paging.bench.js';

const N = numberOption('n', 500);
const LAYERS = process.argv.includes('--three-layers') ? 'three' : 'one';
const PG = process.argv.includes('--pg');
/** Statements that travelled in the round trip of the one after them (PostgreSQL). */
let carried = 0;

// Every statement's time, by its SQL, from the moment `timing` is set.
const stats = new Map<string, { n: number; ms: number }>();
let timing = false;
const count = (sql: string, ms: number) => {
  const s = stats.get(sql) ?? { n: 0, ms: 0 };
  s.n += 1;
  s.ms += ms;
  stats.set(sql, s);
};
const probe = new SQLite(':memory:');
const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
probe.close();
for (const method of ['run', 'get', 'all'] as const) {
  const original = proto[method]!;
  proto[method] = function (this: { source: string }, ...args: unknown[]) {
    if (!timing) return original.apply(this, args);
    const t = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      count(this.source, performance.now() - t);
    }
  };
}

const pgr = PG ? await pgRedis('profile_paging') : undefined;
const muster = await startMuster(
  { MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', ...(pgr?.env ?? {}) },
  PG
    ? {
        onQuery: (sql, _params, ms, withNext) => {
          if (!timing) return;
          count(sql, ms);
          if (withNext) carried += 1;
        },
      }
    : {},
);
const tls = selfSignedCert();
const push = await startReceiver({ tls });
push.respond = () => ({ status: 201 });
const stopWorker = startOutboxWorker(muster.ctx, createSenders(muster.ctx, new https.Agent({ ca: tls.cert, keepAlive: true })));
try {
  const { path, orgId, scheduleId } = await setupPaging(muster, push.origin, LAYERS);
  const send = async (ref: string) => {
    const res = await muster.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: trigger(ref) });
    if (res.statusCode !== 202) throw new Error(`${ref}: ${res.statusCode} ${res.body}`);
  };
  const waitPushes = async (n: number) => {
    while (push.requests.length < n) await new Promise((r) => setTimeout(r, 5));
  };
  // Warm-up: 50 alerts through the whole path.
  for (let i = 0; i < 50; i++) await send(`warm-${i}`);
  await waitPushes(50);

  timing = true;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i += 10) await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, j) => send(`p-${i + j}`)));
  const accepted = performance.now() - t0;
  await waitPushes(50 + N);
  const drained = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  timing = false;

  const sqlMs = [...stats.values()].reduce((a, s) => a + s.ms, 0);
  console.log(`${N} alerts: accepted in ${accepted.toFixed(0)} ms (${((N / accepted) * 1000).toFixed(0)}/s), all pushed after ${drained.toFixed(0)} ms (${((N / drained) * 1000).toFixed(0)}/s)`);
  const statements = [...stats.values()].reduce((a, s) => a + s.n, 0);
  console.log(
    `CPU of this process: ${((used.user + used.system) / 1000 / N).toFixed(2)} ms per alert; SQL (${PG ? 'waiting for answers, overlapping' : 'statements run'}): ${(sqlMs / N).toFixed(2)} ms per alert; ${(statements / N).toFixed(1)} statements${PG ? ` in ${((statements - carried) / N).toFixed(1)} round trips` : ''} per alert`,
  );
  console.log('\nper alert:   count      ms  statement');
  for (const [sql, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) {
    console.log(`${(s.n / N).toFixed(2).padStart(13)} ${(s.ms / N).toFixed(3).padStart(7)}  ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
  }

  const calls = 500;
  const w0 = performance.now();
  for (let i = 0; i < calls; i++) if (!(await whoIsOnCall(muster.ctx, orgId, scheduleId, Date.now()))) throw new Error('nobody on call');
  console.log(`\nwhoIsOnCall (${LAYERS} layer${LAYERS === 'one' ? '' : 's'}): ${((performance.now() - w0) / calls).toFixed(3)} ms a call`);
} finally {
  await stopWorker();
  await push.close();
  await muster.close();
  await pgr?.drop();
}
