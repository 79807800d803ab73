// Shared helpers of the benchmark suite: a baseline server, a real Muster, and a load runner.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext, type AppContext, type ContextOverrides } from '../src/context.js';
import type { LoadJob, LoadSummary } from './load-worker.js';

/**
 * Quick mode (`npm run bench -- --quick`, run by CI): every benchmark, with short runs and small
 * data, to prove that it still runs and that its answers check out; its figures are not for docs.
 * Read it through `sized(full, quick)` for any size a benchmark picks (rows, subscribers, events).
 * Parsed from this process's arguments so that module-level constants can use it too.
 */
export const QUICK = process.argv.slice(2).includes('--quick');

/** `full` in a full run, `quick` in quick mode. */
export function sized<T>(full: T, quick: T): T {
  return QUICK ? quick : full;
}

/** `--name N` of the command line as a number, `def` when absent (the measuring tools' options). */
export function numberOption(name: string, def: number): number {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}

/**
 * Seconds of a load's warm-up (load()'s default) and of its measured run. Quick runs only prove that
 * every path answers (their figures are not judged), so their loads are short: loads were ~70 % of a
 * quick run's time (66 loads, 152 s of 213, 2026-11-27, counted once with a timer around runInWorker).
 */
export const WARMUP_SECONDS = sized(1, 0.5);
export const RUN_SECONDS = sized(3, 0.5);
/** Rounds of compare() (baseline and subject alternating; compare()'s default). */
export const ROUNDS = sized(3, 1);
/** "3 rounds" or "1 round", for the sections' prose. */
export const ROUNDS_TEXT = `${ROUNDS} round${ROUNDS === 1 ? '' : 's'}`;

/** One benchmark's section of docs/benchmarks.md, and its rows of the cost table (bench/costs.ts). */
export interface BenchResult {
  name: string;
  markdown: string;
  /** What one unit of work cost, per configuration: the run gathers every benchmark's into one table. */
  costs?: CostRow[];
  /** Memory per held thing (an active device, an open stream, 1,000 schedules). */
  memory?: MemoryRow[];
}

/** One unit of work's cost in one configuration, from a measured load (bench/costs.ts renders them). */
export interface CostRow {
  /** The unit: 'GET /v1/auth/me', 'beacon (POST /v1/beacons)', 'event to 10,000 streams'... */
  work: string;
  /** 'SQLite' or 'PostgreSQL + Redis'. */
  config: string;
  /** CPU microseconds of Muster's main thread per unit. */
  cpuUs: number;
  /** CPU microseconds of the PostgreSQL backends serving it per unit. */
  pgCpuUs?: number | undefined;
  /** Per unit, both directions, from the kernel's counters of Muster's sockets (lib's wireNow()). */
  wire?: Wire | undefined;
}

export interface MemoryRow {
  what: string;
  config: string;
  bytes: number;
}

/**
 * Traffic between Muster and its PostgreSQL and Redis: bytes both ways and TCP data segments Muster
 * sent (a write the server answers: close to round trips, pipelined commands sharing one).
 */
export interface Wire {
  pgBytes: number;
  pgSegments: number;
  redisBytes: number;
  redisSegments: number;
}

const PG_PORT = Number(process.env.BENCH_PG_PORT ?? 5432);
const REDIS_PORT = Number(process.env.BENCH_REDIS_PORT ?? 6379);

/**
 * The kernel's byte and segment counters (`ss -tinp`) of this process's TCP connections to PostgreSQL
 * and Redis, summed. A connection closed between two readings takes its counts with it (the pools of
 * a benchmark keep theirs open). Undefined where ss cannot be run.
 */
