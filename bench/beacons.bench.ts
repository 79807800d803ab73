// POST /v1/signals beacons with an API key while 10 SSE subscribers read /v1/signals/stream, against a bare
// node:http server that answers the same 201 and writes the same frame to 10 subscribers of its own.
// The server runs alone on this thread; autocannon runs in a worker thread (lib.ts) and the subscribers
// in a child process (sse-subscribers.ts), so neither shares the server's event loop. Two configurations in the
// same rounds (issue #40): Muster on SQLite alone, and Muster on PostgreSQL with Redis (bench/pg-redis.ts).
import os from 'node:os';
import { BEACONS_PROFILE } from './profile-notes.js';
import { sql } from 'kysely';
import { forkTs, type Child } from './ipc.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, startMuster, type BenchResult, type LoadOptions, type MusterServer } from './lib.js';
import { SUBSCRIBERS_SCRIPT, checkDeliveries, checkedDeliveries, settle, startBroadcastBaseline, type BroadcastBaseline, type GroupStats } from './sse.js';

const NAME = 'beacons';
const SUBSCRIBERS = 10;
/** The goal: at least this share of the baseline's throughput. */
const GOAL_RATIO = 0.5;
/** Replaced by each autocannon connection's index, so each of the 10 connections is its own device. */
const CONN = '[conn]';

const beacon = { type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: `bench-device-${CONN}` } };

const int = (n: number) => n.toLocaleString('en-US');

interface Side {
  muster: MusterServer;
  headers: Record<string, string>;
  /** `signal.beacon` events the Muster's bus carried (on PostgreSQL + Redis: heard back from Redis, as its streams hear them). */
  published: () => number;
  /** The first beacon's answer, and its frame as the subscribers got it. */
  created: { org_id: number };
  frame: string;
}

/** A Muster with 10 subscribers on its signal stream (group `group`) and one beacon posted and delivered to them. */
async function side(receiver: Child, group: string, muster: MusterServer): Promise<Side> {
  const headers = { 'x-api-key': await liveKey(muster.app) };
  let published = 0;
  muster.ctx.events.bus.subscribe((e) => {
    if (e.type === 'signal.beacon') published++;
  });
  await receiver.call('open', { group, url: `${muster.url}/v1/signals/stream`, headers, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });
  const first = await muster.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { ...beacon, meta: { device_id: 'bench-setup' } } });
  if (first.statusCode !== 201) throw new Error(`POST /v1/signals (${group}): ${first.statusCode} ${first.body}`);
  await settle(receiver, group, SUBSCRIBERS);
  const sample = await receiver.call<GroupStats>('stats', group);
  checkDeliveries(`${group}, first beacon`, sample, 1, SUBSCRIBERS);
  if (!sample.lastData?.includes('"signal.beacon"')) throw new Error(`unexpected first frame (${group}): ${sample.lastData}`);
  return { muster, headers, published: () => published, created: first.json<{ org_id: number }>(), frame: sample.lastData };
}

const activeRows = async (m: MusterServer) => (await sql<{ n: number }>`select count(*) as n from beacon_states where active = 1`.execute(m.ctx.db)).rows[0]?.n ?? 0;

