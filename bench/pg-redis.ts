// The second configuration of the hot-path benchmarks (issue #40): Muster on PostgreSQL with Redis,
// beside the default (SQLite alone). The machine's PostgreSQL and Redis, each run with a schema and a
// key prefix of its own, both removed when it ends; and the CPU of the PostgreSQL backends serving it,
// read from /proc (the database's work is in other processes than the one load() measures).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { medianWire } from './costs.js';
import { median, startMuster, type CostRow, type Interleaved, type LoadFigures, type LoadOptions, type MusterServer } from './lib.js';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface PgRedis {
  /** DATABASE_URL (tagged with an application_name of this run's), DATABASE_SCHEMA, REDIS_URL, REDIS_PREFIX for startMuster(). */
  env: Record<string, string>;
  schema: string;
  prefix: string;
  /**
   * CPU milliseconds used so far by the PostgreSQL backends of this run's connections (those whose
   * application_name is the schema's), summed over every backend seen: call it before and after a load.
   * NaN where /proc or pg_stat_activity cannot be read.
   */
  backendCpuMs: () => Promise<number>;
  /** Drops the schema, deletes the prefix's keys, closes the probe's connections. After the Musters are closed. */
  drop: () => Promise<void>;
}

/** Clock ticks of /proc/<pid>/stat: 100 a second on Linux. */
const TICK_MS = 10;

function procCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/** A schema and a key prefix for one benchmark run (`name` goes into both, for whoever finds them left over). */
export async function pgRedis(name: string): Promise<PgRedis> {
  const tag = `${name.replace(/[^a-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const schema = `bench_${tag}`;
  const prefix = `bench:${tag}:`;
  const url = new URL(PG_URL);
  url.searchParams.set('application_name', schema);
  const probe = new pg.Client({ connectionString: PG_URL });
  await probe.connect();
  const seen = new Map<number, number>();
  return {
    env: { DATABASE_URL: url.toString(), DATABASE_SCHEMA: schema, REDIS_URL, REDIS_PREFIX: prefix },
    schema,
    prefix,
    backendCpuMs: async () => {
      const { rows } = await probe.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [schema]);
      for (const { pid } of rows) {
        const ms = procCpuMs(pid);
        if (ms === undefined) return Number.NaN;
        seen.set(pid, ms);
      }
      let total = 0;
      for (const ms of seen.values()) total += ms;
      return total;
    },
    drop: async () => {
      try {
        await probe.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await probe.end();
        const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
        await r.connect();
        try {
          let cursor = '0';
          do {
            const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
            if (keys.length > 0) await r.del(...keys);
            cursor = next;
          } while (cursor !== '0');
        } finally {
          r.disconnect();
        }
      }
    },
  };
}

/** startMuster() on this run's PostgreSQL schema and Redis prefix, once its Redis connection is ready. */
export async function startPgRedisMuster(p: PgRedis, env: Record<string, string> = {}): Promise<MusterServer> {
  const muster = await startMuster({ ...p.env, ...env });
  await redisReady(muster);
  return muster;
}

/** Waits (5 s at most) for a Muster's Redis connection, so the first requests of a load do not queue behind it. */
export async function redisReady(muster: MusterServer): Promise<void> {
  const redis = muster.ctx.redis;
  if (!redis) throw new Error('Muster started without REDIS_URL');
  const deadline = Date.now() + 5_000;
  while (redis.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  if (redis.status !== 'ready') throw new Error(`Redis connection ${redis.status} after 5 s`);
}

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));

/** The two configurations' labels, in the order given to interleave(). */
export const CONFIGS = ['Muster, SQLite', 'Muster, PostgreSQL + Redis'] as const;

/** Median over a subject's rounds of its main-thread CPU, and of the PostgreSQL backends' CPU, µs per request. */
export function cpuOf(s: Interleaved['subjects'][number]): { server: number; backends: number | undefined } {
  const other = s.rounds.map((r) => r.otherCpuUs).filter((x): x is number => x !== undefined);
  return { server: median(s.rounds.map((r) => r.cpuUs)), backends: other.length > 0 ? median(other) : undefined };
}

/**
 * The table of one path: the baseline, then each configuration of interleave(baseline, [sqlite, pg]),
 * with the server's CPU per request (this process's main thread: Muster, or the bare server) and the
 * PostgreSQL backends' (another process; "-" where there is none).
 */
export function bothTable(r: Interleaved, labels: readonly string[] = CONFIGS): string[] {
  const row = (label: string, f: LoadFigures, ratio: number, cpu: string, db: string) =>
    `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % | ${cpu} | ${db} |`;
  const lines = [
    '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline | server CPU µs/req | PostgreSQL backends CPU µs/req |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    row('baseline (`node:http`)', r.baseline, 1, us(r.baselineCpuUs), '-'),
  ];
  r.subjects.forEach((s, i) => {
    const cpu = cpuOf(s);
    lines.push(row(labels[i] ?? `subject ${i + 1}`, s.figures, s.ratio, us(cpu.server), cpu.backends === undefined ? '-' : us(cpu.backends)));
  });
  lines.push('');
  lines.push(
    `Per round, req/s of ${r.subjects.map((_, i) => labels[i]).join(' / ')} / baseline: ${r.subjects[0]!.rounds.map((_, k) => [...r.subjects.map((s) => rps(s.rounds[k]!.rps)), rps(r.subjects[0]!.rounds[k]!.baseline)].join(' / ')).join('; ')}.`,
  );
  return lines;
}

/** A configuration's name in the cost table, from its label ('Muster, PostgreSQL + Redis' -> 'PostgreSQL + Redis'). */
export const configOf = (label: string) => (label.includes('PostgreSQL') ? 'PostgreSQL + Redis' : 'SQLite');

/**
 * The cost-table rows (bench/costs.ts) of interleave(baseline, subjects) for one unit of work: the main thread's
 * and the PostgreSQL backends' CPU and the traffic per request (give the subjects' loads `wire: true`).
 */
export function costRows(work: string, r: Interleaved, labels: readonly string[] = CONFIGS): CostRow[] {
  return r.subjects.map((s, i) => {
    const cpu = cpuOf(s);
    return { work, config: configOf(labels[i] ?? ''), cpuUs: cpu.server, pgCpuUs: cpu.backends, wire: medianWire(s.rounds) };
  });
}

/** The note under every two-configuration table: what the CPU columns hold and what they leave out. */
export const CPU_NOTE = [
  'server CPU µs/req: CPU time of the process\'s main thread (the server under test; the load generator is a worker',
  'thread) over the requests it completed, warm-ups included; median of the rounds. With PostgreSQL the database\'s',
  'own work is in its backend processes: the last column sums their CPU (/proc/<pid>/stat of the backends',
  'pg_stat_activity lists under this run\'s application_name) over the same requests. Redis\'s CPU is not in either',
  '(one redis-server shared by the machine).',
].join('\n');

/**
 * Ten requests at once, `rounds` times, over HTTP, before a measured load: the pool's connections open
 * and the path's code is compiled. On a machine at load 12 a first load of a path could otherwise end
 * its 1 s warm-up with no answer at all (load() then throws). Throws on any answer but 2xx.
 */
export async function prime(opts: LoadOptions, rounds = 3): Promise<void> {
  const init: RequestInit = { method: opts.method ?? 'GET', headers: { ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers } };
  if (opts.body !== undefined) init.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(opts.url, init).then(async (r) => ({ status: r.status, body: await r.text() }))));
    const bad = answers.find((a) => a.status < 200 || a.status > 299);
    if (bad) throw new Error(`priming ${opts.url}: ${bad.status} ${bad.body.slice(0, 200)}`);
    if (process.env.BENCH_PRIME_LOG) process.stderr.write(`  primed ${opts.url}: ${Math.round(performance.now() - t0)} ms\n`);
  }
}
