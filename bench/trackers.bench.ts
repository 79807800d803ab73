// OsmAnd protocol ingest (GET /v1/trackers/osmand?id=<device token>&lat=..&lon=..), as Traccar Client
// and OsmAnd-speaking trackers send it. Two comparisons: 10 phones while 10 dashboards watch the org's
// live stream, against a bare node:http server answering the same empty 200 and writing the same frame
// to 10 streams of its own (the goal, like the beacon benchmark of POST /v1/signals), on SQLite and on
// PostgreSQL + Redis in the same rounds (issue #40, bench/pg-redis.ts); and one
// phone with nobody watching, against node:http answering the empty 200 alone (the request path's cost).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { TRACKERS_PROFILE } from './profile-notes.js';
import { forkTs, type Child } from './ipc.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { answerHeaders, compare, interleave, liveKey, machine, RUN_SECONDS, startBaseline, startFastifyFloor, startMuster, type BenchResult, type Interleaved, type LoadFigures, type MusterServer, type Server } from './lib.js';
import { SUBSCRIBERS_SCRIPT, checkedDeliveries, startBroadcastBaseline, type BroadcastBaseline } from './sse.js';

const NAME = 'trackers';
const SECONDS = RUN_SECONDS;
/** The goal: at least this share of the baseline's throughput (as for POST /v1/signals). */
const GOAL_RATIO = 0.5;

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const int = (n: number) => n.toLocaleString('en-US');

