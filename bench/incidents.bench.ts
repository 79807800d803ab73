// Incidents with an API key, each part against a bare node:http server answering the same bytes:
// (b) GET /v1/tickets?limit=50 over 1,000,000 incidents of the caller's org, then (a) POST /v1/tickets.
// The million rows are written straight into the SQLite file through a second better-sqlite3
// connection (the API would take hours), together with the matching `incident_counts` rows.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import type { IncidentSource, IncidentStatus, Priority } from '../src/db/schema.js';
import { scoped, type Scope } from '../src/db/scope.js';
import { slaTimes } from '../src/modules/incidents/sla.js';
import { fsyncCost } from './fsync-cost.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, PG_URL, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { compare, interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Comparison, type Interleaved, type LoadFigures, type MusterServer, type Server, fsyncMedianMs, prng } from './lib.js';
import { INCIDENTS_PROFILE } from './profile-notes.js';

const NAME = 'incidents';
const SEEDED = sized(1_000_000, 10_000);
/** The issue's goal for the list: p95 under this many ms. */
const GOAL_P95_MS = 10;
/** GET /v1/tickets?limit=50: at least this share of the bare server's throughput (issue 19). */
const GOAL_LIST_RATIO = 0.2;
/** POST /v1/tickets: at least this share of the bare server's throughput (issue 19). */
const GOAL_CREATE_RATIO = 0.1;
const LIST_LIMIT = 50;

const STATUSES: readonly IncidentStatus[] = ['open', 'in_progress', 'resolved', 'closed'];
const PRIORITIES: readonly Priority[] = ['low', 'normal', 'high', 'urgent'];
const SOURCES: readonly IncidentSource[] = ['api', 'email', 'webhook', 'alert'];
const DAY_MS = 24 * 3600 * 1000;

export interface Caller {
  key: string;
  userId: number;
  orgId: number;
}

/** A user with a live key, and the user's primary org. */
export async function caller(app: FastifyInstance): Promise<Caller> {
  const key = await liveKey(app);
  const headers = { 'x-api-key': key };

  const me = await app.inject({ method: 'GET', url: '/v1/auth/me', headers });
  if (me.statusCode !== 200) throw new Error(`GET /v1/auth/me: ${me.statusCode} ${me.body}`);
  const orgs = await app.inject({ method: 'GET', url: '/v1/orgs', headers });
  if (orgs.statusCode !== 200) throw new Error(`GET /v1/orgs: ${orgs.statusCode} ${orgs.body}`);
  const primary = orgs.json<{ orgs: { id: number; primary: boolean }[] }>().orgs.find((o) => o.primary);
  if (!primary) throw new Error(`GET /v1/orgs: no primary org in ${orgs.body}`);
  return { key, userId: me.json<{ id: number }>().id, orgId: primary.id };
}

interface Seeding {
  insertMs: number;
  analyzeMs: number;
  checkpointMs: number;
  flushMs: number;
  totalMs: number;
}

/**
 * A Muster's database seeded with `rows` incidents (seed), opened on a connection of its own for a
 * measuring tool (bench/write-index-cost.ts, bench/returning-cost.ts); Muster is closed after `use`.
 */
export async function withSeededDatabase(rows: number, use: (db: SQLite.Database, c: Caller) => void): Promise<void> {
  const muster = await startMuster();
  try {
    const c = await caller(muster.app);
    const file = path.join(muster.dataDir, 'muster.db');
    seed(file, c, rows);
    const db = new SQLite(file);
    try {
      use(db, c);
    } finally {
      db.close();
    }
  } finally {
    await muster.close();
  }
}

/**
 * `n` live incidents of one org, created one every ~31 s over the past year (ids and created_at
 * rise together), status and priority uniform over their four values, a unique random
 * customer_token each, SLA times as slaTimes() computes them and the marks the SLA sweeper would
 * have set by now; then one `incident_counts` row per (status, priority) with its n, in the same
 * transaction; then ANALYZE, a WAL checkpoint, and an fsync of the file, so the OS does not write
 * the seeded pages back in the middle of a measured run.
 */
