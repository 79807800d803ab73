// Paging (issue #36): alerts through an integration whose escalation policy pages a schedule, each a
// new incident, at a fixed rate (100 a second); for each alert the time from its request to its
// first notification queued (the paging run the commit woke resolved the schedule, paged the person
// on call and queued the push in the outbox) and to that push arriving at a push service (a local
// HTTPS receiver speaking Web Push: it answers 201 and the push is decrypted with the
// subscription's keys to find its incident); then whether paging kept up (alerts per second
// accepted and fully paged). Then, as fast as 10 connections go, the alerts per second accepted
// and paged. Both against a bare `node:http` server answering the same 202 at the same rate.
//
// The load generator and the push service run in a worker thread (bench/paging-load.ts), off
// Muster's event loop; the outbox worker runs beside Muster, as server.ts starts it.
import https from 'node:https';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { createSenders } from '../src/jobs/outbox-senders.js';
import { startOutboxWorker } from '../src/modules/deliveries/index.js';
import { browserKeys, decryptPush, selfSignedCert, type BrowserKeys } from '../test/peers.js';
import { liveKey, machine, QUICK, sized, startBaseline, startMuster, startTsWorker, type BenchResult, type MusterServer, type Server } from './lib.js';
import { now, type Arrival, type PagingLoadData, type PagingLoadCommand, type Sent } from './paging-load.js';

export { trigger } from './paging-load.js';

const NAME = 'paging';
const RATE = 100;
const SECONDS = sized(10, 3);
const BURST_SECONDS = sized(5, 2);
const CONNECTIONS = 10;
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