export async function run(): Promise<BenchResult> {
  const loadStart = os.loadavg()[0]!;
  const muster: MusterServer = await startMuster();
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: BroadcastBaseline | undefined;
  let receiver: Child | undefined;
  try {
    // The subscribers: 10 streams on each Muster, authenticated with its key, in one child process.
    receiver = await forkTs(SUBSCRIBERS_SCRIPT);
    const lite = await side(receiver, 'sqlite', muster);
    // The same load on PostgreSQL with Redis (issue #40): device state, rate-limit counter and events in Redis.
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr);
    const pg = await side(receiver, 'pg', pgMuster);

    // The baseline sends the SQLite Muster's first answer and frame, byte for byte, to 10 subscribers of its own.
    baseline = await startBroadcastBaseline({ status: 201, body: lite.created }, `id: ${Date.now() * 1000}\n${lite.frame}\n\n`, [lite.created.org_id]);
    await receiver.call('open', { group: 'baseline', url: `${baseline.url}/v1/signals/stream`, headers: {}, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });

    const post = { method: 'POST' as const, body: beacon, connectionPlaceholder: CONN, seconds: RUN_SECONDS };
    const baseOpts: LoadOptions = { ...post, url: `${baseline.url}/v1/signals` };
    process.stderr.write('  POST /v1/signals (beacons), SQLite and PostgreSQL + Redis...\n');
    const both = await interleave(baseOpts, [
      { ...post, url: `${muster.url}/v1/signals`, headers: lite.headers },
      { ...post, url: `${pgMuster.url}/v1/signals`, headers: pg.headers, otherCpuMs: pgr.backendCpuMs, wire: true },
    ]);

    // Every published beacon reached every subscriber, on the three servers.
    const delivered = await checkedDeliveries(receiver, SUBSCRIBERS, { sqlite: lite.published, pg: pg.published, baseline: () => baseline!.broadcasts() });
    const sqliteRows = await activeRows(muster);
    const pgRows = await activeRows(pgMuster);
    const redisDevices = await pgMuster.ctx.redis!.zcard(`${pgr.prefix}beacons:seen`);

    const goal = both.subjects.map((s, i) => `${CONFIGS[i]} ${(s.ratio * 100).toFixed(1)} %, **${s.ratio >= GOAL_RATIO ? 'met' : 'not met'}**`).join('; ');
    const deliveries = (label: string, published: number, completed: number, st: GroupStats) =>
      `${label} published ${int(published)} beacon events (the first beacon, then every POST it answered: autocannon counted ${int(completed)} completed 201s, and ${int(published - 1 - completed)} more were in flight when runs stopped), and each of the 10 subscribers received exactly ${int(st.minEvents)} of them (min ${int(st.minEvents)}, max ${int(st.maxEvents)}).`;

    const markdown = [
      '## Beacon ingest with 10 live subscribers',
      '',
      'Measured: `POST /v1/signals` `{type: "beacon", lat, lng, accuracy, meta: {device_id}}` with a live API key, while 10 SSE',
      'subscribers hold `GET /v1/signals/stream` open with the same key and read every event. Each of the 10 load connections is its',
      "own device (`bench-device-0` to `-9`, through autocannon's per-connection setup), so every beacon moves its device's marker",
      'and is broadcast; the first beacon of each device also turns it on (the `beacon_on` audit entry), in the warm-up. The',
      'baseline is a bare `node:http` server that answers 201 with the same JSON and writes the same SSE frame (a beacon frame',
      'Muster sent, byte for byte) to 10 subscribers of its own: the broadcast without auth or a database. The server runs alone',
      "on the benchmark's main thread, autocannon in a worker thread, the 30 subscribers in a child process (plain `net` sockets",
      'counting `data:` lines). Two configurations: Muster on SQLite alone (the device state in the memory store: a ping of a device that',
      'is on changes memory, no promise, positions flushed once a second; the rate-limit counter in memory; the event on the',
      'local bus), and Muster on PostgreSQL (a schema of its own) with Redis (a key prefix of its own), both on this machine: the',
      'rate-limit counter in Redis, counted ahead in blocks, the device state one Lua script on its hash (src/modules/signals/redis-beacon-store.ts),',
      'the event one script (id, replay stream, PUBLISH) heard back on the subscriber connection before it reaches the streams;',
      'PostgreSQL is written only at a turn-on. 10 connections;',
      `${ROUNDS_TEXT} (baseline, SQLite, PostgreSQL + Redis, baseline, PostgreSQL + Redis, SQLite, ...), each run a 1 s warm-up then ${RUN_SECONDS} s;`,
      "medians; latencies in ms; each throughput is against the mean of the baseline runs around its round.",
      '',
      ...bothTable(both),
      '',
      CPU_NOTE,
      '',
      `Goal (from the issue): at least ${GOAL_RATIO * 100} % of the baseline's throughput. Measured: ${goal}.`,
      '',
      `Deliveries, checked. SQLite: ${deliveries('Muster', lite.published(), both.subjects[0]!.completed, delivered.sqlite!)}`,
      `PostgreSQL + Redis: ${deliveries('Muster', pg.published(), both.subjects[1]!.completed, delivered.pg!)}`,
      `The baseline broadcast ${int(baseline.broadcasts())}, and each of its subscribers received all of them (min ${int(delivered.baseline!.minEvents)}, max ${int(delivered.baseline!.maxEvents)}).`,
      `Active \`beacon_states\` rows: ${sqliteRows} on SQLite (the 10 devices and the setup one, written at their turn-on); ${pgRows} on PostgreSQL, whose ${redisDevices} active devices are in Redis.`,
      '',
      "What limits it: each beacon is serial work on the server's one thread. Per beacon Muster looks the key up and reads the",
      "caller's org access and user (from the credential cache, no query), counts the request against the rate limit, changes the",
      "device's state, publishes the event (10 socket writes) and serialises the answer through the route schema. Nothing is",
      'written to the database for a device that is on. The broadcast is not the limit: the baseline writes the same 10 frames',
      'a request and still runs many times faster. With Redis, three scripts a beacon go to Redis (pipelined with those of the',
      "other connections' beacons: the Redis segments column of the cost table), and Redis's CPU, on the same 2 cores, is in",
      "neither CPU column: the section \"Beacon ingest: device state in memory or in Redis\" measures it, with Redis's commands",
      'per beacon.',
      '',
      `Both servers share the 2 cores with autocannon and the subscriber process, and with whatever else runs (load average, 1 min:`,
      `${loadStart.toFixed(1)} when the benchmark started, ${os.loadavg()[0]!.toFixed(1)} when it ended), so absolute figures move between runs; the`,
      'ratio is the figure to compare.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- beacons\`.`,
      '',
      BEACONS_PROFILE,
    ].join('\n');
    return { name: NAME, markdown, costs: costRows('beacon (POST /v1/signals, 10 subscribers)', both) };
  } finally {
    await receiver?.stop();
    await baseline?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
