// GET /v1/auth/me with an API key, against a bare node:http server answering the same bytes.
import os from 'node:os';
import { AUTH_ME_PROFILE } from './profile-notes.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { answerHeaders, compare, interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, startBaseline, startFastifyFloor, startMuster, type BenchResult, type LoadFigures, type MusterServer, type Server } from './lib.js';

const NAME = 'auth-me';

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');

function row(label: string, f: LoadFigures, ratio: number): string {
  return `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;
}

const PROFILE_NOTES = AUTH_ME_PROFILE;

/** Issue #19: an authenticated read at half of bare node:http's throughput or more. */
const GOAL_RATIO = 0.5;

export async function run(): Promise<BenchResult> {
  const muster = await startMuster();
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: Server | undefined;
  let floor: Server | undefined;
  let headed: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    const headers = { 'x-api-key': key };
    const me = await muster.app.inject({ method: 'GET', url: '/v1/auth/me', headers });
    if (me.statusCode !== 200) throw new Error(`GET /v1/auth/me: ${me.statusCode} ${me.body}`);
    baseline = await startBaseline(me.json<object>());
    // The same read on PostgreSQL with Redis (issue #40), in the same rounds against the same baseline.
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr);
    const pgHeaders = { 'x-api-key': await liveKey(pgMuster.app) };
    const pgMe = await pgMuster.app.inject({ method: 'GET', url: '/v1/auth/me', headers: pgHeaders });
    if (pgMe.statusCode !== 200) throw new Error(`GET /v1/auth/me on PostgreSQL: ${pgMe.statusCode} ${pgMe.body}`);

    const both = await interleave({ url: baseline.url, seconds: RUN_SECONDS }, [
      { url: `${muster.url}/v1/auth/me`, headers, seconds: RUN_SECONDS },
      { url: `${pgMuster.url}/v1/auth/me`, headers: pgHeaders, seconds: RUN_SECONDS, otherCpuMs: pgr.backendCpuMs, wire: true },
    ]);
    const goal = both.subjects.map((s, i) => `${CONFIGS[i]} ${(s.ratio * 100).toFixed(1)} %, **${s.ratio >= GOAL_RATIO ? 'met' : 'not met'}**`).join('; ');
    // The framework's floor in the same run: Fastify alone answering the same bytes.
    floor = await startFastifyFloor(me.json<object>());
    const f = await compare({ url: baseline.url, seconds: RUN_SECONDS }, { url: `${floor.url}/v1/auth/me`, seconds: RUN_SECONDS });
    // And node:http sending every header Muster's answer carries: what the header set alone costs.
    headed = await startBaseline(me.json<object>(), 200, answerHeaders(me.headers));
    const h = await compare({ url: baseline.url, seconds: RUN_SECONDS }, { url: headed.url, seconds: RUN_SECONDS });

    const markdown = [
      '## GET /v1/auth/me with an API key',
      '',
      'Measured: one authenticated read. Per request Muster takes the `x-api-key`\'s SHA-256 (kept by key text) and finds it in the',
      'credential cache (after the first request; `modules/auth/credential-cache.ts`), takes the user row from the',
      'same cache (no query), and serialises the answer through the route schema (request logging off, as with',
      '`LOG_LEVEL=warn`). The baseline is a bare `node:http` server sending the same JSON body. 10 connections;',
      `two configurations in the same ${ROUNDS_TEXT} (baseline, SQLite, PostgreSQL + Redis, baseline, PostgreSQL + Redis, SQLite, ...):`,
      'Muster on SQLite alone, and Muster on PostgreSQL (a schema of its own) with Redis (a key prefix of its own), both on this',
      `machine; each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms. Each throughput is against the mean of the baseline runs around its round.`,
      'Both answer from the credential cache (no query once warm); with `REDIS_URL` the rate-limit counter is in Redis, counted',
      'ahead in blocks reserved in the background (one reservation for up to 64 requests; docs/api.md, "Rate limits"), where on',
      'SQLite alone it is in memory.',
      '',
      ...bothTable(both),
      '',
      CPU_NOTE,
      '',
      '| Server (rounds of its own against the baseline) | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('Fastify alone (one route, no plugins)', f.subject, f.ratio),
      row("`node:http` sending Muster's response headers", h.subject, h.ratio),
      '',
      `Goal (from the issue): at least ${GOAL_RATIO * 100} % of the baseline's throughput. Measured: ${goal}.`,
      `Fastify alone, one route answering the same bytes with no plugins or hooks, measured against the baseline in rounds of its own: ${(f.ratio * 100).toFixed(1)} %;`,
      'what lies between that row and Muster\'s is Muster\'s own work (the hooks, the key\'s hash and cache, the answer\'s schema).',
      `The bare server sending the ${Object.keys(answerHeaders(me.headers)).length} headers of Muster's answer as they are (security headers, rate limit, request id,`,
      `cache-control), in rounds of its own: ${(h.ratio * 100).toFixed(1)} % of the plain baseline; that share is the header set's own cost to \`node:http\`.`,
      'The load generator shares the 2 cores with the server, so absolute figures move between runs; the ratio is the figure to compare.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench\`.`,
      '',
      PROFILE_NOTES,
    ].join('\n');
    return { name: NAME, markdown, costs: costRows('GET /v1/auth/me', both) };
  } finally {
    await baseline?.close();
    await floor?.close();
    await headed?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
