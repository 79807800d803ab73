// Events API ingest: POST /v1/integrations/<key>/events with a PagerDuty trigger whose dedup_key
// repeats, so after the first every request is the dedup path (insert refused by the partial
// unique index, the open incident locked, an alert_repeated timeline event written), against a
// bare node:http server answering the same 202 body.
import { sql } from 'kysely';
import os from 'node:os';
import { interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, startBaseline, startMuster, type BenchResult, type MusterServer, type Server } from './lib.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';

const NAME = 'events-api';
const SECONDS = RUN_SECONDS;
/** Issue #40 names no figure for this path; the existing one stands: PagerDuty's 120 events a minute per key, in well under a second. */
const GOAL_RPS = 120;

const event = {
  event_action: 'trigger',
  dedup_key: 'bench-disk-full',
  payload: { summary: 'Disk 95% full on db-1', source: 'db-1.example.com', severity: 'critical', component: 'postgres', custom_details: { free: '5%' } },
};

const int = (n: number) => n.toLocaleString('en-US');

interface Side {
  muster: MusterServer;
  key: string;
  /** The integration's events path. */
  path: string;
  first: object;
}

/** A live key, an integration, and the first trigger (which opens the incident every later one repeats on). */
async function prepare(muster: MusterServer): Promise<Side> {
  const key = await liveKey(muster.app);
  const created = await muster.app.inject({ method: 'POST', url: '/v1/integrations', headers: { 'x-api-key': key }, payload: { name: 'bench' } });
  if (created.statusCode !== 201) throw new Error(`POST /v1/integrations: ${created.statusCode} ${created.body}`);
  const path = new URL(created.json<{ events_url: string }>().events_url).pathname;
  const first = await muster.app.inject({ method: 'POST', url: path, payload: event });
  if (first.statusCode !== 202) throw new Error(`first trigger: ${first.statusCode} ${first.body}`);
  // Ten repeats at once before any measured load, as many as the load's connections: on PostgreSQL they
  // open the pool's connections, which on a busy machine took the whole 1 s warm-up of a load (no answer in it).
  const repeats = await Promise.all(Array.from({ length: 10 }, () => muster.app.inject({ method: 'POST', url: path, payload: event })));
  const refused = repeats.find((r) => r.statusCode !== 202);
  if (refused) throw new Error(`repeated trigger: ${refused.statusCode} ${refused.body}`);
  return { muster, key, path, first: first.json<object>() };
}

/** Every trigger landed on the one open incident: its alert_repeated events, and the count the last one carries. */
async function check(who: string, { muster, key }: Side): Promise<{ repeats: number; lastCount: number }> {
  const list = await muster.app.inject({ method: 'GET', url: `/v1/tickets?source_ref=${event.dedup_key}`, headers: { 'x-api-key': key } });
  const tickets = list.json<{ tickets: { Id: number }[] }>().tickets;
  if (tickets.length !== 1) throw new Error(`${who}: ${tickets.length} incidents for one dedup_key`);
  // Both from one statement, so one snapshot: a request still in flight when the load stopped may commit between two reads.
  const id = tickets[0]!.Id;
  const { rows } = await sql<{ n: number | string; data: string }>`
    select count(*) as n, (select data from incident_events where incident_id = ${id} and type = 'alert_repeated' order by id desc limit 1) as data
    from incident_events where incident_id = ${id} and type = 'alert_repeated'`.execute(muster.ctx.db);
  const repeats = { n: rows[0]!.n };
  const lastCount = (JSON.parse(rows[0]!.data) as { count?: number }).count;
  if (lastCount !== Number(repeats.n) + 1) throw new Error(`${who}: the last alert_repeated carries count ${lastCount}, expected ${Number(repeats.n) + 1}`);
  return { repeats: Number(repeats.n), lastCount };
}

export async function run(): Promise<BenchResult> {
  // 0 = unlimited (bench/lib.ts's own lifting is above config.ts's maximum on this branch).
  const unlimited = { RATE_LIMIT_API: '0', RATE_LIMIT_AUTH: '0', RATE_LIMIT_BOOKING: '0', RATE_LIMIT_PUBLIC: '0' };
  const muster = await startMuster(unlimited);
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: Server | undefined;
  try {
    const lite = await prepare(muster);
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr, unlimited);
    const pgSide = await prepare(pgMuster);

    baseline = await startBaseline(lite.first, 202);
    process.stderr.write('  POST events (repeated dedup_key), SQLite and PostgreSQL + Redis...\n');
    const both = await interleave({ url: baseline.url, method: 'POST', body: event, seconds: SECONDS }, [
      { url: `${muster.url}${lite.path}`, method: 'POST', body: event, seconds: SECONDS },
      { url: `${pgMuster.url}${pgSide.path}`, method: 'POST', body: event, seconds: SECONDS, otherCpuMs: pgr.backendCpuMs, wire: true },
    ]);
    const checked = [await check(CONFIGS[0], lite), await check(CONFIGS[1], pgSide)];
    const goal = both.subjects.map((s, i) => `${CONFIGS[i]} ${int(Math.round(s.figures.requestsPerSec))} req/s, **${s.figures.requestsPerSec >= GOAL_RPS ? 'met' : 'not met'}**`).join('; ');

    const markdown = [
      '## Events API ingest: a trigger with a repeated dedup_key',
      '',
      '`POST /v1/integrations/<key>/events` with a PagerDuty Events API v2 trigger whose `dedup_key` is the same every time,',
      'so every request after the first is the dedup path: the key looked up by its hash, the body validated, the insert',
      'refused by the partial unique index `(org_id, livemode, source_ref) WHERE status IN (open, in_progress)`, the open',
      'incident read, `alert_repeated` appended to its timeline with the count of triggers so far (one more than its latest',
      'repeat carried: one event read, however many came before) and broadcast after the commit. The',
      'baseline is a bare `node:http` server answering the same 202 body. 10 connections; two configurations in the same',
      `${ROUNDS_TEXT} against the same baseline: Muster on SQLite alone, and Muster on PostgreSQL (a schema of its own) with Redis`,
      '(a key prefix of its own; the broadcast goes through the Redis bus), both on this machine; each run a 1 s warm-up then',
      `${SECONDS} s; medians; latencies in ms. Each throughput is against the mean of the baseline runs around its round.`,
      '',
      ...bothTable(both),
      '',
      CPU_NOTE,
      '',
      ...both.subjects.map(
        (s, i) =>
          `${CONFIGS[i]}: after the run the dedup_key has exactly one incident, with ${int(checked[i]!.repeats)} \`alert_repeated\` events, the last counting ${int(checked[i]!.lastCount)} triggers (the load generator counted ${int(s.completed)} answers, warm-ups included; triggers still in flight when it stopped were processed too).`,
      ),
      '',
      'Every trigger processed landed on the one incident. Each repeat is a write transaction: on SQLite committed in groups',
      '(docs/architecture.md, "Grouped commits"), on PostgreSQL one transaction on a pooled connection, with the open incident',
      'locked.',
      '',
      `This section's claim (the issue names no figure for this path): PagerDuty itself accepts ${GOAL_RPS} events a minute per integration key, and one Muster instance takes that many in`,
      `well under a second (${GOAL_RPS} req/s or more). Measured: ${goal}.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- events-api\`.`,
    ].join('\n');
    return { name: NAME, markdown, costs: costRows('Events API trigger (POST /v1/integrations/events, repeated dedup_key)', both) };
  } finally {
    await baseline?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
