// GET /v1/auth/me with an API key, against a bare node:http server answering the same bytes.
import os from 'node:os';
import { compare, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, startBaseline, startMuster, type BenchResult, type LoadFigures, type Server } from './lib.js';

const NAME = 'auth-me';

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');

function row(label: string, f: LoadFigures, ratio: number): string {
  return `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;
}

/**
 * What the profile of this path showed before and after the credential cache (issue #19). Written by
 * hand from `node --cpu-prof`-style profiles (the inspector's profiler on the server thread while
 * autocannon, in another process, drove the route). Only shares of a profile are kept here: figures
 * in the docs come from this benchmark's own measurement.
 */
const PROFILE_NOTES = [
  '### What limits it (profiled 2026-11-24, machine load 11-28 on 2 cores, so read shares and ratios only)',
  '',
  'Before the credential cache, the server thread spent (shares of all samples, idle included): the answer\'s',
  '`writev` 14 %; the two queries 17 % (the key by its hash 4.6 %, the user row 5.5 %, Kysely compiling each',
  'about 2 %, better-sqlite3 `all` 6.7 %); SHA-256 of the key 1.7 %; each hook (cookie, auth, rate limit, CSRF,',
  'security headers, NUL check, request id) 1 % or less. After: the key lookup is gone (`resolveCredential` 2.1 %,',
  'of which SHA-256 1.3 %); the user row query is now the largest piece of JavaScript work (about 13 % with its',
  'compilation), beside `writev` (22 %), GC (2.5 %) and Fastify\'s own hook chain.',
  '',
  'What is left, in order: the user row query (keeping users in memory needs a cluster-wide notice for every',
  'change of a user row, which the access notices do not carry today), then the hooks and plugins over bare',
  'Fastify (child logger, request id, cookie parsing, rate-limit counters and headers, security headers,',
  'the NUL walk, serialisation). The table above is the measured figure; the goal is at least 50 %.',
].join('\n');

export async function run(): Promise<BenchResult> {
  const muster = await startMuster();
  let baseline: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    const headers = { 'x-api-key': key };
    const me = await muster.app.inject({ method: 'GET', url: '/v1/auth/me', headers });
    if (me.statusCode !== 200) throw new Error(`GET /v1/auth/me: ${me.statusCode} ${me.body}`);
    baseline = await startBaseline(me.json<object>());

    const c = await compare({ url: baseline.url, seconds: RUN_SECONDS }, { url: `${muster.url}/v1/auth/me`, headers, seconds: RUN_SECONDS });
    const rounds = c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ');

    const markdown = [
      '## GET /v1/auth/me with an API key',
      '',
      'Measured: one authenticated read. Per request Muster hashes the `x-api-key` (SHA-256) and finds it in the',
      'credential cache (after the first request; `modules/auth/credential-cache.ts`), reads the user row from the',
      'database, and serialises the answer through the route schema (request logging off, as with',
      '`LOG_LEVEL=warn`). The baseline is a bare `node:http` server sending the same JSON body. 10 connections;',
      `${ROUNDS_TEXT} alternating baseline and Muster, each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms.`,
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`)', c.baseline, 1),
      row('Muster', c.subject, c.ratio),
      '',
      `Muster / baseline req/s per round: ${rounds}. The load generator shares the 2 cores with the server,`,
      'so absolute figures move between runs; the ratio is the figure to compare.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench\`.`,
      '',
      PROFILE_NOTES,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await baseline?.close();
    await muster.close();
  }
}
