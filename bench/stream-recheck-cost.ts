// What checking open streams' access again costs (docs/architecture.md, "Streams end with access"):
// STREAMS streams on the hub of a real Muster (subscribed straight to the hub, not over sockets), held by
// USERS users with KEYS keys each (so each batch of 500 carries up to 500 distinct keys), checked by the
// app's own AccessCheck against the database:
//   all     hub.recheckAll(): every stream, as after a gap in the notices (batches of 500)
//   slice   the streams of one slice of the periodic check at the default period (STREAMS / 30)
// For each: wall time, CPU time, and the longest stretch the event loop was busy in one go (what an
// event published meanwhile could wait for; on a loaded machine it includes time the process was not
// scheduled, so read it with the per-batch median). A slice is one batch and never yields: its stretch
// is its wall time.
//
//   npx tsx bench/stream-recheck-cost.ts [--streams 10000] [--users 100] [--keys 5] [--rounds 3]
//   DATABASE_URL=postgres://... DATABASE_SCHEMA=bench_recheck npx tsx bench/stream-recheck-cost.ts   (PostgreSQL; drop the schema after)
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figure the architecture notes quote.
import type { CheckedStream } from '../src/events/access-recheck.js';
import type { Sink } from '../src/events/hub.js';
import { streamAccessCheck } from '../src/modules/streams/access-check.js';
import { numberOption, startMuster } from './lib.js';

const STREAMS = numberOption('streams', 10_000);
const USERS = numberOption('users', 100);
const KEYS = numberOption('keys', 5);
const ROUNDS = numberOption('rounds', 3);
const SLICES = 30; // STREAM_RECHECK_MS 30 s, one slice a second

const env: Record<string, string> = {};
if (process.env.DATABASE_URL) env.DATABASE_URL = process.env.DATABASE_URL;
if (process.env.DATABASE_SCHEMA) env.DATABASE_SCHEMA = process.env.DATABASE_SCHEMA;
const muster = await startMuster({ ...env, STREAM_RECHECK_MS: '0' });
const sink: Sink = { write: () => true, writableLength: 0, destroy: () => undefined };
try {
  const holders: { userId: number; keyId: number; orgId: number }[] = [];
  for (let u = 0; u < USERS; u++) {
    const email = `recheck-${u}-${process.pid}@example.com`;
    const password = 'correct horse battery';
    const reg = await muster.app.inject({ method: 'POST', url: '/v1/users', payload: { email, password, name: `User ${u}` } });
    const userId = reg.json<{ id: number }>().id;
    const login = await muster.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const orgs = await muster.app.inject({ url: '/v1/orgs', headers: { cookie } });
    const orgId = orgs.json<{ orgs: { id: number; primary: boolean }[] }>().orgs.find((o) => o.primary)!.id;
    for (let k = 0; k < KEYS; k++) {
      const key = await muster.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { cookie }, payload: { name: `k${k}`, mode: 'live' } });
      holders.push({ userId, keyId: key.json<{ id: number }>().id, orgId });
    }
  }
  const { hub } = muster.ctx.events;
  const check = streamAccessCheck(muster.ctx);
  const perBatch: number[] = [];
  hub.checkAccessWith(async (batch) => {
    const t0 = performance.now();
    const verdicts = await check(batch);
    perBatch.push(performance.now() - t0);
    return verdicts;
  });
  const streams: CheckedStream[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const h = holders[i % holders.length]!;
    const access = { userId: h.userId, keyId: h.keyId };
    const orgIds = new Set([h.orgId]);
    hub.subscribe({ channel: 'incidents', orgIds, mode: 'live' }, sink, undefined, access);
    streams.push({ access, orgIds });
  }
  const slice = streams.slice(0, Math.ceil(STREAMS / SLICES));

  const measure = async (name: string, run: () => Promise<unknown>) => {
    const walls: number[] = [];
    const cpus: number[] = [];
    let busiest = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // The longest gap between turns of a setImmediate chain: the longest the loop was busy in one go.
      let last = performance.now();
      let running = true;
      const tick = () => {
        const now = performance.now();
        busiest = Math.max(busiest, now - last);
        last = now;
        if (running) setImmediate(tick);
      };
      setImmediate(tick);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await run();
      const cpu = process.cpuUsage(cpu0);
      walls.push(performance.now() - t0);
      cpus.push((cpu.user + cpu.system) / 1000);
      running = false;
    }
    const fmt = (n: number) => n.toFixed(1);
    console.log(`${name.padEnd(6)} wall ${walls.map(fmt).join(' / ')} ms; CPU ${cpus.map(fmt).join(' / ')} ms; longest event-loop stretch ${fmt(busiest)} ms`);
  };
  console.log(`${STREAMS} streams, ${USERS} users x ${KEYS} keys, ${muster.ctx.database.dialect}, ${ROUNDS} rounds`);
  await measure('all', () => hub.recheckAll());
  console.log(`       per batch of 500: median ${[...perBatch].sort((a, b) => a - b)[perBatch.length >> 1]!.toFixed(1)} ms, max ${Math.max(...perBatch).toFixed(1)} ms`);
  await measure('slice', () => check(slice));
  if (hub.stats().subscribers !== STREAMS) throw new Error(`streams closed that should not have been: ${STREAMS - hub.stats().subscribers}`);
} finally {
  await muster.close();
}
