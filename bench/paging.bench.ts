// Paging (issue #36): alerts through an integration whose escalation policy pages a schedule, each a
// new incident, at a fixed rate (100 a second); for each alert the time from its request to its
// first notification queued (the paging run the commit woke resolved the schedule, paged the person
// on call and queued the push in the outbox) and to that push arriving at a push service (a local
// HTTPS receiver speaking Web Push: it answers 201 and the push is decrypted with the
// subscription's keys to find its incident). Then, as fast as 10 connections go, the alerts per
// second sustained. Both against a bare `node:http` server answering the same 202 at the same rate.
import https from 'node:https';
import os from 'node:os';
import { createSenders } from '../src/jobs/outbox-senders.js';
import { startOutboxWorker } from '../src/modules/deliveries/index.js';
import { browserKeys, decryptPush, selfSignedCert, startReceiver, type Receiver } from '../test/peers.js';
import { liveKey, machine, QUICK, sized, startBaseline, startMuster, type BenchResult, type Server } from './lib.js';

const NAME = 'paging';
const RATE = 100;
const SECONDS = sized(10, 3);
const BURST_SECONDS = sized(5, 2);
const CONNECTIONS = 10;

interface Sent {
  ref: string;
  at: number;
  done?: number;
  status?: number;
}

const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (n: number) => (Number.isNaN(n) ? 'n/a' : n.toFixed(1));
const trigger = (ref: string) =>
  JSON.stringify({ event_action: 'trigger', dedup_key: ref, payload: { summary: `Pump ${ref} stopped`, source: 'pump.example.com', severity: 'critical' } });

/** Sends `RATE` alerts a second for `seconds` (open loop: each on its tick, whatever the answers do). */
async function atRate(url: string, prefix: string, seconds: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  const inflight: Promise<void>[] = [];
  const start = Date.now();
  const total = RATE * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const s: Sent = { ref: `${prefix}-${i}`, at: Date.now() };
    sent.push(s);
    inflight.push(
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: trigger(s.ref) }).then(async (res) => {
        await res.arrayBuffer();
        s.done = Date.now();
        s.status = res.status;
      }),
    );
  }
  await Promise.all(inflight);
  return sent;
}

/** As fast as `CONNECTIONS` loops go for `seconds`: how many answered 202. */
async function flatOut(url: string, prefix: string, seconds: number): Promise<{ sent: Sent[]; seconds: number }> {
  const sent: Sent[] = [];
  const start = Date.now();
  const end = start + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        const s: Sent = { ref: `${prefix}-${n++}`, at: Date.now() };
        sent.push(s);
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: trigger(s.ref) });
        await res.arrayBuffer();
        s.done = Date.now();
        s.status = res.status;
      }
    }),
  );
  return { sent, seconds: (Date.now() - start) / 1000 };
}

function check(sent: Sent[], status: number, what: string) {
  const bad = sent.filter((s) => s.status !== status);
  if (bad.length > 0) throw new Error(`${what}: ${bad.length} of ${sent.length} answers were not ${status} (first: ${bad[0]!.status})`);
}