export function wireNow(pid = process.pid, redisPort = REDIS_PORT): Wire | undefined {
  const out = spawnSync('ss', ['-tinpH', 'state', 'established'], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const sum: Wire = { pgBytes: 0, pgSegments: 0, redisBytes: 0, redisSegments: 0 };
  const lines = out.stdout.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const head = lines[i]!;
    if (!head.includes(`pid=${pid},`)) continue;
    const peer = head.trim().split(/\s+/)[3] ?? '';
    const port = Number(peer.slice(peer.lastIndexOf(':') + 1));
    if (port !== PG_PORT && port !== redisPort) continue;
    const info = lines[i + 1]!;
    const n = (key: string) => Number(new RegExp(`\\b${key}:(\\d+)`).exec(info)?.[1] ?? 0);
    const bytes = n('bytes_sent') + n('bytes_received');
    if (port === PG_PORT) {
      sum.pgBytes += bytes;
      sum.pgSegments += n('data_segs_out');
    } else {
      sum.redisBytes += bytes;
      sum.redisSegments += n('data_segs_out');
    }
  }
  return sum;
}

/** The counters moved between two wireNow() readings, per unit of work (undefined unless both were read). */
export function wireDelta(a: Wire | undefined, b: Wire | undefined, per: number): Wire | undefined {
  if (a === undefined || b === undefined) return undefined;
  const d = (k: keyof Wire) => Math.max(0, b[k] - a[k]) / Math.max(1, per);
  return { pgBytes: d('pgBytes'), pgSegments: d('pgSegments'), redisBytes: d('redisBytes'), redisSegments: d('redisSegments') };
}

export interface Server {
  url: string;
  close(): Promise<void>;
}

/** The floor: a bare node:http server answering every request with the same JSON (and status, 200 unless told). */
export async function startBaseline(body: object | undefined, status = 200, extraHeaders: Record<string, string> = {}): Promise<Server> {
  const payload = Buffer.from(body === undefined ? '' : JSON.stringify(body));
  const headers: Record<string, string | number> = { ...extraHeaders, 'content-length': payload.length };
  if (body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
  const server = http.createServer((_req, res) => {
    res.writeHead(status, headers);
    res.end(payload);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // keep-alive sockets of the load generator would hold close() open
      }),
  };
}

/**
 * The headers of one of Muster's answers that a baseline can send as they are (security headers, rate
 * limit, request id, cache-control): all but those node:http writes itself (date, connection, length).
 * A baseline sending them measures what the header set alone costs node:http.
 */
export function answerHeaders(headers: Record<string, unknown>): Record<string, string> {
  const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!own.has(k) && typeof v === 'string') out[k] = v;
  return out;
}

/**
 * The framework's floor: Fastify itself, no plugins and no hooks, one route answering every GET with
 * the same status and body (none when `body` is undefined). What any Fastify service pays per request
 * on this machine, measured beside a benchmark to name the limit of a ratio to bare node:http.
 */
