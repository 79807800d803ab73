// Paging (issue #36): alerts through an integration whose escalation policy pages a schedule, each a
// new incident, at a fixed rate (100 a second); for each alert the time from its request to its
// first notification queued (the paging run the commit woke resolved the schedule, paged the person
// on call and queued the push in the outbox) and to that push arriving at a push service (a local
// HTTPS receiver speaking Web Push: it answers 201 and the push is decrypted with the
// subscription's keys to find its incident); then whether paging kept up (alerts per second
// accepted and fully paged). Then, as fast as 10 connections go, the alerts per second accepted
// and paged. Both against a bare `node:http` server answering the same 202 at the same rate. All of it
// on SQLite alone, then on PostgreSQL with Redis (issue #40), with the CPU, the PostgreSQL backends'
// CPU and the traffic per alert paged (the cost table's rows).
//
// The load generator and the push service run in a worker thread (bench/paging-load.ts), off
// Muster's event loop; the outbox worker runs beside Muster, as server.ts starts it.
import https from 'node:https';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { createSenders } from '../src/jobs/outbox-senders.js';
import { startOutboxWorker } from '../src/modules/deliveries/index.js';
import { browserKeys, decryptPush, selfSignedCert, type BrowserKeys } from '../test/peers.js';
import { liveKey, machine, mainThreadCpuMs, QUICK, sized, startBaseline, startMuster, startTsWorker, wireDelta, wireNow, type BenchResult, type CostRow, type MusterServer, type Server } from './lib.js';
import { CONFIGS, configOf, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { now, type Arrival, type PagingLoadData, type PagingLoadCommand, type Sent } from './paging-load.js';

export { trigger } from './paging-load.js';

const NAME = 'paging';
const RATE = 100;
const SECONDS = sized(10, 1);
const BURST_SECONDS = sized(5, 1);
const CONNECTIONS = 10;
/**
 * The PostgreSQL + Redis side's warm-up, run at the rate and flat-out run: the SQLite side's in a full run;
 * in a quick one the fewest alerts that still check the path (10, 20, and half a second flat out), as CI's
 * quick run is at its time limit.
 */
const PG_WARM_SECONDS = sized(1, 0.1);
const PG_SECONDS = sized(SECONDS, 0.2);
const PG_BURST_SECONDS = sized(BURST_SECONDS, 0.5);
/** The unit of work of this benchmark's rows in the cost table (bench/costs.ts). */
const WORK = 'Events API trigger paging one person (push)';
/** How long the pages of a run may take to drain after its last alert before the run fails. */
const DRAIN_MS = 120_000;

/** Nearest-rank percentile (as bench/load-worker.ts computes them). */
const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (n: number) => (Number.isNaN(n) ? 'n/a' : n < 100 ? n.toFixed(1) : n.toFixed(0));
const count = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * The org of the benchmark's user: a schedule with that user on call all week from yesterday (the
 * service's clock is real time), a policy whose level 1 targets it, an integration following the
 * policy, the user's one rule (push at once, for urgent and high) and a push subscription at
 * `pushOrigin`. Answers the events URL's path and the subscription's keys (to decrypt the pushes).
 */
export async function setupPaging(muster: MusterServer, pushOrigin: string, layers: 'one' | 'three' = 'one'): Promise<{ path: string; keys: BrowserKeys; orgId: number; scheduleId: number }> {
  const key = await liveKey(muster.app);
  const api = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, status = method === 'POST' ? 201 : 200): Promise<T> => {
    const res = await muster.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });
    if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  };
  const me = await api<{ id: number }>('GET', '/v1/auth/me');
  const org = (await api<{ orgs: { id: number; slug: string; primary: boolean }[] }>('GET', '/v1/orgs')).orgs.find((o) => o.primary)!;
  const start = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  // 'three': the layers of bench/oncall.bench.ts's schedules (a weekly rotation, weekday office hours, nights), all of them the user's.
  const three = [
    { name: 'Primary', start: `${start}T00:00`, turn: { unit: 'week', length: 1 }, users: [me.id] },
    { name: 'Office hours', start: `${start}T09:00`, turn: { unit: 'day', length: 1 }, users: [me.id], restrictions: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] },
    { name: 'Nights', start: `${start}T22:00`, turn: { unit: 'hour', length: 12 }, users: [me.id], restrictions: [{ start_time: '22:00', end_time: '06:00' }] },
  ];
  const schedule = await api<{ id: number }>('POST', `/v1/orgs/${org.slug}/schedules`, {
    name: 'Primary',
    time_zone: layers === 'three' ? 'Europe/Berlin' : 'UTC',
    layers: layers === 'three' ? three : [{ start: `${start}T00:00`, turn: { unit: 'week', length: 1 }, users: [me.id] }],
  });
  const policy = await api<{ id: number }>('POST', `/v1/orgs/${org.slug}/escalation-policies`, { name: 'Pumps', levels: [{ delay_minutes: 30, targets: [{ type: 'schedule', id: schedule.id }] }] });
  const integration = await api<{ events_url: string }>('POST', '/v1/integrations', { name: 'bench', escalation_policy_id: policy.id });
  await api('PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'push', delay_minutes: 0 }], low: [] });
  // As a browser subscribes (a loopback endpoint is allowed by MUSTER_ALLOW_PRIVATE_WEBHOOKS).
  const keys = browserKeys();
  await api('POST', '/v1/push/subscriptions', { endpoint: `${pushOrigin}/push/bench`, keys: keys.json });
  return { path: new URL(integration.events_url).pathname, keys, orgId: org.id, scheduleId: schedule.id };
}