function row(label: string, f: LoadFigures, ratio: number): string {
  return `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;
}

/** The floor: node:http answering every request 200 with an empty body, as the tracker route does. */
async function startEmptyBaseline(): Promise<Server> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Each load connection replaces this in the URL with its own device's token (10 phones, one connection each). */
const TOKEN = '[token]';
const SUBSCRIBERS = 10;
const FIX = 'lat=52.3702&lon=4.8952&speed=12.5&bearing=90&altitude=4&accuracy=8&batt=80';

/** One Muster of the goal's comparison: 10 phones (devices of the key's user), each turned on by its first fix, and 10 dashboards on its stream. */
interface Phones {
  muster: MusterServer;
  tokens: string[];
  orgIds: Set<number>;
  published: () => number;
  /** The last frame its subscribers got (a first fix's `signal.beacon`). */
  frame: string;
  unsubscribe(): void;
}

async function phones(receiver: Child, group: string, muster: MusterServer, key: string): Promise<Phones> {
  const headers = { 'x-api-key': key };
  const tokens: string[] = [];
  const orgIds = new Set<number>();
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const created = await muster.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: `bench phone ${i}` } });
    if (created.statusCode !== 201) throw new Error(`POST /v1/devices: ${created.statusCode} ${created.body}`);
    const device = created.json<{ token: string; org_id: number }>();
    tokens.push(device.token);
    orgIds.add(device.org_id);
  }
  let published = 0;
  const unsubscribe = muster.ctx.events.bus.subscribe((e) => {
    if (e.type === 'signal.beacon') published++;
  });
  await receiver.call('open', { group, url: `${muster.url}/v1/signals/stream`, headers, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });
  // Each phone's first fix turns it on (a write and its audit entry): done here, before any run.
  for (const token of tokens) {
    const first = await muster.app.inject({ url: `/v1/trackers/osmand?id=${token}&${FIX}` });
    if (first.statusCode !== 200) throw new Error(`first fix (${group}): ${first.statusCode} ${first.body}`);
  }
  // With Redis a fix's event is published after its answer and heard back later: wait (10 s at most) for the
  // first fixes' events before the delivery check reads the count (unguarded before: a CI quick run failed 2.6 s into
  // this benchmark, before any load, with its message out of the log's kept tail).
  const deadline = performance.now() + 10_000;
  while (published < tokens.length && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const sample = (await checkedDeliveries(receiver, SUBSCRIBERS, { [group]: () => published }))[group]!;
  if (published !== tokens.length) throw new Error(`${group}: ${published} beacon events for the ${tokens.length} first fixes`);
  if (!sample.lastData?.includes('"signal.beacon"')) throw new Error(`unexpected first frame (${group}): ${sample.lastData}`);
  return { muster, tokens, orgIds, published: () => published, frame: sample.lastData, unsubscribe };
}

interface Watched {
  r: Interleaved;
  published: { sqlite: number; pg: number };
  frames: { sqlite: number; pg: number };
  baseFrames: number;
  broadcasts: number;
}

/**
 * The first comparison, the goal's: 10 devices' fixes while 10 dashboards watch the org's live stream, on SQLite and on
 * PostgreSQL + Redis in the same rounds, against node:http doing the same delivery.
 */
async function watched(lite: MusterServer, liteKey: string, pgMuster: MusterServer, pgKey: string, pgr: PgRedis): Promise<Watched> {
  const receiver = await forkTs(SUBSCRIBERS_SCRIPT);
  let baseline: BroadcastBaseline | undefined;
  const sides: Phones[] = [];
  try {
    const a = await phones(receiver, 'sqlite', lite, liteKey);
    sides.push(a);
    const b = await phones(receiver, 'pg', pgMuster, pgKey);
    sides.push(b);
    // The baseline answers the same empty 200 and writes a frame Muster sent, byte for byte, to its own 10 streams.
    baseline = await startBroadcastBaseline({ status: 200 }, `id: ${Date.now() * 1000}\n${a.frame}\n\n`, [...a.orgIds]);
    await receiver.call('open', { group: 'baseline', url: `${baseline.url}/v1/signals/stream`, headers: {}, count: SUBSCRIBERS, concurrency: SUBSCRIBERS, timeoutMs: 10_000 });

    process.stderr.write('  GET /v1/trackers/osmand, 10 phones, 10 subscribers, SQLite and PostgreSQL + Redis...\n');
    const path = `/v1/trackers/osmand?id=${TOKEN}&${FIX}`;
    const per = { connectionPlaceholder: TOKEN, seconds: SECONDS };
    const r = await interleave({ ...per, connectionValues: a.tokens, url: `${baseline.url}${path}` }, [
      { ...per, connectionValues: a.tokens, url: `${lite.url}${path}` },
      { ...per, connectionValues: b.tokens, url: `${pgMuster.url}${path}`, otherCpuMs: pgr.backendCpuMs, wire: true },
    ]);

    // Every published fix reached every subscriber, on the three servers.
    const d = await checkedDeliveries(receiver, SUBSCRIBERS, { sqlite: a.published, pg: b.published, baseline: () => baseline!.broadcasts() });
    return {
      r,
      published: { sqlite: a.published(), pg: b.published() },
      frames: { sqlite: d.sqlite!.totalEvents, pg: d.pg!.totalEvents },
      baseFrames: d.baseline!.totalEvents,
      broadcasts: baseline.broadcasts(),
    };
  } finally {
    for (const s of sides) s.unsubscribe();
    await receiver.stop();
    await baseline?.close();
  }
}

export async function run(): Promise<BenchResult> {
  const loadStart = os.loadavg()[0]!;
  // Limits off (0 = unlimited; a benchmark measures throughput, not the limiter), the per-device one too.
  const off = { RATE_LIMIT_API: '0', RATE_LIMIT_AUTH: '0', RATE_LIMIT_BOOKING: '0', RATE_LIMIT_PUBLIC: '0', RATE_LIMIT_DEVICE: '0' };
  const muster = await startMuster(off);
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: Server | undefined;
  let headed: Server | undefined;
  let floor: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    // The same fixes on PostgreSQL with Redis (issue #40), in the goal's comparison's rounds.
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr, off);
    const w = await watched(muster, key, pgMuster, await liveKey(pgMuster.app), pgr);
    const goal = w.r.subjects.map((s, i) => `${CONFIGS[i]} ${(s.ratio * 100).toFixed(1)} %, **${s.ratio >= GOAL_RATIO ? 'met' : 'not met'}**`).join('; ');

    const created = await muster.app.inject({ method: 'POST', url: '/v1/devices', headers: { 'x-api-key': key }, payload: { name: 'bench tracker' } });
    if (created.statusCode !== 201) throw new Error(`POST /v1/devices: ${created.statusCode} ${created.body}`);
    const { token } = created.json<{ token: string }>();
    const path = `/v1/trackers/osmand?id=${token}&${FIX}`;
    const first = await muster.app.inject({ url: path });
    if (first.statusCode !== 200) throw new Error(`GET ${path}: ${first.statusCode} ${first.body}`);
    baseline = await startEmptyBaseline();

    process.stderr.write('  GET /v1/trackers/osmand, nobody watching...\n');
    const c = await compare({ url: `${baseline.url}${path}`, seconds: SECONDS }, { url: `${muster.url}${path}`, seconds: SECONDS });
    const rounds = c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ');
    // node:http sending every header of Muster's empty 200: what the header set alone costs.
    headed = await startBaseline(undefined, 200, answerHeaders(first.headers));
    const h = await compare({ url: `${baseline.url}${path}`, seconds: SECONDS }, { url: `${headed.url}${path}`, seconds: SECONDS });
    // The framework's floor: Fastify alone answering the same empty 200.
    floor = await startFastifyFloor(undefined);
    const f = await compare({ url: `${baseline.url}${path}`, seconds: SECONDS }, { url: `${floor.url}${path}`, seconds: SECONDS });

    const markdown = [
      '## OsmAnd ingest (tracker apps)',
      '',
      'Measured: `GET /v1/trackers/osmand?id=<device token>&lat&lon&speed&bearing&altitude&accuracy&batt`, the request Traccar Client',
      "and OsmAnd-speaking trackers send, with no timestamp (so each fix is \"now\" and moves the device's marker). Per request",
      'Muster resolves the token from the device cache (keyed by its text), then posts a beacon through the same path as `POST /v1/signals`',
      "(the org and user reads; the device's state changes in memory, no transaction: only a turn-on writes, and positions are flushed",
      'once a second), and publishes `signal.beacon` at once. 10 connections; rounds alternating baseline and Muster (three, one in quick',
      `mode), each run a 1 s warm-up then ${SECONDS} s; medians; latencies in ms.`,
      '',
      '### Ten phones, ten dashboards watching (the goal\'s comparison)',
      '',
      'Like the beacon benchmark of `POST /v1/signals` (the issue sets the goal "like POST /v1/signals"): each of the 10 load',
      "connections is its own phone (its own device token), and 10 SSE subscribers hold the org's `GET /v1/signals/stream` open with",
      'a key, as dashboards showing the map do; every fix is delivered to all 10. The baseline is a bare `node:http` server that',
      'answers the same empty 200 and writes the same frame (one Muster sent, byte for byte) to 10 subscribers of its own: the',
      'delivery without auth, checks or state. The subscribers run in a child process. Two configurations in the same rounds',
      '(baseline, SQLite, PostgreSQL + Redis, baseline, PostgreSQL + Redis, SQLite, ...): Muster on SQLite alone (device state in the',
      'memory store), and Muster on PostgreSQL (a schema of its own) with Redis (a key prefix of its own), where a fix runs one Lua',
      'script on the device\'s hash in Redis and its event one more (id, replay stream, PUBLISH), heard back before it reaches the',
      'streams; each with 10 phones of its own. Rate limits are off in this benchmark (0), so no counter is kept on either side.',
      '',
      ...bothTable(w.r),
      '',
      CPU_NOTE,
      '',
      `Goal (from the issue): at least ${GOAL_RATIO * 100} % of the baseline's throughput. Measured: ${goal}.`,
      `Deliveries, checked: Muster on SQLite published ${int(w.published.sqlite)} \`signal.beacon\` events (the 10 first fixes and those of the runs),`,
      `and each of the 10 subscribers received every one of them (${int(w.frames.sqlite)} frames in all); on PostgreSQL + Redis ${int(w.published.pg)}, each`,
      `received by all 10 (${int(w.frames.pg)} frames); the baseline broadcast ${int(w.broadcasts)} (${int(w.baseFrames)} frames).`,
      '',
      '### Nobody watching: the request path alone',
      '',
      "All 10 connections send one device's fixes and no stream is open, against a bare `node:http` server answering the same",
      'empty 200 and doing nothing else. Not the goal\'s comparison (the baseline does none of the work a fix is for), kept to',
      "show what the request path itself costs, with the framework's and the header set's shares beside it.",
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`)', c.baseline, 1),
      row('Muster', c.subject, c.ratio),
      row('Fastify alone (one route, no plugins; its own rounds)', f.subject, f.ratio),
      row("`node:http` sending Muster's response headers (its own rounds)", h.subject, h.ratio),
      '',
      `Muster / baseline req/s per round: ${rounds}.`,
      '',
      'A fix reads and writes nothing in the database unless it turns its device on (the device, its org access and its',
      "owner's name come from memory); the baseline does no work at all. The load generator shares the 2 cores with the server and with whatever else runs (load",
      `average, 1 min: ${loadStart.toFixed(1)} when the benchmark started, ${os.loadavg()[0]!.toFixed(1)} when it ended), so absolute figures move`,
      'between runs; the ratio is the figure to compare, and only against a run of `beacons` on a machine as quiet.',
      `The bare server sending the ${Object.keys(answerHeaders(first.headers)).length} headers of Muster's answer as they are (security headers, rate limit, request id), in`,
      `rounds of its own: ${(h.ratio * 100).toFixed(1)} % of the plain baseline; that share is the header set's own cost to \`node:http\`.`,
      `Fastify alone, one route answering the same empty 200 with no plugins or hooks, in rounds of its own: ${(f.ratio * 100).toFixed(1)} %;`,
      "what lies between that row and Muster's is Muster's own work (its hooks, the fix's parsing and checks, the beacon path, the broadcast).",
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- trackers\`.`,
      '',
      TRACKERS_PROFILE,
    ].join('\n');
    return { name: NAME, markdown, costs: costRows('OsmAnd fix (GET /v1/trackers/osmand, 10 subscribers)', w.r) };
  } finally {
    await baseline?.close();
    await headed?.close();
    await floor?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
