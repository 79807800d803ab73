// POST /v1/signals beacons, as in beacons.bench.ts, on two Musters measured in the same rounds: one without
// Redis (device state in this process's memory store, events on the local bus) and one with REDIS_URL (device
// state in Redis through a Lua script, events through the Redis bus, rate-limit counters in Redis). Both keep 10
// SSE subscribers reading every event. The question (issue #40): what moving the beacon state to Redis costs, and
// where: Redis commands, round trips and bytes per beacon, Redis's own CPU, and memory per active device on each side.
// The Redis is a redis-server of this benchmark's own, so its command counts, CPU and memory are this run's alone.
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { createMemoryBeaconStore } from '../src/modules/signals/beacon-memory.js';
import { startRedisServer, type RedisServer } from '../test/cluster/redis-server.js';
import { forkTs, type Child } from './ipc.js';
import { interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startMuster, type BenchResult, type CostRow, type LoadFigures, type MemoryRow, type MusterServer } from './lib.js';
import { cpuOf, redisReady } from './pg-redis.js';
import { medianWire } from './costs.js';
import { BEACONS_REDIS_PROFILE } from './profile-notes.js';
import { SUBSCRIBERS_SCRIPT, checkedDeliveries, settle } from './sse.js';

const NAME = 'beacons-redis';
const SUBSCRIBERS = 10;
const CONN = '[conn]';
const beacon = { type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: `bench-device-${CONN}` } };
/** Issue #40: beacon ingest with state in Redis at this share of the in-memory figure or more. */
const GOAL_RATIO = 0.75;
/** Devices turned on in each store to measure the memory one active device holds. */
const MEMORY_DEVICES = sized(10_000, 2_000);
const WORK = 'beacon (POST /v1/signals, 10 subscribers)';

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const int = (n: number) => n.toLocaleString('en-US');
const one = (n: number) => n.toFixed(1);
const row = (label: string, f: LoadFigures, ratio: number, cpu: number, redisCpu: string) =>
  `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % | ${Math.round(cpu)} | ${redisCpu} |`;

interface Side {
  muster: MusterServer;
  headers: Record<string, string>;
  orgId: number;
  userId: number;
  published: () => number;
}

async function side(receiver: Child, group: string, env: Record<string, string>): Promise<Side> {
  const muster = await startMuster(env);
  const headers = { 'x-api-key': await liveKey(muster.app) };
  let published = 0;
  muster.ctx.events.bus.subscribe((e) => {
    if (e.type === 'signal.beacon') published++;
  });
  if (muster.ctx.redis) await redisReady(muster);
  await receiver.call('open', { group, url: `${muster.url}/v1/signals/stream`, headers, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });
  const first = await muster.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { ...beacon, meta: { device_id: 'bench-setup' } } });
  if (first.statusCode !== 201) throw new Error(`POST /v1/signals: ${first.statusCode} ${first.body}`);
  await settle(receiver, group, SUBSCRIBERS);
  const created = first.json<{ org_id: number; user_id: number }>();
  return { muster, headers, orgId: created.org_id, userId: created.user_id, published: () => published };
}

/** INFO <section> of a Redis as numbers by field (the fields that are numbers). */
async function info(redis: Redis, section: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await redis.info(section)).split('\r\n')) {
    const [k, v] = line.split(':');
    if (k && v !== undefined && v !== '' && !Number.isNaN(Number(v))) out.set(k, Number(v));
  }
  return out;
}

/** Calls per command of INFO commandstats (`cmdstat_evalsha:calls=12,...` -> evalsha 12), those made in Lua scripts included. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await redis.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** The redis-server's CPU (user + system), in ms so far: what a load's `otherCpuMs` reads. */
const redisCpuMs = (redis: Redis) => async () => {
  const cpu = await info(redis, 'cpu');
  return ((cpu.get('used_cpu_user') ?? NaN) + (cpu.get('used_cpu_sys') ?? NaN)) * 1000;
};