export async function startFastifyFloor(body: object | undefined, status = 200): Promise<Server> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const app = Fastify({ logger: false });
  app.get('/*', (_request, reply) => {
    reply.code(status);
    if (payload === undefined) return reply.send();
    return reply.header('content-type', 'application/json; charset=utf-8').send(payload);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

export interface MusterServer extends Server {
  app: FastifyInstance;
  ctx: AppContext;
  /** The temp DATA_DIR; the SQLite file is `muster.db` in it. Removed by close(). */
  dataDir: string;
  /** Stops this server and starts another on the same data (what it loads at start is loaded anew). */
  restart(): Promise<MusterServer>;
}

/**
 * The rate limiter stays on (every request still counts, as in production, in memory or in Redis),
 * but no benchmark's load can meet its limits: the highest the configuration accepts, per 1 s window.
 * Set here once and only here: a benchmark that built its own configuration got the defaults (300
 * public requests a minute) and failed its warm-up with 429s.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_WINDOW_MS: '1000',
  RATE_LIMIT_API: '1000000',
  RATE_LIMIT_AUTH: '1000000',
  RATE_LIMIT_BOOKING: '1000000',
  RATE_LIMIT_PUBLIC: '1000000',
  RATE_LIMIT_DEVICE: '1000000',
  // Failed sign-ins per account: the limit check's test signs in with wrong passwords on purpose.
  RATE_LIMIT_ACCOUNT: '1000000',
};

/** The environment of every benchmarked Muster: quiet, limits out of reach; `env` on top (DATABASE_URL, REDIS_URL...). */
export function benchEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  // No per-user stream cap either: the fan-out benchmark holds thousands of streams of one key.
  // METRICS_TOKEN from the shell measures a run with /metrics on (its request histogram): `METRICS_TOKEN=... npm run bench`.
  const token = process.env.METRICS_TOKEN;
  const metrics: Record<string, string> = token ? { METRICS_TOKEN: token } : {};
  return { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '3000', STREAM_LIMIT_PER_USER: '0', ...BENCH_RATE_LIMITS, ...metrics, ...env };
}

/**
 * A real Muster, as `npm start` builds it, with its data dir in a temp dir: a fresh SQLite database
 * there, unless `env` names another (DATABASE_URL and a DATABASE_SCHEMA that the caller drops).
 * `overrides.clock` gives it a clock of the caller's (the reports benchmark makes schedules "a year ago").
 */
export async function startMuster(env: Record<string, string> = {}, overrides: Pick<ContextOverrides, 'onQuery' | 'clock'> = {}): Promise<MusterServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-bench-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  try {
    const config = loadConfig(benchEnv(dataDir, env));
    const serve = async (): Promise<MusterServer> => {
      const ctx = await createContext(config, overrides);
      const app = await buildApp(ctx);
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      return {
        url,
        app,
        ctx,
        dataDir,
        restart: async () => {
          await app.close();
          await ctx.close();
          return serve();
        },
        close: async () => {
          try {
            await app.close();
            await ctx.close();
          } finally {
            removeDir();
          }
        },
      };
    };
    return await serve();
  } catch (err) {
    removeDir();
    throw err;
  }
}

export interface LoadOptions {
  /** Full URL to request. */
  url: string;
  /** GET unless told. */
  method?: 'GET' | 'POST';
  /**
   * Sent as JSON with every request (content-type application/json unless the headers name one). A string is
   * sent as it is: a JSON template whose sequencePlaceholder stands for a fragment (`{"type":"beacon",[fix]}`).
   */
  body?: object | string;
  headers?: Record<string, string>;
  /** Measured seconds, after a warm-up that is discarded; RUN_SECONDS unless told. */
  seconds?: number;
  /** The warm-up's seconds: WARMUP_SECONDS unless told (a quick run's side that only checks its path may take less). */
  warmupSeconds?: number;
  /** Seconds a request may wait for its answer before it counts as an error: 10 unless told. */
  timeoutSeconds?: number;
  /** Each connection replaces this string in the body and the URL with its index (0-9), or its value of connectionValues. */
  connectionPlaceholder?: string;
  /** Connection i's value for connectionPlaceholder (a device token, say). */
  connectionValues?: string[];
  /**
   * Each request replaces this string in the body and the URL with the next of sequenceValues, in turn over all
   * connections (load-worker.ts): a load that rotates through many devices, each value one device's fix, say.
   */
  sequencePlaceholder?: string;
  sequenceValues?: string[];
  /** The index of sequenceValues the load starts at; random when absent. */
  sequenceStart?: number;
  /**
   * CPU milliseconds used so far by processes serving the subject besides this one (the PostgreSQL
   * backends of bench/pg-redis.ts), read before and after the load: LoadRun's otherCpuUs.
   */
  otherCpuMs?: () => Promise<number>;
  /**
   * Read the traffic to PostgreSQL and Redis before and after the load (LoadRun's wire, per request); with
   * `redisPort`, the Redis of that port (a redis-server of the benchmark's own) instead of the machine's.
   */
  wire?: boolean | { redisPort: number };
}

export type LoadFigures = Pick<LoadSummary, 'requestsPerSec' | 'p50' | 'p95' | 'p99' | 'errors' | 'non2xx'>;

