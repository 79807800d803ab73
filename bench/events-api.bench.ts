// Events API ingest: POST /v1/integrations/<key>/events with a PagerDuty trigger whose dedup_key
// repeats, so after the first every request is the dedup path (insert refused by the partial
// unique index, the open incident locked, an alert_repeated timeline event written), against a
// bare node:http server answering the same 202 body.
import os from 'node:os';
import { compare, liveKey, machine, startBaseline, startMuster, type BenchResult, type LoadFigures, type Server } from './lib.js';

const NAME = 'events-api';
const SECONDS = 3;

const event = {
  event_action: 'trigger',
  dedup_key: 'bench-disk-full',
  payload: { summary: 'Disk 95% full on db-1', source: 'db-1.example.com', severity: 'critical', component: 'postgres', custom_details: { free: '5%' } },
};

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const row = (label: string, f: LoadFigures, ratio: number) =>
  `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;

export async function run(): Promise<BenchResult> {
  // 0 = unlimited (bench/lib.ts's own lifting is above config.ts's maximum on this branch).
  const muster = await startMuster({ RATE_LIMIT_API: '0', RATE_LIMIT_AUTH: '0', RATE_LIMIT_BOOKING: '0', RATE_LIMIT_PUBLIC: '0' });
  let baseline: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    const created = await muster.app.inject({ method: 'POST', url: '/v1/integrations', headers: { 'x-api-key': key }, payload: { name: 'bench' } });
    if (created.statusCode !== 201) throw new Error(`POST /v1/integrations: ${created.statusCode} ${created.body}`);
    const path = new URL(created.json<{ events_url: string }>().events_url).pathname;
    const first = await muster.app.inject({ method: 'POST', url: path, payload: event });
    if (first.statusCode !== 202) throw new Error(`first trigger: ${first.statusCode} ${first.body}`);

    baseline = await startBaseline(first.json<object>(), 202);
    process.stderr.write('  POST events (repeated dedup_key)...\n');
    const c = await compare({ url: baseline.url, method: 'POST', body: event, seconds: SECONDS }, { url: `${muster.url}${path}`, method: 'POST', body: event, seconds: SECONDS });

    // Every trigger landed on the one open incident.
    const list = await muster.app.inject({ method: 'GET', url: `/v1/tickets?source_ref=${event.dedup_key}`, headers: { 'x-api-key': key } });
    const tickets = list.json<{ tickets: { Id: number }[] }>().tickets;
    if (tickets.length !== 1) throw new Error(`${tickets.length} incidents for one dedup_key`);
    const repeats = await muster.ctx.db.selectFrom('incident_events').select((eb) => eb.fn.countAll<number>().as('n')).where('incident_id', '=', tickets[0]!.Id).where('type', '=', 'alert_repeated').executeTakeFirstOrThrow();
    // Each repeat carried the count of triggers so far: the last one counts the first trigger and every repeat.
    const latest = await muster.ctx.db.selectFrom('incident_events').select('data').where('incident_id', '=', tickets[0]!.Id).where('type', '=', 'alert_repeated').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    const lastCount = (JSON.parse(latest.data) as { count?: number }).count;
    if (lastCount !== Number(repeats.n) + 1) throw new Error(`the last alert_repeated carries count ${lastCount}, expected ${Number(repeats.n) + 1}`);

    const markdown = [
      '## Events API ingest: a trigger with a repeated dedup_key',
      '',
      '`POST /v1/integrations/<key>/events` with a PagerDuty Events API v2 trigger whose `dedup_key` is the same every time,',
      'so every request after the first is the dedup path: the key looked up by its hash, the body validated, the insert',
      'refused by the partial unique index `(org_id, livemode, source_ref) WHERE status IN (open, in_progress)`, the open',
      'incident read, `alert_repeated` appended to its timeline with the count of triggers so far (one more than its latest',
      'repeat carried: one event read, however many came before) and broadcast after the commit. The',
      'baseline is a bare `node:http` server answering the same 202 body. 10 connections; three rounds alternating',
      `baseline and Muster, each a 1 s warm-up then ${SECONDS} s; medians; latencies in ms; SQLite.`,
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`)', c.baseline, 1),
      row('Muster', c.subject, c.ratio),
      '',
      `Muster / baseline req/s per round: ${c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ')}.`,
      '',
      `After the run the dedup_key has exactly one incident, with ${Number(repeats.n).toLocaleString('en-US')} \`alert_repeated\` events, the last counting`,
      `${lastCount.toLocaleString('en-US')} triggers: every trigger processed landed on it (the load generator counted ${c.completed.subject.toLocaleString('en-US')} answers, warm-ups`,
      'included; triggers still in flight when it stopped were processed too). Each repeat is a write transaction, committed in',
      'groups like every write on SQLite (docs/architecture.md, "Grouped commits"). PagerDuty itself accepts 120 events a minute',
      'per integration key; one Muster instance takes that many in well under a second.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- events-api\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await baseline?.close();
    await muster.close();
  }
}