/** The JS heap in use after full collections (the benchmark turns --expose-gc on for itself). */
function heapAfterGc(): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

const fix = (i: number, now: string, orgId: number) => ({
  orgId,
  deviceId: `mem-${i}`,
  lat: 52.3702 + i * 1e-6,
  lng: 4.8952 - i * 1e-6,
  accuracy: 12,
  meta: JSON.stringify({ device_id: `mem-${i}` }),
  positionAt: now,
  now,
});

/**
 * Bytes of the JS heap one active device holds in the memory store (SQLite without Redis): MEMORY_DEVICES rows of
 * `beacon_states` loaded by a store of the memory store's code, then each device pinged once (its state holds a
 * ping's strings and it is dirty, as between two flushes), against the heap before the store. Rows removed after.
 */
async function memoryStoreBytes(s: Side): Promise<number> {
  const { db } = s.muster.ctx;
  const now = new Date().toISOString();
  for (let i = 0; i < MEMORY_DEVICES; i += 500) {
    const rows = Array.from({ length: Math.min(500, MEMORY_DEVICES - i) }, (_, k) => {
      const f = fix(i + k, now, s.orgId);
      return { livemode: 0 as const, user_id: s.userId, device_key: f.deviceId, device_id: f.deviceId, org_id: s.orgId, active: 1 as const, lat: f.lat, lng: f.lng, accuracy: f.accuracy, meta: f.meta, position_at: now, last_seen_at: now };
    });
    await db.insertInto('beacon_states').values(rows).execute();
  }
  try {
    const before = heapAfterGc();
    const store = createMemoryBeaconStore({ db, transaction: (fn) => s.muster.ctx.transaction(fn), log: s.muster.ctx.log, flushMs: 3_600_000 });
    await store.ready();
    const later = new Date(Date.now() + 1000).toISOString();
    for (let i = 0; i < MEMORY_DEVICES; i++) {
      if (!store.pingActive!({ mode: 'test', userId: s.userId, deviceKey: `mem-${i}` }, fix(i, later, s.orgId))) throw new Error(`device mem-${i} not active in the scratch store`);
    }
    const after = heapAfterGc();
    if (store.dirtyCount() !== MEMORY_DEVICES) throw new Error(`${store.dirtyCount()} dirty devices, expected ${MEMORY_DEVICES}`);
    await store.close();
    return (after - before) / MEMORY_DEVICES;
  } finally {
    await db.deleteFrom('beacon_states').where('livemode', '=', 0).where('device_key', 'like', 'mem-%').execute();
  }
}

/** Redis's used_memory per active device: MEMORY_DEVICES devices turned on through the Redis store (its hash, its sorted-set and org-set entries). */
async function redisStoreBytes(s: Side, probe: Redis): Promise<number> {
  const store = s.muster.ctx.beacons;
  const before = (await info(probe, 'memory')).get('used_memory')!;
  const now = new Date().toISOString();
  for (let i = 0; i < MEMORY_DEVICES; i += 500) {
    const batch = Array.from({ length: Math.min(500, MEMORY_DEVICES - i) }, (_, k) => i + k);
    const done = await Promise.all(batch.map((n) => store.recordPing(s.muster.ctx.db, { mode: 'test', userId: s.userId, deviceKey: `mem-${n}` }, fix(n, now, s.orgId))));
    if (done.some((d) => !d.turnedOn)) throw new Error('a device of the memory probe was not turned on in Redis');
  }
  const after = (await info(probe, 'memory')).get('used_memory')!;
  return (after - before) / MEMORY_DEVICES;
}

