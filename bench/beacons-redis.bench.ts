// POST /v1/signals beacons, as in beacons.bench.ts, on two Musters measured in the same run: one without
// Redis (device state in SQLite, a durable commit per beacon) and one with REDIS_URL (device state in
// Redis through Lua scripts, events through the Redis bus). Both keep 10 SSE subscribers reading
// every event. The question: what moving the beacon state (and the fan-out) to Redis costs or saves.
import os from 'node:os';
import { sql } from 'kysely';
import { startRedisServer, type RedisServer } from '../test/cluster/redis-server.js';
import { forkTs, type Child } from './ipc.js';
import { compare, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, startMuster, type BenchResult, type LoadFigures, type MusterServer } from './lib.js';
import { SUBSCRIBERS_SCRIPT, type GroupStats } from './sse.js';

const NAME = 'beacons-redis';
const SUBSCRIBERS = 10;
const CONN = '[conn]';
const beacon = { type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: `bench-device-${CONN}` } };

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const int = (n: number) => n.toLocaleString('en-US');
const row = (label: string, f: LoadFigures, ratio: number) =>
  `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;

async function settle(receiver: Child, group: string, expected: number): Promise<void> {
  const deadline = performance.now() + 10_000;
  while ((await receiver.call<number>('count', group)) < expected && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Side {
  muster: MusterServer;
  headers: Record<string, string>;
  published(): number;
}

async function side(receiver: Child, group: string, env: Record<string, string>): Promise<Side> {
  const muster = await startMuster(env);
  const headers = { 'x-api-key': await liveKey(muster.app) };
  let published = 0;
  muster.ctx.events.bus.subscribe((e) => {
    if (e.type === 'signal.beacon') published++;
  });
  if (muster.ctx.redis) {
    const deadline = Date.now() + 5_000;
    while (muster.ctx.redis.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
  await receiver.call('open', { group, url: `${muster.url}/v1/signals/stream`, headers, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });
  const first = await muster.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { ...beacon, meta: { device_id: 'bench-setup' } } });
  if (first.statusCode !== 201) throw new Error(`POST /v1/signals: ${first.statusCode} ${first.body}`);
  await settle(receiver, group, SUBSCRIBERS);
  return { muster, headers, published: () => published };
}

function checkDeliveries(who: string, s: GroupStats, published: number): void {
  if (s.connections !== SUBSCRIBERS || s.closedEarly > 0 || s.minEvents !== published || s.maxEvents !== published) {
    throw new Error(`${who}: ${s.connections} subscribers (${s.closedEarly} closed) got ${s.minEvents} to ${s.maxEvents} events; ${published} were published`);
  }
}

export async function run(): Promise<BenchResult> {
  const loadStart = os.loadavg()[0]!;
  let redis: RedisServer | undefined;
  let receiver: Child | undefined;
  const sides: Side[] = [];
  try {
    redis = await startRedisServer();
    receiver = await forkTs(SUBSCRIBERS_SCRIPT);
    const db = await side(receiver, 'database', {});
    sides.push(db);
    const rd = await side(receiver, 'redis', { REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix });
    sides.push(rd);

    const post = { method: 'POST' as const, body: beacon, connectionPlaceholder: CONN, seconds: RUN_SECONDS };
    process.stderr.write('  POST /v1/signals (beacons), database state vs Redis state...\n');
    const c = await compare({ ...post, url: `${db.muster.url}/v1/signals`, headers: db.headers }, { ...post, url: `${rd.muster.url}/v1/signals`, headers: rd.headers });

    const stats: Record<string, GroupStats> = {};
    for (const [group, s] of [['database', db], ['redis', rd]] as const) {
      await settle(receiver, group, SUBSCRIBERS * s.published());
      stats[group] = await receiver.call<GroupStats>('stats', group);
      checkDeliveries(group, stats[group], s.published());
    }
    const rows = async (s: Side) => (await sql<{ n: number }>`select count(*) as n from beacon_states`.execute(s.muster.ctx.db)).rows[0]?.n ?? 0;
    const devices = await rd.muster.ctx.redis!.zcard(`${redis.prefix}beacons:seen`);

    const markdown = [
      '## Beacon ingest: device state in SQLite or in Redis',
      '',
      'The beacon load of the section above (10 connections, each its own device, 10 SSE subscribers reading every event) on two',
      'Musters in one run, both on SQLite for everything durable: one without `REDIS_URL` (the device state is a row in',
      '`beacon_states`, so every beacon is a write transaction with its `COMMIT` and fsync under `synchronous = FULL`) and one',
      'with `REDIS_URL` pointing at a local `redis-server` (no persistence): the device state goes through one Lua script on a Redis',
      'hash, the beacon transaction writes nothing (SQLite commits nothing to disk), and the event goes through the Redis bus',
      '(one script: id, replay stream, PUBLISH) and comes back on the subscriber connection before it reaches the streams.',
      `${ROUNDS_TEXT} alternating the two, each a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms. The "baseline" column here is the`,
      'database-state Muster, not a bare server.',
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs database state |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('Muster, device state in SQLite', c.baseline, 1),
      row('Muster, device state in Redis (`REDIS_URL`)', c.subject, c.ratio),
      '',
      `Redis / SQLite req/s per round: ${c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ')}.`,
      '',
      `Deliveries, checked: the SQLite-state Muster published ${int(db.published())} beacon events and each of its 10 subscribers received all of`,
      `them (min ${int(stats.database!.minEvents)}, max ${int(stats.database!.maxEvents)}); the Redis-state Muster published ${int(rd.published())} and each subscriber received`,
      `all of them (min ${int(stats.redis!.minEvents)}, max ${int(stats.redis!.maxEvents)}). \`beacon_states\` rows: ${int(await rows(db))} on the first, ${int(await rows(rd))} on the second,`,
      `whose ${int(devices)} active devices are in Redis.`,
      '',
      `Machine: ${machine()}; 1-minute load average ${loadStart.toFixed(2)} at the start and ${os.loadavg()[0]!.toFixed(2)} at the end (other work on`,
      'the machine moves absolute figures; the ratio, measured in alternating rounds, is the figure to read).',
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    for (const s of sides) await s.muster.close();
    await receiver?.stop();
    await redis?.clean();
    await redis?.stop();
  }
}