/** The seeded columns of `incidents`, in the order seedRows() gives them (the others take their defaults or null). */
const SEED_COLUMNS = [
  'org_id', 'title', 'status', 'priority', 'source', 'creator_id', 'customer_token',
  'sla_due_at', 'sla_warn_at', 'sla_warned_at', 'sla_breached_at', 'resolved_at', 'created_at', 'updated_at',
] as const;
type SeedRow = (string | number | null)[];

/**
 * The rows seed() writes, in SEED_COLUMNS' order (livemode 1), in chunks; `counts` (per "status|priority")
 * is complete once the last chunk is out. The same PRNG seed on both engines: the same million incidents.
 */
function* seedRows(c: Caller, n: number, counts: Map<string, number>, CHUNK = 10_000): Generator<SeedRow[]> {
  const now = Date.now();
  const start = now - 365 * DAY_MS;
  const step = (365 * DAY_MS) / n;
  const random = prng(1);
  const iso = (ms: number) => new Date(ms).toISOString();
  const TOKEN_BYTES = 24; // randomToken(24), as createIncident makes them
  let tokens = Buffer.alloc(0);
  let rows: SeedRow[] = [];
  for (let i = 0; i < n; i++) {
    if (i % CHUNK === 0) tokens = randomBytes(TOKEN_BYTES * CHUNK);
    const j = (i % CHUNK) * TOKEN_BYTES;
    const token = tokens.subarray(j, j + TOKEN_BYTES).toString('base64url');
    const status = STATUSES[Math.floor(random() * 4)]!;
    const priority = PRIORITIES[Math.floor(random() * 4)]!;
    const createdMs = Math.floor(start + i * step);
    const { dueAt, warnAt } = slaTimes(new Date(createdMs), priority);
    const due = dueAt.getTime();
    const warn = warnAt.getTime();
    const done = status === 'resolved' || status === 'closed';
    // Done incidents were resolved within twice their SLA window (some met it, some did not), never in the future.
    const resolvedMs = done ? Math.min(now, createdMs + Math.floor(random() * 2 * (due - createdMs))) : null;
    // What the sweeper marks: open work past its warning or due time; done work only if it got there before resolving.
    const until = resolvedMs ?? now;
    const warnedAt = warn <= until ? iso(warn) : null;
    const breachedAt = due < until ? iso(due) : null;
    rows.push([
      c.orgId,
      `Seeded incident ${i + 1}`,
      status,
      priority,
      SOURCES[i % 4]!,
      c.userId,
      token,
      iso(due),
      iso(warn),
      warnedAt,
      breachedAt,
      resolvedMs === null ? null : iso(resolvedMs),
      iso(createdMs),
      iso(resolvedMs ?? createdMs),
    ]);
    const k = `${status}|${priority}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
    if (rows.length === CHUNK) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length > 0) yield rows;
}

export function seed(file: string, c: Caller, n: number): Seeding {
  const t0 = performance.now();
  const db = new SQLite(file);
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    // This connection only seeds: no fsync per page, and enough cache for the token index.
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -524288'); // 512 MiB

    const insert = db.prepare(
      `insert into incidents (livemode, ${SEED_COLUMNS.join(', ')}) values (1, ${SEED_COLUMNS.map(() => '?').join(', ')})`,
    );
    const upsertCount = db.prepare(
      `insert into incident_counts (org_id, livemode, status, priority, n) values (?, 1, ?, ?, ?)
       on conflict (org_id, livemode, status, priority) do update set n = n + excluded.n`,
    );
    const counts = new Map<string, number>();

    db.transaction(() => {
      for (const rows of seedRows(c, n, counts)) for (const r of rows) insert.run(...r);
      for (const [k, count] of counts) {
        const [status, priority] = k.split('|');
        upsertCount.run(c.orgId, status, priority, count);
      }
    })();
    const t1 = performance.now();
    db.exec('ANALYZE');
    const t2 = performance.now();
    db.pragma('wal_checkpoint(TRUNCATE)');
    const t3 = performance.now();
    const fd = fs.openSync(file, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    const t4 = performance.now();
    return { insertMs: t1 - t0, analyzeMs: t2 - t1, checkpointMs: t3 - t2, flushMs: t4 - t3, totalMs: t4 - t0 };
  } finally {
    db.close();
  }
}

/**
 * The same `n` incidents in a PostgreSQL schema (a Muster's DATABASE_SCHEMA), inserted as arrays through
 * unnest() in chunks of 10,000 on a client of its own, triggers and foreign-key checks off for the session
 * (the list version's trigger would bump one row a million times; it is bumped once here), with the
 * `incident_counts` rows and the list version in the same transaction; then VACUUM (ANALYZE) of the table,
 * as autovacuum would have left it (index-only scans need the visibility map).
 */
export async function seedPg(schema: string, c: Caller, n: number): Promise<Seeding> {
  const t0 = performance.now();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`set search_path to ${schema}`);
    await client.query('set session_replication_role = replica');
    await client.query('begin');
    const counts = new Map<string, number>();
    const types = SEED_COLUMNS.map((col) => (col === 'org_id' || col === 'creator_id' ? 'bigint' : 'text'));
    const unnest = types.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
    const insert = `insert into incidents (livemode, ${SEED_COLUMNS.join(', ')}) select 1, * from unnest(${unnest})`;
    for (const rows of seedRows(c, n, counts)) await client.query(insert, SEED_COLUMNS.map((_, i) => rows.map((r) => r[i])));
    for (const [k, count] of counts) {
      const [status, priority] = k.split('|');
      await client.query(
        `insert into incident_counts (org_id, livemode, status, priority, n) values ($1, 1, $2, $3, $4)
         on conflict (org_id, livemode, status, priority) do update set n = incident_counts.n + excluded.n`,
        [c.orgId, status, priority, count],
      );
    }
    await client.query(`insert into incident_list_versions (org_id, livemode, version) values ($1, 1, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`, [c.orgId]);
    await client.query('commit');
    const t1 = performance.now();
    await client.query('vacuum (analyze) incidents, incident_counts');
    const t2 = performance.now();
    return { insertMs: t1 - t0, analyzeMs: t2 - t1, checkpointMs: 0, flushMs: 0, totalMs: t2 - t0 };
  } finally {
    await client.end();
  }
}

/** Throws unless `incident_counts` holds exactly the per-(status, priority) counts of the org's live incidents. */
function checkCounts(file: string, orgId: number): number {
  const db = new SQLite(file, { readonly: true });
  try {
    const actual = db
      .prepare('select status, priority, count(*) as n from incidents where org_id = ? and livemode = 1 group by status, priority')
      .all(orgId) as { status: string; priority: string; n: number }[];
    const stored = db.prepare('select status, priority, n from incident_counts where org_id = ? and livemode = 1 and n <> 0').all(orgId) as {
      status: string;
      priority: string;
      n: number;
    }[];
    const fmt = (rows: { status: string; priority: string; n: number }[]) =>
      rows
        .map((r) => `${r.status}|${r.priority}=${r.n}`)
        .sort()
        .join(', ');
    if (fmt(actual) !== fmt(stored)) throw new Error(`incident_counts out of step:\n  incidents: ${fmt(actual)}\n  counts:    ${fmt(stored)}`);
    return actual.reduce((sum, r) => sum + r.n, 0);
  } finally {
    db.close();
  }
}

/** EXPLAIN QUERY PLAN of a compiled query, its steps joined by "; ". */
function plan(file: string, q: { sql: string; parameters: readonly unknown[] }): string {
  const db = new SQLite(file, { readonly: true });
  try {
    const rows = db.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as { detail: string }[];
    return rows.map((r) => r.detail).join('; ');
  } finally {
    db.close();
  }
}

/** EXPLAIN of a compiled query on PostgreSQL, through a Muster's own pool (its schema's search path), lines joined by "; ". */
async function pgPlan(muster: MusterServer, q: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const r = await muster.ctx.db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]));
  return r.rows.map((x) => x['QUERY PLAN'].trim()).join('; ');
}

/** The list query and the count query of a list request, as incidents.repository.ts builds them. */
function listQueries(muster: MusterServer, c: Caller) {
  const scope: Scope = { orgIds: [c.orgId], mode: 'live' };
  return {
    list: muster.ctx.db.selectFrom('incidents').selectAll().$call(scoped(scope, 'incidents')).orderBy('id', 'desc').limit(LIST_LIMIT).offset(0).compile(),
    count: muster.ctx.db
      .selectFrom('incident_counts')
      .select((eb) => eb.fn.coalesce(eb.fn.sum('n'), eb.lit(0)).as('n'))
      .$call(scoped(scope, 'incident_counts'))
      .compile(),
  };
}

/** The incident.created deliveries queued for the org (the seeded rows have none). */
async function queued(muster: MusterServer, orgId: number): Promise<number> {
  const row = await muster.ctx.db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('topic', '=', 'incident.created')
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function total(app: FastifyInstance, key: string): Promise<number> {
  const r = await app.inject({ method: 'GET', url: '/v1/tickets?limit=1', headers: { 'x-api-key': key } });
  if (r.statusCode !== 200) throw new Error(`GET /v1/tickets?limit=1: ${r.statusCode} ${r.body}`);
  return r.json<{ total: number }>().total;
}

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const int = (n: number) => n.toLocaleString('en-US');
const secs = (n: number) => `${(n / 1000).toFixed(1)} s`;

function row(label: string, f: LoadFigures, ratio: number): string {
  return `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;
}

function table(c: Comparison): string[] {
  return [
    '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    row('baseline (`node:http`)', c.baseline, 1),
    row('Muster', c.subject, c.ratio),
    '',
    `Muster / baseline req/s per round: ${c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ')}.`,
  ];
}

/** Goal of the list, per configuration. */
function listGoal(r: Interleaved): string {
  return r.subjects
    .map((s, i) => `${CONFIGS[i]} ${(s.ratio * 100).toFixed(1)} %, p95 ${ms(s.figures.p95)} ms, **${s.figures.p95 < GOAL_P95_MS && s.ratio >= GOAL_LIST_RATIO ? 'met' : 'not met'}**`)
    .join('; ');
}

export async function run(): Promise<BenchResult> {
  const muster = await startMuster();
  const file = path.join(muster.dataDir, 'muster.db');
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: Server | undefined;
  try {
    const c = await caller(muster.app);
    const headers = { 'x-api-key': c.key };

    // Seed, then check the counts both in the table and through the API before measuring anything.
    process.stderr.write(`  seeding ${SEEDED.toLocaleString('en-US')} incidents...\n`);
    const seeding = seed(file, c, SEEDED);
    process.stderr.write(
      `  seeded in ${secs(seeding.totalMs)} (insert + counts ${secs(seeding.insertMs)}, ANALYZE ${secs(seeding.analyzeMs)}, checkpoint ${secs(seeding.checkpointMs)}, fsync ${secs(seeding.flushMs)})\n`,
    );
    if (checkCounts(file, c.orgId) !== SEEDED) throw new Error('seeded row count differs from SEEDED');
    const seenTotal = await total(muster.app, c.key);
    if (seenTotal !== SEEDED) throw new Error(`GET /v1/tickets?limit=1 answers total ${seenTotal}, expected ${SEEDED}`);

    // The two queries of a list request, built as incidents.repository.ts builds them, and their plans.
    const queries = listQueries(muster, c);
    const listPlan = plan(file, queries.list);
    const countPlan = plan(file, queries.count);

    // The same incidents on PostgreSQL with Redis (issue #40): a Muster on a schema of its own, seeded alike.
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr);
    const pc = await caller(pgMuster.app);
    const pgHeaders = { 'x-api-key': pc.key };
    process.stderr.write(`  seeding ${SEEDED.toLocaleString('en-US')} incidents on PostgreSQL...\n`);
    const pgSeeding = await seedPg(pgr.schema, pc, SEEDED);
    process.stderr.write(`  seeded in ${secs(pgSeeding.totalMs)} (insert + counts ${secs(pgSeeding.insertMs)}, VACUUM (ANALYZE) ${secs(pgSeeding.analyzeMs)})\n`);
    const pgTotal = await total(pgMuster.app, pc.key);
    if (pgTotal !== SEEDED) throw new Error(`PostgreSQL: GET /v1/tickets?limit=1 answers total ${pgTotal}, expected ${SEEDED}`);
    const pgQueries = listQueries(pgMuster, pc);
    const pgListPlan = await pgPlan(pgMuster, pgQueries.list);
    const pgCountPlan = await pgPlan(pgMuster, pgQueries.count);

    // (b) The list, newest first, against the same bytes from node:http.
    const listUrl = `/v1/tickets?limit=${LIST_LIMIT}`;
    const list = await muster.app.inject({ method: 'GET', url: listUrl, headers });
    if (list.statusCode !== 200) throw new Error(`GET ${listUrl}: ${list.statusCode} ${list.body}`);
    const listBody = list.json<{ tickets: unknown[] }>();
    if (listBody.tickets.length !== LIST_LIMIT) throw new Error(`GET ${listUrl}: ${listBody.tickets.length} tickets`);
    const pgList = await pgMuster.app.inject({ method: 'GET', url: listUrl, headers: pgHeaders });
    if (pgList.statusCode !== 200) throw new Error(`PostgreSQL: GET ${listUrl}: ${pgList.statusCode} ${pgList.body}`);
    if (pgList.json<{ tickets: unknown[] }>().tickets.length !== LIST_LIMIT) throw new Error(`PostgreSQL: GET ${listUrl}: not ${LIST_LIMIT} tickets`);
    baseline = await startBaseline(listBody);
    // First as configured (the list cache serves repeated pages, modules/incidents/list-cache.ts), then with
    // the cache keeping nothing, so every request reads and serialises its page: what a page costs after a write.
    // Both configurations in the same rounds against the same baseline.
    const sides = [
      { who: CONFIGS[0], m: muster, load: { url: `${muster.url}${listUrl}`, headers, seconds: RUN_SECONDS } },
      { who: CONFIGS[1], m: pgMuster, load: { url: `${pgMuster.url}${listUrl}`, headers: pgHeaders, seconds: RUN_SECONDS, otherCpuMs: pgr.backendCpuMs, wire: true } },
    ];
    process.stderr.write(`  GET ${listUrl}, SQLite and PostgreSQL + Redis...\n`);
    const hitsBefore = sides.map((x) => x.m.ctx.listCache.hits);
    const get = await interleave({ url: baseline.url, seconds: RUN_SECONDS }, sides.map((x) => x.load));
    const served = sides.map((x, i) => x.m.ctx.listCache.hits - hitsBefore[i]!);
    sides.forEach((x, i) => {
      if (served[i]! < get.subjects[i]!.completed * 0.9) throw new Error(`${x.who}: GET ${listUrl}: ${get.subjects[i]!.completed} answered, only ${served[i]} from the list cache`);
    });
    const sizes = sides.map((x) => ({ maxEntries: x.m.ctx.listCache.maxEntries, maxBytes: x.m.ctx.listCache.maxBytes }));
    for (const x of sides) x.m.ctx.listCache.resize(0, x.m.ctx.listCache.maxBytes);
    process.stderr.write(`  GET ${listUrl}, list cache off...\n`);
    const missesBefore = sides.map((x) => x.m.ctx.listCache.misses);
    const uncached = await interleave({ url: baseline.url, seconds: RUN_SECONDS }, sides.map((x) => x.load));
    sides.forEach((x, i) => {
      const misses = x.m.ctx.listCache.misses - missesBefore[i]!;
      if (misses < uncached.subjects[i]!.completed) throw new Error(`${x.who}: GET ${listUrl} with the cache off: ${uncached.subjects[i]!.completed} answered, ${misses} read anew`);
      x.m.ctx.listCache.resize(sizes[i]!.maxEntries, sizes[i]!.maxBytes);
    });
    await pgMuster.close();
    pgMuster = undefined;
    await pgr.drop();
    pgr = undefined;
    await baseline.close();
    baseline = undefined;

    // (a) Creation, against node:http answering 201 with an incident of the same shape.
    const body = { title: 'Pump station 4: pressure low', priority: 'high' };
    const one = await muster.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: body });
    if (one.statusCode !== 201) throw new Error(`POST /v1/tickets: ${one.statusCode} ${one.body}`);
    const perIncident = await queued(muster, c.orgId);
    if (perIncident === 0) throw new Error('POST /v1/tickets queued no incident.created delivery');
    const fsyncMs = fsyncMedianMs(muster.dataDir);
    const commitCost = fsyncCost(muster.dataDir);
    baseline = await startBaseline(one.json<object>(), 201);
    process.stderr.write('  POST /v1/tickets...\n');
    const post = await compare(
      { url: baseline.url, method: 'POST', body, seconds: RUN_SECONDS },
      { url: `${muster.url}/v1/tickets`, method: 'POST', body, headers, seconds: RUN_SECONDS },
    );

    // The POSTs kept the counts in step: the table matches the rows, and the API's total matches both.
    const after = checkCounts(file, c.orgId);
    const afterTotal = await total(muster.app, c.key);
    if (afterTotal !== after) throw new Error(`after the POSTs GET /v1/tickets answers total ${afterTotal}, the table holds ${after}`);
    // Every 201 is a row (plus at most the 10 requests in flight when each warm-up or run stopped), each with its deliveries.
    const created = after - SEEDED - 1;
    const inFlightMax = 10 * 2 * post.rounds.length;
    if (created < post.completed.subject || created > post.completed.subject + inFlightMax) {
      throw new Error(`POST /v1/tickets: ${post.completed.subject} answered 201 but ${created} incidents were created`);
    }
    const deliveries = await queued(muster, c.orgId);
    if (deliveries !== perIncident * (created + 1)) {
      throw new Error(`${created + 1} incidents created through the API queued ${deliveries} incident.created deliveries, expected ${perIncident} each`);
    }

    const goalOf = (r: Interleaved) => `Goal (from the issue): at least ${GOAL_LIST_RATIO * 100} % of the baseline's throughput and p95 of the list under ${GOAL_P95_MS} ms with ${int(SEEDED)} incidents. Measured: ${listGoal(r)}.`;
    const goal = goalOf(get);
    const markdown = [
      `## Incidents: list over ${int(SEEDED)} rows, and creation`,
      '',
      `Measured with a live API key: (b) \`GET ${listUrl}\` (the newest ${LIST_LIMIT} with their \`total\`) with ${SEEDED.toLocaleString('en-US')} incidents`,
      "of the caller's org, on SQLite alone and on PostgreSQL with Redis (a schema and a key prefix of its own), both",
      `configurations in the same ${ROUNDS_TEXT} against the same baseline; then (a) \`POST /v1/tickets\` with \`{title, priority}\`, on SQLite. The baselines are bare \`node:http\``,
      'servers sending the same bytes: the list body for (b), a created incident with status 201 for (a). 10 connections;',
      `${ROUNDS_TEXT} alternating baseline and Muster, each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms.`,
      '',
      `Seeding: ${SEEDED.toLocaleString('en-US')} live incidents (status and priority uniform over their four values, one every ~31 s over the`,
      'past year, SLA times as `slaTimes()` computes them) and their 16 `incident_counts` rows, written in one transaction through',
      `a second \`better-sqlite3\` connection to the same file (\`synchronous = OFF\` on that connection, then one fsync of the file):`,
      `${secs(seeding.totalMs)} (insert + counts ${secs(seeding.insertMs)}, \`ANALYZE\` ${secs(seeding.analyzeMs)}, WAL checkpoint ${secs(seeding.checkpointMs)},`,
      `fsync ${secs(seeding.flushMs)}). Before measuring, \`incident_counts\` was checked against a`,
      `\`GROUP BY\` of the rows and \`GET /v1/tickets?limit=1\` answered \`total\` ${int(SEEDED)}; after the POSTs both were checked again`,
      `(${after.toLocaleString('en-US')} rows).`,
      '',
      `On PostgreSQL the same ${int(SEEDED)} incidents (the same generator and seed) went in through \`unnest()\` of arrays, 10,000 rows a statement`,
      'on a client of its own with triggers and foreign-key checks off for its session, the counts and the list version in the same',
      `transaction: ${secs(pgSeeding.insertMs)}, then \`VACUUM (ANALYZE)\` of the two tables ${secs(pgSeeding.analyzeMs)}; \`GET /v1/tickets?limit=1\` answered \`total\` ${int(pgTotal)}.`,
      '',
      `### (b) GET ${listUrl}`,
      '',
      ...bothTable(get),
      '',
      CPU_NOTE,
      '',
      goal,
      '',
      'As configured, a page Muster answered before is answered from the list cache (docs/architecture.md, "Incident list',
      "cache\"): per request the key and the caller's orgs come from the credential cache, one point read fetches the org's",
      `list version (on PostgreSQL a query on a pooled connection), and the page's ${(list.rawPayload.length / 1024).toFixed(0)} KB of JSON go out as they were serialised; the cache served`,
      `${sides.map((x, i) => `${int(served[i]!)} of the ${int(get.subjects[i]!.completed)} answers on ${x.who === CONFIGS[0] ? 'SQLite' : 'PostgreSQL'}`).join(' and ')}`,
      '(warm-ups included; the others were read anew: the first, and any after an SLA transition of the page). A write to the',
      "org's incidents ends the page at once, so the next request pays the full cost below.",
      '',
      '#### The same list with the cache keeping nothing (every request reads its page)',
      '',
      ...bothTable(uncached),
      '',
      goalOf(uncached).replace('Goal (from the issue)', 'Against the same goal'),
      '',
      'Per request Muster then also runs the list and the count. The list walks',
      '`incidents_scope_idx` (org_id, livemode, id) backwards and stops after 50 rows, and the total sums at most 16 rows of',
      '`incident_counts`, so neither grows with the table; what is left is per-request work (50 rows read and turned',
      `into JSON, on SQLite all queries in turn on Muster's one connection, on PostgreSQL round trips to a backend of the pool) and the queueing behind it:`,
      `with 10 connections always busy the mean latency is 10 / req/s (${uncached.subjects.map((x, i) => `${CONFIGS[i]} ${ms(10_000 / x.figures.requestsPerSec)} ms`).join(', ')}), so the latencies above`,
      'are set by throughput, not by the size of the table. Plans after `ANALYZE`:',
      '',
      `- list: \`${listPlan}\``,
      `- count: \`${countPlan}\`${
        countPlan.startsWith('SCAN')
          ? " (the planner's pick when the 16 rows of this one org are the whole table; with many orgs the statistics lead it to the primary key)"
          : ''
      }`,
      '',
      'On PostgreSQL, after `VACUUM (ANALYZE)`:',
      '',
      `- list: \`${pgListPlan}\``,
      `- count: \`${pgCountPlan}\``,
      '',
      '### (a) POST /v1/tickets',
      '',
      ...table(post),
      '',
      `Goal (from the issue): at least ${GOAL_CREATE_RATIO * 100} % of the baseline's throughput with ${int(SEEDED)} incidents. Measured: ${(post.ratio * 100).toFixed(1)} %, **${post.ratio >= GOAL_CREATE_RATIO ? 'met' : 'not met'}**.`,
      '',
      'Each creation is one transaction (the incident into a table of a million rows and 13 indexes, 10 of them written for an',
      'incident with no assignee or source_ref (migration 0020), its status-page token time-ordered so that its unique index takes',
      'it at one place; the `incident_counts` and list-version upserts, two outbox deliveries), and creations commit in groups (docs/architecture.md,',
      '"Grouped commits"): the transactions that reached the server in one event-loop turn run one after another, each in a',
      'SAVEPOINT, inside one `BEGIN IMMEDIATE`, and one COMMIT with `synchronous = FULL` (one fsync of the WAL, which blocks the',
      'event loop: better-sqlite3 is synchronous) makes them all durable before any is answered. With 10 connections a group',
      `holds the requests that arrived during the previous group's fsync. ${ms(1000 / post.subject.requestsPerSec)} ms of the server's one thread per creation, and every`,
      `~1,000 WAL pages a checkpoint into the database file. Flush latency on this VM swings (a bare 32 KB fdatasync in the data`,
      `dir: median ${ms(fsyncMs)} ms of 200 in this run). What a commit costs here, measured beside it (\`bench/fsync-cost.ts\`, rows of`,
      `600 bytes, \`synchronous = FULL\`): ${int(commitCost.n)} one-row commits ${ms(commitCost.eachMs)} ms (${ms(commitCost.eachMs / commitCost.n)} ms each), one commit of the`,
      `same rows ${ms(commitCost.oneMs)} ms, one commit of them in ${int(commitCost.n)} savepoints ${ms(commitCost.savepointsMs)} ms.`,
      '',
      'The load generator shares the 2 cores with the server, so absolute figures move between runs; the ratio is the figure to compare.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- incidents\`.`,
      '',
      INCIDENTS_PROFILE,
    ].join('\n');
    const costs = [
      ...costRows(`GET ${listUrl} (1,000,000 rows, from the list cache)`, get),
      ...costRows(`GET ${listUrl} (1,000,000 rows, list cache off)`, uncached),
    ];
    return { name: NAME, markdown, costs };
  } finally {
    await baseline?.close();
    await muster.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