export async function run(): Promise<BenchResult> {
  const loadStart = os.loadavg()[0]!;
  let redis: RedisServer | undefined;
  let probe: Redis | undefined;
  let receiver: Child | undefined;
  const sides: Side[] = [];
  try {
    redis = await startRedisServer();
    probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    receiver = await forkTs(SUBSCRIBERS_SCRIPT);
    const mem = await side(receiver, 'memory', {});
    sides.push(mem);
    const rd = await side(receiver, 'redis', { REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix });
    sides.push(rd);
    if (mem.muster.ctx.beacons.kind !== 'memory' || rd.muster.ctx.beacons.kind !== 'redis') throw new Error('the two Musters do not keep their beacon state where this benchmark says');

    const post = { method: 'POST' as const, body: beacon, connectionPlaceholder: CONN, seconds: RUN_SECONDS };
    process.stderr.write('  POST /v1/signals (beacons), state in memory vs Redis...\n');
    await probe.config('RESETSTAT');
    const r = await interleave({ ...post, url: `${mem.muster.url}/v1/signals`, headers: mem.headers }, [
      { ...post, url: `${rd.muster.url}/v1/signals`, headers: rd.headers, wire: { redisPort: redis.port }, otherCpuMs: redisCpuMs(probe) },
    ]);
    const subject = r.subjects[0]!;
    const calls = await commandCalls(probe);

    // Every published beacon reached every subscriber, on both Musters.
    const delivered = await checkedDeliveries(receiver, SUBSCRIBERS, { memory: () => mem.published(), redis: () => rd.published() });
    const rows = async (s: Side) => (await sql<{ n: number }>`select count(*) as n from beacon_states where active = 1`.execute(s.muster.ctx.db)).rows[0]?.n ?? 0;
    const devices = await probe.zcard(`${redis.prefix}beacons:seen`);
    const memRows = await rows(mem);
    const rdRows = await rows(rd);

    process.stderr.write(`  memory per active device (${int(MEMORY_DEVICES)} devices in each store)...\n`);
    const memBytes = await memoryStoreBytes(mem);
    const redisBytes = await redisStoreBytes(rd, probe);

    // Redis's work per beacon: its commands (Lua's included), per beacon of the Redis side's runs (warm-ups included).
    const beacons = subject.completed;
    const perBeacon = [...calls.entries()]
      .map(([cmd, n]) => [cmd, n / beacons] as const)
      .filter(([, n]) => n >= 0.05)
      .sort((a, b) => b[1] - a[1]);
    const wire = medianWire(subject.rounds);
    const cpu = cpuOf(subject);
    const met = subject.ratio >= GOAL_RATIO;
    const rounds = subject.rounds.map((x) => `${rps(x.rps)} / ${rps(x.baseline)}`).join(', ');

    const markdown = [
      '## Beacon ingest: device state in memory or in Redis',
      '',
      'The beacon load of the section above (10 connections, each its own device, 10 SSE subscribers reading every event) on two',
      'Musters in the same rounds, both on SQLite for everything durable. Without `REDIS_URL` the device state is in the memory',
      'store (a ping of a device that is on changes memory, no promise; positions are flushed once a second), the rate-limit',
      'counter in memory and the event on the local bus. With `REDIS_URL` (a `redis-server` of the benchmark\'s own on this',
      'machine, no persistence, so its command counts, CPU and memory are this run\'s alone) the rate-limit counter is in Redis',
      '(counted ahead in blocks: one reservation for up to 64 requests, made in the background), the device state one Lua script on its hash, and the event one Lua script (id, replay stream, PUBLISH) that',
      'comes back on the subscriber connection before it reaches the streams; they go out auto-pipelined with the commands',
      'of the other connections\' beacons (src/lib/redis.ts). The device\'s first beacon (its turn-on) is in the',
      `setup. ${ROUNDS_TEXT} (memory, Redis, memory, ...), each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms; the Redis side's ratio is`,
      'against the mean of the memory runs around its round.',
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs memory state | Muster CPU µs/beacon | redis-server CPU µs/beacon |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      row('Muster, device state in memory', r.baseline, 1, r.baselineCpuUs, '-'),
      row('Muster, device state in Redis (`REDIS_URL`)', subject.figures, subject.ratio, cpu.server, cpu.backends === undefined ? 'n/a' : String(Math.round(cpu.backends))),
      '',
      `Redis / memory req/s per round: ${rounds}.`,
      '',
      `Goal (issue #40): beacon ingest with state in Redis at ${GOAL_RATIO * 100} % or more of the in-memory figure. Measured: ${(subject.ratio * 100).toFixed(1)} %, **${met ? 'met' : 'not met'}**.`,
      '',
      "Where the difference goes, per beacon of the Redis side (its runs' beacons, warm-ups included): Muster's main thread",
      `${Math.round(cpu.server)} µs against ${Math.round(r.baselineCpuUs)} µs in memory (CPU time of the thread over the requests it completed, median of the rounds),`,
      `and the redis-server ${cpu.backends === undefined ? 'n/a' : Math.round(cpu.backends)} µs more on the same 2 cores (INFO cpu, user + system). On the wire (the kernel's`,
      `counters of Muster's connections to that Redis, both directions): ${wire ? `${one(wire.redisSegments)} TCP segments sent and ${int(Math.round(wire.redisBytes))} bytes` : 'n/a'} per beacon.`,
      `Redis commands per beacon (INFO commandstats over the rounds, those run inside Lua included): ${perBeacon.map(([c, n]) => `${c} ${n.toFixed(2)}`).join(', ')}.`,
      '',
      `Memory per active device, measured with ${int(MEMORY_DEVICES)} devices: **${int(Math.round(memBytes))} B** of JS heap in the memory store (the rows of`,
      '`beacon_states` loaded by a store of its code, each device then pinged once so that its state holds a ping\'s strings and it',
      'is dirty, as between two flushes; heapUsed after full collections, against the heap before the store) and',
      `**${int(Math.round(redisBytes))} B** of Redis's \`used_memory\` (the same devices turned on through the Redis store: the device's hash, its`,
      'entry in the sorted set of last pings and in its org\'s set; INFO memory before and after).',
      '',
      `Deliveries, checked: the memory-state Muster published ${int(mem.published())} beacon events and each of its 10 subscribers received all of`,
      `them (min ${int(delivered.memory!.minEvents)}, max ${int(delivered.memory!.maxEvents)}); the Redis-state Muster published ${int(rd.published())} and each subscriber received`,
      `all of them (min ${int(delivered.redis!.minEvents)}, max ${int(delivered.redis!.maxEvents)}). Active \`beacon_states\` rows: ${int(memRows)} on the first (the 10 and the setup`,
      `device, written at their turn-on), ${int(rdRows)} on the second, whose ${int(devices)} active devices are in Redis.`,
      '',
      `Machine: ${machine()}; 1-minute load average ${loadStart.toFixed(2)} at the start and ${os.loadavg()[0]!.toFixed(2)} at the end (other work on`,
      'the machine moves absolute figures; the ratio, measured in alternating rounds, and the CPU per beacon are the figures to read).',
      '',
      BEACONS_REDIS_PROFILE,
    ].join('\n');
    const costs: CostRow[] = [
      { work: `${WORK}, state in memory`, config: 'SQLite', cpuUs: r.baselineCpuUs },
      { work: `${WORK}, state in Redis`, config: 'SQLite + Redis', cpuUs: cpu.server, wire },
    ];
    const memory: MemoryRow[] = [
      { what: 'active device (beacon state, JS heap)', config: 'SQLite', bytes: memBytes },
      { what: 'active device (beacon state, Redis used_memory)', config: 'SQLite + Redis', bytes: redisBytes },
    ];
    return { name: NAME, markdown, costs, memory };
  } finally {
    for (const s of sides) await s.muster.close();
    await receiver?.stop();
    probe?.disconnect();
    await redis?.clean();
    await redis?.stop();
  }
}