export async function run(): Promise<BenchResult> {
  const muster = await startMuster({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
  const tls = selfSignedCert();
  let load: Awaited<ReturnType<typeof startLoad>> | undefined;
  let baseline: Server | undefined;
  let stopWorker: (() => Promise<void>) | undefined;
  try {
    load = await startLoad(tls);
    const l = load;
    // The delivery worker as server.ts starts it, trusting the stand-in push service's certificate.
    stopWorker = startOutboxWorker(muster.ctx, createSenders(muster.ctx, new https.Agent({ ca: tls.cert, keepAlive: true })));
    const { path, keys } = await setupPaging(muster, l.origin);
    const url = `${muster.url}${path}`;

    // Every push arrived so far, by the incident it pages (decrypted here, after it was timed there).
    const pushedAt = new Map<number, number[]>();
    let pushes = 0;
    const collect = async () => {
      for (const a of await l.arrivals()) {
        const { incident_id } = JSON.parse(decryptPush(Buffer.from(a.body), keys)) as { incident_id: number };
        pushedAt.set(incident_id, [...(pushedAt.get(incident_id) ?? []), a.at]);
        pushes += 1;
      }
    };
    /** Waits until `n` pushes in all arrived (the pages of a run drained); answers when the last did. */
    const drain = async (n: number, what: string) => {
      const deadline = Date.now() + DRAIN_MS;
      for (;;) {
        await collect();
        if (pushes >= n) break;
        if (Date.now() > deadline) throw new Error(`${what}: ${pushes} pushes arrived in all, ${n} expected, ${DRAIN_MS / 1000} s after the load`);
        await new Promise((r) => setTimeout(r, 50));
      }
      if (pushes > n) throw new Error(`${what}: ${pushes} pushes arrived in all, only ${n} expected`);
    };
    /** The incidents opened by the alerts whose refs start with `prefix`, by ref. */
    const incidentsOf = async (prefix: string) =>
      new Map((await muster.ctx.db.selectFrom('incidents').select(['id', 'source_ref']).where('source_ref', 'like', `${prefix}-%`).execute()).map((r) => [r.source_ref!, r.id]));
    const lastPush = (ids: Iterable<number>) => Math.max(...[...ids].map((id) => Math.max(...(pushedAt.get(id) ?? [NaN]))));

    // Warm-up (discarded): a second at the rate, drained before the baseline runs.
    const warm = await l.atRate(url, 'warm', 1);
    check(warm, 202, 'warm-up');
    await drain(warm.length, 'warm-up');

    baseline = await startBaseline({ status: 'success', message: 'Event processed', dedup_key: 'x' }, 202);
    process.stderr.write(`  ${RATE} alerts/s for ${SECONDS} s: baseline, then Muster...\n`);
    const bare = await l.atRate(baseline.url, 'bare', SECONDS);
    check(bare, 202, 'baseline');
    const rated = await l.atRate(url, 'rate', SECONDS);
    check(rated, 202, 'Muster');
    await drain(warm.length + rated.length, 'at the rate');

    // Each alert: one incident, one push; when its push was queued (the outbox row's created_at,
    // stamped in the transaction that claimed the notification) and when it arrived.
    const rateIncidents = await incidentsOf('rate');
    if (rateIncidents.size !== rated.length) throw new Error(`${rateIncidents.size} incidents for ${rated.length} alerts`);
    const outbox = await muster.ctx.db.selectFrom('outbox').select(['payload', 'created_at', 'status']).where('kind', '=', 'push').where('topic', '=', 'incident.paged').execute();
    const queuedAt = new Map<number, number>();
    for (const o of outbox) {
      const id = (JSON.parse(o.payload) as { incident_id: number }).incident_id;
      if (queuedAt.has(id)) throw new Error(`incident ${id} was queued two pushes`);
      queuedAt.set(id, Date.parse(o.created_at));
    }
    const queued: number[] = [];
    const pushed: number[] = [];
    for (const s of rated) {
      const id = rateIncidents.get(s.ref)!;
      const q = queuedAt.get(id);
      const p = pushedAt.get(id);
      if (q === undefined) throw new Error(`no push queued for ${s.ref} (incident ${id})`);
      if (p?.length !== 1) throw new Error(`${p?.length ?? 0} pushes arrived for ${s.ref} (incident ${id})`);
      queued.push(q - s.at);
      pushed.push(p[0]! - s.at);
    }
    const first = rated[0]!.at;
    const lastSent = rated[rated.length - 1]!.at;
    const rateLast = lastPush(rateIncidents.values());
    const answered = (xs: Sent[]) => xs.map((s) => s.done - s.at);
    const late = Math.max(...bare.map((s) => s.late), ...rated.map((s) => s.late));

    // Flat out: the alerts per second one instance accepts, and how fast their pages drain.
    process.stderr.write(`  flat out, ${CONNECTIONS} connections, ${BURST_SECONDS} s: baseline, then Muster...\n`);
    const bareBurst = await l.flatOut(baseline.url, 'bare-burst', BURST_SECONDS);
    check(bareBurst, 202, 'baseline flat out');
    const burstStart = now();
    const burst = await l.flatOut(url, 'burst', BURST_SECONDS);
    check(burst, 202, 'Muster flat out');
    const burstEnd = Math.max(...burst.map((s) => s.done));
    await drain(warm.length + rated.length + burst.length, 'flat out');
    const burstIncidents = await incidentsOf('burst');
    if (burstIncidents.size !== burst.length) throw new Error(`${burstIncidents.size} incidents for ${burst.length} alerts flat out`);
    const burstLast = lastPush(burstIncidents.values());
    const perSec = (n: number, msSpan: number) => (n / msSpan) * 1000;
    const span = (xs: Sent[]) => Math.max(...xs.map((s) => s.done)) - Math.min(...xs.map((s) => s.at));
    const bareRps = perSec(bareBurst.length, span(bareBurst));
    const acceptedRps = perSec(burst.length, burstEnd - burstStart);
    const r = (xs: number[]) => `${ms(percentile(xs, 50))} | ${ms(percentile(xs, 99))} | ${ms(Math.max(...xs))}`;

    const markdown = [
      '## Paging: an alert to its first notification and its push',
      '',
      '`POST /v1/integrations/<key>/events` (a PagerDuty Events API trigger, a new `dedup_key` each: a new urgent incident each) at',
      `${RATE} alerts a second for ${SECONDS} s, open loop (each alert sent on its tick whatever the answers do). The integration's`,
      'escalation policy pages a schedule; the person on call has one rule, push at once, and a push subscription whose push',
      'service is a local HTTPS receiver (201; each push decrypted with the subscription keys to find its incident). For each',
      'alert, from its request: **answered**; **queued**, to its push queued in the outbox (the paging run that the creation\'s',
      'commit woke resolved the schedule, paged the person and claimed the notification: the outbox row\'s `created_at`, written',
      'in that transaction, so the commit that follows is not counted); **pushed**, to the Web Push request arriving at the push',
      'service (the outbox worker encrypted, signed (VAPID) and posted it). The baseline is a bare `node:http` server answering',
      'the same 202 at the same rate. The load generator and the push service run in a worker thread, off Muster\'s event loop',
      `(it sent each alert at most ${ms(late)} ms after its tick); the outbox worker runs beside Muster as \`npm start\` runs it.`,
      `Latencies in ms; SQLite${QUICK ? '; quick mode (short runs)' : ''}.`,
      '',
      `| At ${RATE} alerts/s | p50 | p99 | max |`,
      '| --- | ---: | ---: | ---: |',
      `| baseline answered (\`node:http\`) | ${r(answered(bare))} |`,
      `| Muster answered (202) | ${r(answered(rated))} |`,
      `| alert to its push queued | ${r(queued)} |`,
      `| alert to its push arrived | ${r(pushed)} |`,
      '',
      `Each of the ${count(rated.length)} alerts opened one incident and was pushed once (checked). Offered ${RATE} alerts/s; accepted`,
      `${count(perSec(rated.length, Math.max(...rated.map((s) => s.done)) - first))}/s; fully paged ${count(perSec(rated.length, rateLast - first))}/s (from the first alert sent to the last push arrived; the last`,
      `push arrived ${ms(rateLast - lastSent)} ms after the last alert was sent).`,
      '',
      `Flat out (${CONNECTIONS} connections, ${BURST_SECONDS} s, each alert a new incident): baseline ${count(bareRps)} req/s; Muster accepted`,
      `${count(acceptedRps)} alerts/s (${((acceptedRps / bareRps) * 100).toFixed(1)} % of the baseline); their ${count(burst.length)} pushes arrived by ${((burstLast - burstEnd) / 1000).toFixed(1)} s after the`,
      `last answer: ${count(perSec(burst.length, burstLast - burstStart))} alerts/s fully paged.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- paging\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await stopWorker?.();
    await load?.close();
    await baseline?.close();
    await muster.close();
  }
}