/** The figures of one load, and how many requests completed in it, warm-up included. */
/**
 * `cpuUs`: CPU microseconds of the main thread (the servers under test; the load runs in a worker thread)
 * per request completed, warm-up included. A server's capacity is one over it; unlike req/s it does not
 * move with the share of a shared machine the load generator gets.
 */
export type LoadRun = LoadFigures & { completed: number; cpuUs: number; otherCpuUs?: number; wire?: Wire };

/** CPU time of this process's main thread (Linux: /proc/self/task/<pid>/stat, clock ticks of 10 ms). */
export function mainThreadCpuMs(): number {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

// Workers do not inherit tsx's loader hooks (Node 20 registers them per thread), so the worker
// registers tsx itself before importing the TypeScript file it runs.
const workerBoot = (file: URL) => `
const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))});
register();
await import(${JSON.stringify(file.href)});
`;

/** A worker thread running the TypeScript module `file` (a URL), with `workerData`. */
export function startTsWorker(file: URL, workerData: unknown): Worker {
  // A data: URL is an ES module, so the boot code may use top-level await.
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(workerBoot(file))}`), { workerData });
}

function runInWorker(job: LoadJob): Promise<{ warmup: LoadSummary; run: LoadSummary }> {
  return new Promise((resolve, reject) => {
    const worker = startTsWorker(new URL('./load-worker.ts', import.meta.url), job);
    worker.once('message', (result: { warmup: LoadSummary; run: LoadSummary }) => {
      resolve(result);
      void worker.terminate(); // its sockets are closed; do not wait on stray handles
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`load worker exited (code ${code}) without a result`)));
  });
}

/**
 * Throws unless every request of the run got a 2xx answer, so a broken setup never yields a figure.
 * A quick run's short warm-up may end before its first answer on a busy machine (a pool's first
 * connections): it is discarded, so only its errors count there.
 */
function assertClean(url: string, phase: string, s: LoadSummary): void {
  if (s.errors > 0 || s.non2xx > 0 || (s.total === 0 && !(QUICK && phase === 'warm-up'))) {
    const statuses = Object.entries(s.statuses)
      .map(([status, n]) => `${n} x ${status}`)
      .join(', ');
    throw new Error(`${phase} of ${url}: ${s.errors} errors, ${s.non2xx} non-2xx answers out of ${s.total} requests (statuses: ${statuses || 'none'})`);
  }
}

/** Loads a URL with 10 connections: a warm-up (discarded; WARMUP_SECONDS unless told), then the measured run. */
export async function load(opts: LoadOptions): Promise<LoadRun> {
  const headers = { ...opts.headers };
  const job: LoadJob = { url: opts.url, headers, connections: 10, warmupSeconds: opts.warmupSeconds ?? WARMUP_SECONDS, seconds: opts.seconds ?? RUN_SECONDS };
  if (opts.method) job.method = opts.method;
  if (opts.timeoutSeconds !== undefined) job.timeoutSeconds = opts.timeoutSeconds;
  if (opts.connectionPlaceholder !== undefined) job.connectionPlaceholder = opts.connectionPlaceholder;
  if (opts.connectionValues !== undefined) job.connectionValues = opts.connectionValues;
  if (opts.sequencePlaceholder !== undefined) job.sequencePlaceholder = opts.sequencePlaceholder;
  if (opts.sequenceValues !== undefined) job.sequenceValues = opts.sequenceValues;
  if (opts.sequenceStart !== undefined) job.sequenceStart = opts.sequenceStart;
  if (opts.body !== undefined) {
    job.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  // A placeholder found nowhere (neither in the URL, the body, nor a sequence value), or too few values, would silently load one device instead of ten.
  const p = opts.connectionPlaceholder;
  if (p !== undefined && !opts.url.includes(p) && !(job.body ?? '').includes(p) && !(opts.sequenceValues ?? []).some((v) => v.includes(p))) throw new Error(`connectionPlaceholder ${p} is in neither the URL nor the body`);
  if (opts.connectionValues !== undefined && opts.connectionValues.length < job.connections) throw new Error(`${opts.connectionValues.length} connectionValues for ${job.connections} connections`);
  // Likewise a sequence placeholder found nowhere, or without values, would send one request over and over.
  const q = opts.sequencePlaceholder;
  if (q !== undefined && !opts.url.includes(q) && !(job.body ?? '').includes(q)) throw new Error(`sequencePlaceholder ${q} is in neither the URL nor the body`);
  if ((q === undefined) !== (opts.sequenceValues === undefined) || opts.sequenceValues?.length === 0) throw new Error('sequencePlaceholder and sequenceValues come together, with at least one value');
  const redisPort = typeof opts.wire === 'object' ? opts.wire.redisPort : REDIS_PORT;
  const wire0 = opts.wire ? wireNow(process.pid, redisPort) : undefined;
  const other0 = await opts.otherCpuMs?.();
  const cpu0 = mainThreadCpuMs();
  const { warmup, run: s } = await runInWorker(job);
  const cpuMs = mainThreadCpuMs() - cpu0;
  const other1 = await opts.otherCpuMs?.();
  const wire1 = opts.wire ? wireNow(process.pid, redisPort) : undefined;
  assertClean(opts.url, 'warm-up', warmup);
  assertClean(opts.url, 'run', s);
  const completed = warmup.total + s.total;
  const perRequest = (ms: number) => (ms * 1000) / Math.max(1, completed);
  const result: LoadRun = { requestsPerSec: s.requestsPerSec, p50: s.p50, p95: s.p95, p99: s.p99, errors: s.errors, non2xx: s.non2xx, completed, cpuUs: perRequest(cpuMs) };
  if (other0 !== undefined && other1 !== undefined) result.otherCpuUs = perRequest(other1 - other0);
  const wire = wireDelta(wire0, wire1, completed);
  if (wire !== undefined) result.wire = wire;
  return result;
}

/** The machine the figures come from, for the markdown sections. */
export function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
}

export interface Comparison {
  baseline: LoadFigures;
  subject: LoadFigures;
  /** Median over rounds of subject req/s divided by the mean of the baseline runs around it. */
  ratio: number;
  rounds: { baseline: number; subject: number }[];
  /** Requests completed over all runs of each side, warm-ups included. */
  completed: { baseline: number; subject: number };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

function medianFigures(runs: LoadFigures[]): LoadFigures {
  const m = (k: keyof LoadFigures) => median(runs.map((r) => r[k]));
  return { requestsPerSec: m('requestsPerSec'), p50: m('p50'), p95: m('p95'), p99: m('p99'), errors: 0, non2xx: 0 };
}

/** One subject of interleave(): its figures over the rounds. */
export interface InterleavedSubject {
  /** Medians of its runs. */
  figures: LoadFigures;
  /** Median over rounds of its req/s divided by the mean of the baseline runs on either side of its round. */
  ratio: number;
  /** Per round: its req/s, that ratio, and the main thread's (and other processes') CPU microseconds per request (LoadRun). */
  rounds: { rps: number; baseline: number; ratio: number; cpuUs: number; otherCpuUs?: number; wire?: Wire }[];
  /** Requests completed over all its runs, warm-ups included. */
  completed: number;
}

export interface Interleaved {
  /** Medians of the baseline runs (one more than the rounds). */
  baseline: LoadFigures;
  /** In the order given. */
  subjects: InterleavedSubject[];
  /** Requests the baseline completed over all its runs, warm-ups included. */
  baselineCompleted: number;
  /** Median of the baseline runs' main-thread CPU microseconds per request. */
  baselineCpuUs: number;
}

/**
 * One shared baseline and N subjects in rounds, B S1 .. SN B SN .. S1 ... B, so that drift of a shared
 * 2-core machine hits every side: each subject's per-round ratio is against the mean of the two baseline
 * runs around its round, and runs of two subjects in one round are minutes closer than two separate
 * compare() calls (the ratio of two subjects is best taken from one round's adjacent runs).
 */
export async function interleave(baseline: LoadOptions, subjects: LoadOptions[], rounds = ROUNDS): Promise<Interleaved> {
  const base: LoadRun[] = [await load(baseline)];
  const runs: LoadRun[][] = subjects.map(() => []);
  for (let i = 0; i < rounds; i++) {
    // Odd rounds take the subjects in reverse (B S1 S2 B S2 S1 B ...): a run's leftovers (a flush after
    // its load, a checkpoint) fall on each neighbour alike.
    const order = [...subjects.keys()];
    if (i % 2 === 1) order.reverse();
    for (const k of order) runs[k]!.push(await load(subjects[k]!));
    // A quick run (CI: every benchmark runs and checks its answers, figures not judged) skips the closing
    // baseline: its last round is held against the baseline before it alone.
    if (!QUICK || i < rounds - 1) base.push(await load(baseline));
  }
  const completed = (xs: LoadRun[]) => xs.reduce((n, r) => n + r.completed, 0);
  return {
    baseline: medianFigures(base),
    baselineCompleted: completed(base),
    baselineCpuUs: median(base.map((r) => r.cpuUs)),
    subjects: runs.map((subj) => {
      const perRound = subj.map((s, i) => {
        const b = (base[i]!.requestsPerSec + (base[i + 1] ?? base[i]!).requestsPerSec) / 2;
        return {
          rps: s.requestsPerSec,
          baseline: b,
          ratio: s.requestsPerSec / b,
          cpuUs: s.cpuUs,
          ...(s.otherCpuUs === undefined ? {} : { otherCpuUs: s.otherCpuUs }),
          ...(s.wire === undefined ? {} : { wire: s.wire }),
        };
      });
      return { figures: medianFigures(subj), ratio: median(perRound.map((r) => r.ratio)), rounds: perRound, completed: completed(subj) };
    }),
  };
}

/**
 * Baseline and subject alternate for `rounds` rounds (B S B S ... B), so drift of a shared
 * 2-core machine hits both; each figure is the median of its runs, the ratio the median of the
 * per-round ratios against the baseline runs on either side.
 */
export async function compare(baseline: LoadOptions, subject: LoadOptions, rounds = ROUNDS): Promise<Comparison> {
  const r = await interleave(baseline, [subject], rounds);
  const s = r.subjects[0]!;
  return {
    baseline: r.baseline,
    subject: s.figures,
    ratio: s.ratio,
    rounds: s.rounds.map((x) => ({ baseline: x.baseline, subject: x.rps })),
    completed: { baseline: r.baselineCompleted, subject: s.completed },
  };
}

/** Registers a user, logs in, and creates a live key; returns the key. */
export async function liveKey(app: FastifyInstance): Promise<string> {
  const email = 'bench@example.com';
  const password = 'correct horse battery staple';
  const registered = await app.inject({ method: 'POST', url: '/v1/users', payload: { email, password, name: 'Bench' } });
  if (registered.statusCode !== 201) throw new Error(`register: ${registered.statusCode} ${registered.body}`);

  const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  const setCookie = [login.headers['set-cookie'] ?? []].flat();
  const session = setCookie.map((c) => c.split(';')[0]).find((c) => c?.startsWith('muster_session='));
  if (login.statusCode !== 200 || !session) throw new Error(`login: ${login.statusCode} ${login.body}`);

  const created = await app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: { cookie: session },
    payload: { name: 'bench', mode: 'live' },
  });
  if (created.statusCode !== 201) throw new Error(`create key: ${created.statusCode} ${created.body}`);
  return created.json<{ key: string }>().key;
}

/** Median time of one fdatasync of 32 KB just written, in a scratch file of `dir`: what each commit pays at least. */
export function fsyncMedianMs(dir: string): number {
  const file = path.join(dir, 'fsync-probe');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(32 * 1024, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      fs.writeSync(fd, chunk);
      const t = performance.now();
      fs.fdatasyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

/** mulberry32: a small seeded PRNG, so every run seeds the same spread. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