export async function run(): Promise<BenchResult> {
  const muster = await startMuster({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
  const tls = selfSignedCert();
  let pushService: Receiver | undefined;
  let baseline: Server | undefined;
  let stopWorker: (() => Promise<void>) | undefined;
  try {
    pushService = await startReceiver({ tls });
    pushService.respond = () => ({ status: 201 });
    // The delivery worker as server.ts starts it, trusting the stand-in push service's certificate.
    stopWorker = startOutboxWorker(muster.ctx, createSenders(muster.ctx, new https.Agent({ ca: tls.cert, keepAlive: true })));

    const key = await liveKey(muster.app);
    const as = { 'x-api-key': key };
    const api = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, status = method === 'POST' ? 201 : 200): Promise<T> => {
      const res = await muster.app.inject({ method, url, headers: as, ...(payload ? { payload } : {}) });
      if (res.statusCode !== status) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json<T>();
    };
    const me = await api<{ id: number }>('GET', '/v1/auth/me');
    const org = (await api<{ orgs: { slug: string; primary: boolean }[] }>('GET', '/v1/orgs')).orgs.find((o) => o.primary)!;
    // On call all week, from yesterday (real time: the service's clock).
    const start = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const schedule = await api<{ id: number }>('POST', `/v1/orgs/${org.slug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [{ start: `${start}T00:00`, turn: { unit: 'week', length: 1 }, users: [me.id] }] });
    const policy = await api<{ id: number }>('POST', `/v1/orgs/${org.slug}/escalation-policies`, { name: 'Pumps', levels: [{ delay_minutes: 30, targets: [{ type: 'schedule', id: schedule.id }] }] });
    const integration = await api<{ events_url: string }>('POST', '/v1/integrations', { name: 'bench', escalation_policy_id: policy.id });
    await api('PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'push', delay_minutes: 0 }], low: [] });
    const keys = browserKeys();
    await muster.ctx.db.insertInto('push_subscriptions').values({ user_id: me.id, livemode: 1, endpoint: `${pushService.origin}/push/bench`, ...keys.json, created_at: new Date().toISOString() }).execute();
    const url = `${muster.url}${new URL(integration.events_url).pathname}`;

    // Warm-up (discarded): a second at the rate.
    check(await atRate(url, 'warm', 1), 202, 'warm-up');
    baseline = await startBaseline({ status: 'success', message: 'Event processed', dedup_key: 'x' }, 202);
    process.stderr.write(`  ${RATE} alerts/s for ${SECONDS} s: baseline, then Muster...\n`);
    const bare = await atRate(baseline.url, 'bare', SECONDS);
    check(bare, 202, 'baseline');
    const rated = await atRate(url, 'rate', SECONDS);
    check(rated, 202, 'Muster');

    // Every alert paged: wait for the last pushes (bounded), then read when each was queued and arrived.
    const deadline = Date.now() + 30_000;
    const pushesFor = (n: number) => pushService!.requests.length >= n;
    const wanted = RATE * (SECONDS + 1);
    while (!pushesFor(wanted) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const rows = await muster.ctx.db
      .selectFrom('incidents as i')
      .innerJoin('paging_notifications as n', 'n.incident_id', 'i.id')
      .select(['i.id', 'i.source_ref', 'n.sent_at', 'n.status'])
      .where('i.source_ref', 'like', 'rate-%')
      .execute();
    if (rows.length !== rated.length) throw new Error(`${rows.length} notifications for ${rated.length} alerts`);
    const notSent = rows.filter((r) => r.status !== 'sent');
    if (notSent.length > 0) throw new Error(`${notSent.length} notifications not sent (${notSent[0]!.status})`);
    const sentAt = new Map(rated.map((s) => [s.ref, s.at]));
    const incidentRef = new Map(rows.map((r) => [r.id, r.source_ref!]));
    const queued = rows.map((r) => Date.parse(r.sent_at!) - sentAt.get(r.source_ref!)!);
    const pushed: number[] = [];
    for (const req of pushService.requests) {
      const { incident_id } = JSON.parse(decryptPush(req.body, keys)) as { incident_id: number };
      const ref = incidentRef.get(incident_id);
      if (ref !== undefined) pushed.push(req.at - sentAt.get(ref)!);
    }
    if (pushed.length !== rated.length) throw new Error(`${pushed.length} pushes arrived for ${rated.length} alerts`);
    const answered = (xs: Sent[]) => xs.map((s) => s.done! - s.at);

    // Flat out: the alerts per second one instance takes, each paged.
    process.stderr.write(`  flat out, ${CONNECTIONS} connections, ${BURST_SECONDS} s: baseline, then Muster...\n`);
    const bareBurst = await flatOut(baseline.url, 'bare-burst', BURST_SECONDS);
    check(bareBurst.sent, 202, 'baseline flat out');
    const burst = await flatOut(url, 'burst', BURST_SECONDS);
    check(burst.sent, 202, 'Muster flat out');
    const burstStart = Date.now();
    const burstTotal = wanted + burst.sent.length;
    while (!pushesFor(burstTotal) && Date.now() < burstStart + 60_000) await new Promise((r) => setTimeout(r, 50));
    const drained = (Date.now() - burstStart) / 1000;
    const burstPushes = pushService.requests.length - wanted;
    const perSec = (n: number, s: number) => Math.round(n / s).toLocaleString('en-US');
    const r = (xs: number[]) => `${ms(percentile(xs, 50))} | ${ms(percentile(xs, 99))}`;

    const markdown = [
      '## Paging: an alert to its first notification and its push',
      '',
      `\`POST /v1/integrations/<key>/events\` (a PagerDuty Events API trigger, a new \`dedup_key\` each: a new urgent incident each) at`,
      `${RATE} alerts a second for ${SECONDS} s, open loop (each alert on its tick whatever the answers do). The integration's`,
      'escalation policy pages a schedule; the person on call has one rule, push at once, and a push subscription whose push',
      'service is a local HTTPS receiver (201; each push decrypted with the subscription keys to find its incident). For each',
      'alert: the answer; **queued**, from the request to its notification claimed and its push queued in the outbox (the',
      "paging run the creation's commit woke: the schedule resolved, the person paged, the notification sent; `sent_at`);",
      '**pushed**, from the request to the Web Push request arriving at the push service (the outbox worker encrypted, signed',
      '(VAPID) and posted it). The baseline is a bare `node:http` server answering the same 202 at the same rate. Latencies in',
      `ms; SQLite; the load generator, the service and the push service share one process${QUICK ? '; quick mode (short runs)' : ''}.`,
      '',
      '| At 100 alerts/s | p50 | p99 |',
      '| --- | ---: | ---: |',
      `| baseline answer (\`node:http\`) | ${r(answered(bare))} |`,
      `| Muster answer (202) | ${r(answered(rated))} |`,
      `| alert to first notification queued | ${r(queued)} |`,
      `| alert to push arrived | ${r(pushed)} |`,
      '',
      `Every one of the ${rated.length.toLocaleString('en-US')} alerts opened one incident and was pushed once (checked).`,
      '',
      `Flat out (${CONNECTIONS} connections, ${BURST_SECONDS} s, each alert a new incident): baseline ${perSec(bareBurst.sent.length, bareBurst.seconds)} req/s; Muster`,
      `${perSec(burst.sent.length, burst.seconds)} alerts/s accepted (${((burst.sent.length / burst.seconds / (bareBurst.sent.length / bareBurst.seconds)) * 100).toFixed(1)} % of the baseline), of which ${burstPushes.toLocaleString('en-US')} were`,
      `pushed, the last ${drained.toFixed(1)} s after the load stopped: paging keeps up with ${perSec(burstPushes, burst.seconds + drained)} pages/s end to end.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- paging\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await stopWorker?.();
    await baseline?.close();
    await pushService?.close();
    await muster.close();
  }
}