type Load = Awaited<ReturnType<typeof startLoad>>;

/** The worker of bench/paging-load.ts, asked one thing at a time. */
async function startLoad(tls: PagingLoadData['tls']) {
  const worker: Worker = startTsWorker(new URL('./paging-load.ts', import.meta.url), { tls } satisfies PagingLoadData);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let failed: Error | undefined;
  const fail = (err: Error) => {
    failed = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`paging load worker exited (code ${code})`)));
  const origin = await new Promise<string>((resolve, reject) => {
    worker.once('message', (m: { ready: string }) => resolve(m.ready));
    worker.once('error', reject);
  });
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.result);
  });
  let next = 0;
  const ask = <T>(m: PagingLoadCommand): Promise<T> => {
    if (failed) return Promise.reject(failed);
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...m, id });
    });
  };
  return {
    origin,
    atRate: (url: string, prefix: string, seconds: number) => ask<Sent[]>({ cmd: 'rate', url, prefix, rate: RATE, seconds }),
    flatOut: (url: string, prefix: string, seconds: number) => ask<Sent[]>({ cmd: 'flat', url, prefix, seconds, connections: CONNECTIONS }),
    arrivals: () => ask<Arrival[]>({ cmd: 'arrivals' }),
    close: async () => {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}

function check(sent: Sent[], status: number, what: string) {
  const bad = sent.filter((s) => s.status !== status);
  if (bad.length > 0) throw new Error(`${what}: ${bad.length} of ${sent.length} answers were not ${status} (first: ${bad[0]!.status})`);
}

/** One configuration's share of the run: its figures at the rate and flat out, its cost per alert. */
interface Side {
  label: string;
  rated: Sent[];
  queued: number[];
  pushed: number[];
  /** When the last push of the run at the rate arrived. */
  rateLast: number;
  burst: Sent[];
  burstSeconds: number;
  burstStart: number;
  burstEnd: number;
  burstLast: number;
  cost: CostRow;
}

interface SideOptions {
  label: (typeof CONFIGS)[number];
  /** Seconds of the warm-up, of the run at the rate, and of the flat-out run. */
  warm: number;
  seconds: number;
  burst: number;
  /** The PostgreSQL side's schema: its backends' CPU and the traffic are counted. */
  pgr?: PgRedis;
}

/**
 * One Muster paged as the section says: the outbox worker started beside it, a warm-up (discarded), the
 * run at the rate, then flat out; each alert checked to have opened one incident and been pushed once.
 * The CPU (and, on PostgreSQL, its backends' CPU and the traffic) is counted from the first alert at the
 * rate to its last push arrived, per alert: the pushes are decrypted only after that window.
 */
async function pageSide(l: Load, muster: MusterServer, tls: PagingLoadData['tls'], o: SideOptions): Promise<Side> {
  // The delivery worker as server.ts starts it, trusting the stand-in push service's certificate.
  const stopWorker = startOutboxWorker(muster.ctx, createSenders(muster.ctx, new https.Agent({ ca: tls.cert, keepAlive: true })));
  try {
    const { path, keys } = await setupPaging(muster, l.origin);
    const url = `${muster.url}${path}`;
    const what = (s: string) => `${o.label}, ${s}`;

    // Every push arrived so far, kept as it came; decrypted (to find its incident) by decryptArrived(), outside the measured window.
    const raw: Arrival[] = [];
    const pushedAt = new Map<number, number[]>();
    let decrypted = 0;
    const decryptArrived = () => {
      for (const a of raw.slice(decrypted)) {
        const { incident_id } = JSON.parse(decryptPush(Buffer.from(a.body), keys)) as { incident_id: number };
        pushedAt.set(incident_id, [...(pushedAt.get(incident_id) ?? []), a.at]);
      }
      decrypted = raw.length;
    };
    /** Waits until `n` pushes in all arrived (the pages of a run drained), without decrypting them. */
    const drain = async (n: number, phase: string) => {
      const deadline = Date.now() + DRAIN_MS;
      for (;;) {
        raw.push(...(await l.arrivals()));
        if (raw.length >= n) break;
        if (Date.now() > deadline) throw new Error(`${what(phase)}: ${raw.length} pushes arrived in all, ${n} expected, ${DRAIN_MS / 1000} s after the load`);
        await new Promise((r) => setTimeout(r, 50));
      }
      if (raw.length > n) throw new Error(`${what(phase)}: ${raw.length} pushes arrived in all, only ${n} expected`);
    };
    /** The incidents opened by the alerts whose refs start with `prefix`, by ref. */
    const incidentsOf = async (prefix: string) =>
      new Map((await muster.ctx.db.selectFrom('incidents').select(['id', 'source_ref']).where('source_ref', 'like', `${prefix}-%`).execute()).map((r) => [r.source_ref!, r.id]));
    const lastPush = (ids: Iterable<number>) => Math.max(...[...ids].map((id) => Math.max(...(pushedAt.get(id) ?? [NaN]))));

    const warm = await l.atRate(url, 'warm', o.warm);
    check(warm, 202, what('warm-up'));
    await drain(warm.length, 'warm-up');
    decryptArrived();

    process.stderr.write(`  ${o.label}: ${RATE} alerts/s for ${o.seconds} s...\n`);
    const wire0 = o.pgr ? wireNow() : undefined;
    const pg0 = await o.pgr?.backendCpuMs();
    const cpu0 = mainThreadCpuMs();
    const rated = await l.atRate(url, 'rate', o.seconds);
    check(rated, 202, what('at the rate'));
    await drain(warm.length + rated.length, 'at the rate');
    const cpuMs = mainThreadCpuMs() - cpu0;
    const pg1 = await o.pgr?.backendCpuMs();
    const wire1 = o.pgr ? wireNow() : undefined;
    decryptArrived();
    const perAlert = (x: number) => (x * 1000) / rated.length;
    const cost: CostRow = { work: WORK, config: configOf(o.label), cpuUs: perAlert(cpuMs), pgCpuUs: pg0 === undefined || pg1 === undefined ? undefined : perAlert(pg1 - pg0), wire: wireDelta(wire0, wire1, rated.length) };

    // Each alert: one incident, one push; when its push was queued (the outbox row's created_at,
    // stamped in the transaction that claimed the notification) and when it arrived.
    const rateIncidents = await incidentsOf('rate');
    if (rateIncidents.size !== rated.length) throw new Error(`${what('at the rate')}: ${rateIncidents.size} incidents for ${rated.length} alerts`);
    const outbox = await muster.ctx.db.selectFrom('outbox').select(['payload', 'created_at']).where('kind', '=', 'push').where('topic', '=', 'incident.paged').execute();
    const queuedAt = new Map<number, number>();
    for (const row of outbox) {
      const id = (JSON.parse(row.payload) as { incident_id: number }).incident_id;
      if (queuedAt.has(id)) throw new Error(`${o.label}: incident ${id} was queued two pushes`);
      queuedAt.set(id, Date.parse(row.created_at));
    }
    const queued: number[] = [];
    const pushed: number[] = [];
    for (const s of rated) {
      const id = rateIncidents.get(s.ref)!;
      const q = queuedAt.get(id);
      const p = pushedAt.get(id);
      if (q === undefined) throw new Error(`${o.label}: no push queued for ${s.ref} (incident ${id})`);
      if (p?.length !== 1) throw new Error(`${o.label}: ${p?.length ?? 0} pushes arrived for ${s.ref} (incident ${id})`);
      queued.push(q - s.at);
      pushed.push(p[0]! - s.at);
    }
    const rateLast = lastPush(rateIncidents.values());

    // Flat out: the alerts per second one instance accepts, and how fast their pages drain.
    process.stderr.write(`  ${o.label}: flat out, ${CONNECTIONS} connections, ${o.burst} s...\n`);
    const burstStart = now();
    const burst = await l.flatOut(url, 'burst', o.burst);
    check(burst, 202, what('flat out'));
    const burstEnd = Math.max(...burst.map((s) => s.done));
    await drain(warm.length + rated.length + burst.length, 'flat out');
    decryptArrived();
    const burstIncidents = await incidentsOf('burst');
    if (burstIncidents.size !== burst.length) throw new Error(`${what('flat out')}: ${burstIncidents.size} incidents for ${burst.length} alerts`);
    for (const id of burstIncidents.values()) if (pushedAt.get(id)?.length !== 1) throw new Error(`${what('flat out')}: ${pushedAt.get(id)?.length ?? 0} pushes arrived for incident ${id}`);
    return { label: o.label, rated, queued, pushed, rateLast, burst, burstSeconds: o.burst, burstStart, burstEnd, burstLast: lastPush(burstIncidents.values()), cost };
  } finally {
    await stopWorker();
  }
}

export async function run(): Promise<BenchResult> {
  const env = { MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' };
  const muster = await startMuster(env);
  const tls = selfSignedCert();
  let load: Load | undefined;
  let baseline: Server | undefined;
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  try {
    // The same paging on PostgreSQL with Redis (issue #40): a schema and a key prefix of this run's,
    // its Muster started (migrations) while the load's worker starts.
    pgr = await pgRedis(NAME);
    const [loadStarted, pgStarted] = await Promise.allSettled([startLoad(tls), startPgRedisMuster(pgr, env)]);
    if (loadStarted.status === 'fulfilled') load = loadStarted.value;
    if (pgStarted.status === 'fulfilled') pgMuster = pgStarted.value;
    if (loadStarted.status === 'rejected') throw loadStarted.reason;
    if (pgStarted.status === 'rejected') throw pgStarted.reason;
    const l = loadStarted.value;

    baseline = await startBaseline({ status: 'success', message: 'Event processed', dedup_key: 'x' }, 202);
    process.stderr.write(`  baseline: ${RATE} alerts/s for ${SECONDS} s, then flat out for ${BURST_SECONDS} s...\n`);
    const bare = await l.atRate(baseline.url, 'bare', SECONDS);
    check(bare, 202, 'baseline');
    const bareBurst = await l.flatOut(baseline.url, 'bare-burst', BURST_SECONDS);
    check(bareBurst, 202, 'baseline flat out');
    // The sides one after the other, each drained before the next: the push service hears one at a time.
    const sides = [
      await pageSide(l, muster, tls, { label: CONFIGS[0], warm: 1, seconds: SECONDS, burst: BURST_SECONDS }),
      await pageSide(l, pgStarted.value, tls, { label: CONFIGS[1], warm: PG_WARM_SECONDS, seconds: PG_SECONDS, burst: PG_BURST_SECONDS, pgr }),
    ];

    const perSec = (n: number, msSpan: number) => (n / msSpan) * 1000;
    const span = (xs: Sent[]) => Math.max(...xs.map((s) => s.done)) - Math.min(...xs.map((s) => s.at));
    const bareRps = perSec(bareBurst.length, span(bareBurst));
    const answered = (xs: Sent[]) => xs.map((s) => s.done - s.at);
    const late = Math.max(...bare.map((s) => s.late), ...sides.flatMap((d) => d.rated.map((s) => s.late)));
    const r = (xs: number[]) => `${ms(percentile(xs, 50))} | ${ms(percentile(xs, 99))} | ${ms(Math.max(...xs))}`;
    const config = (d: Side) => configOf(d.label);
    const rows = sides.flatMap((d) => [
      `| ${config(d)}: Muster answered (202) | ${count(d.rated.length)} | ${r(answered(d.rated))} |`,
      `| ${config(d)}: alert to its push queued | ${count(d.rated.length)} | ${r(d.queued)} |`,
      `| ${config(d)}: alert to its push arrived | ${count(d.rated.length)} | ${r(d.pushed)} |`,
    ]);
    const kept = sides.map((d) => {
      const first = d.rated[0]!.at;
      const lastSent = d.rated[d.rated.length - 1]!.at;
      return [
        `${d.label}: each of the ${count(d.rated.length)} alerts at the rate opened one incident and was pushed once (checked). Offered ${RATE} alerts/s;`,
        `accepted ${count(perSec(d.rated.length, Math.max(...d.rated.map((s) => s.done)) - first))}/s; fully paged ${count(perSec(d.rated.length, d.rateLast - first))}/s (from the first alert sent to the last push arrived; the last`,
        `push arrived ${ms(d.rateLast - lastSent)} ms after the last alert was sent).`,
      ].join('\n');
    });
    const flat = sides.map((d) => {
      const accepted = perSec(d.burst.length, d.burstEnd - d.burstStart);
      return (
        `${d.label}: flat out (${CONNECTIONS} connections, ${d.burstSeconds} s) accepted ${count(accepted)} alerts/s (${((accepted / bareRps) * 100).toFixed(1)} % of the baseline); each of its ${count(d.burst.length)}\n` +
        `alerts opened one incident and was pushed once (checked), the last push ${((d.burstLast - d.burstEnd) / 1000).toFixed(1)} s after the last answer: ${count(perSec(d.burst.length, d.burstLast - d.burstStart))} alerts/s fully paged.`
      );
    });
    const us = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : count(n));
    const bytes = (n: number | undefined) => (n === undefined ? '-' : count(n));

    const markdown = [
      '## Paging: an alert to its first notification and its push',
      '',
      '`POST /v1/integrations/<key>/events` (a PagerDuty Events API trigger, a new `dedup_key` each: a new urgent incident each) at',
      `${RATE} alerts a second, open loop (each alert sent on its tick whatever the answers do). The integration's`,
      'escalation policy pages a schedule; the person on call has one rule, push at once, and a push subscription whose push',
      'service is a local HTTPS receiver (201; each push decrypted with the subscription keys to find its incident). For each',
      'alert, from its request: **answered**; **queued**, to its push queued in the outbox (the paging run that the creation\'s',
      'commit woke resolved the schedule, paged the person and claimed the notification: the outbox row\'s `created_at`, written',
      'in that transaction, so the commit that follows is not counted); **pushed**, to the Web Push request arriving at the push',
      'service (the outbox worker encrypted, signed (VAPID) and posted it). The baseline is a bare `node:http` server answering',
      'the same 202 at the same rate. The load generator and the push service run in a worker thread, off Muster\'s event loop',
      `(it sent each alert at most ${ms(late)} ms after its tick); the outbox worker runs beside Muster as \`npm start\` runs it.`,
      'Two configurations, one after the other (each warmed up, then drained before the next): Muster on SQLite alone, and',
      'Muster on PostgreSQL (a schema of its own) with Redis (a key prefix of its own; the incident\'s broadcast goes through the',
      `Redis bus), both on this machine. Latencies in ms${QUICK ? '; quick mode (short runs, and on PostgreSQL + Redis a few alerts only: those rows only check the path)' : ''}.`,
      '',
      `| At ${RATE} alerts/s | alerts | p50 | p99 | max |`,
      '| --- | ---: | ---: | ---: | ---: |',
      `| baseline answered (\`node:http\`) | ${count(bare.length)} | ${r(answered(bare))} |`,
      ...rows,
      '',
      ...kept.flatMap((k) => [k, '']),
      `Flat out, each alert a new incident: baseline ${count(bareRps)} req/s (${CONNECTIONS} connections, ${BURST_SECONDS} s).`,
      ...flat.flatMap((k) => ['', k]),
      '',
      '| Per alert at the rate, to its push arrived | Muster CPU µs | PostgreSQL backends CPU µs | PostgreSQL bytes | PostgreSQL segments | Redis bytes | Redis segments |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...sides.map((d) => {
        const w = d.cost.wire;
        return `| ${config(d)} | ${us(d.cost.cpuUs)} | ${us(d.cost.pgCpuUs)} | ${bytes(w?.pgBytes)} | ${w ? w.pgSegments.toFixed(1) : '-'} | ${bytes(w?.redisBytes)} | ${w ? w.redisSegments.toFixed(1) : '-'} |`;
      }),
      '',
      'Counted from the first alert sent at the rate to the last of their pushes arrived, over the alerts sent: Muster CPU is the',
      'main thread\'s (the request, the paging run, and the outbox worker encrypting and posting the push; the load generator and',
      'the push service are a worker thread, and the pushes are decrypted after the count), PostgreSQL CPU its backends\' serving',
      'this run (/proc/<pid>/stat of those pg_stat_activity lists under the run\'s application_name), bytes (both ways) and TCP',
      'data segments Muster sent from the kernel\'s counters of its connections (`ss -tinp`). Redis\'s CPU is in neither (one',
      'redis-server shared by the machine). On PostgreSQL the incident, its page and its push are each a transaction on a pooled',
      'connection, every statement a round trip; on SQLite they are committed in groups in one process (docs/architecture.md,',
      '"Grouped commits").',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- paging\`.`,
    ].join('\n');
    return { name: NAME, markdown, costs: sides.map((d) => d.cost) };
  } finally {
    await load?.close();
    await baseline?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
