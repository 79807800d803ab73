// Scheduling: availability of a host with 10,000 bookings and of a team of 25, and 200
// concurrent bookings of one slot on SQLite and PostgreSQL, each against a bare node:http baseline.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { compare, machine, startBaseline, type BenchResult, type Comparison, type Server } from './lib.js';

const NAME = 'scheduling';
const SECONDS = 3;
const DAY = 86_400_000;
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Instance extends Server {
  app: FastifyInstance;
  file: string | undefined;
}

/** A real Muster on a fresh database: a temp SQLite file, or a new PostgreSQL schema (dropped at close). */
async function start(engine: 'sqlite' | 'postgres'): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-bench-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '3000' };
  if (engine === 'postgres') Object.assign(env, { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
  const ctx = await createContext(loadConfig(env));
  const app = await buildApp(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    app,
    file: engine === 'sqlite' ? path.join(dataDir, 'muster.db') : undefined,
    close: async () => {
      await app.close();
      await ctx.close();
      if (engine === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function call<T>(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers: Record<string, string> = {}): Promise<T> {
  const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}

async function signUp(app: FastifyInstance, name: string) {
  const email = `${name.toLowerCase().replace(/\W/g, '')}-${randomBytes(3).toString('hex')}@example.com`;
  const user = await call<{ id: number; slug: string }>(app, 'POST', '/v1/users', { email, password: 'correct horse battery', name });
  const login = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: 'correct horse battery' } });
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  return { ...user, email, cookie };
}

/** Open around the clock, every day, far ahead: every day of the seeded range has slots. */
const ALWAYS = { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) };
const EVENT = { duration_minutes: 30, max_advance_days: 3650, availability: ALWAYS };

/**
 * Inserts `n` confirmed bookings spread over `days` days from `from` on the 30-minute grid, dealt
 * round the hosts, through a second connection to the SQLite file (one transaction).
 */
function seedBookings(file: string, eventTypeId: number, orgId: number, teamId: number | null, hostIds: number[], n: number, from: number, days: number): number {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 5000');
  const t0 = performance.now();
  const insert = db.prepare(`insert into bookings (id, event_type_id, host_id, team_id, org_id, livemode, status, attendee_name, attendee_email,
    start_time, end_time, buffer_before_minutes, buffer_after_minutes, notes, timezone, requires_confirmation, cancel_reason, created_at, updated_at)
    values (?, ?, ?, ?, ?, 1, 'confirmed', 'Seed', 'seed@example.com', ?, ?, 0, 0, null, 'UTC', 0, null, ?, ?)`);
  const now = new Date().toISOString();
  const used = new Set<string>();
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const host = hostIds[i % hostIds.length]!;
      let start: number;
      do start = from + Math.floor(Math.random() * days * 48) * 30 * 60_000;
      while (used.has(`${host}:${start}`));
      used.add(`${host}:${start}`);
      insert.run(`bk_seed_${eventTypeId}_${i}`, eventTypeId, host, teamId, orgId, new Date(start).toISOString(), new Date(start + 30 * 60_000).toISOString(), now, now);
    }
  })();
  db.exec('analyze');
  db.close();
  return performance.now() - t0;
}

/** Loads GET `path` on Muster against a baseline answering the same JSON. */
async function measure(m: Instance, urlPath: string): Promise<Comparison> {
  const sample = await m.app.inject({ url: urlPath });
  const baseline = await startBaseline(sample.json<object>());
  try {
    return await compare({ url: baseline.url, seconds: SECONDS }, { url: `${m.url}${urlPath}`, seconds: SECONDS });
  } finally {
    await baseline.close();
  }
}

/** 200 concurrent bookings of one slot: how many won, and how long until every answer was in. */
async function race(m: Instance, urlPath: string, startTime: string, n = 200) {
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      fetch(`${m.url}${urlPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attendee_name: `Racer ${i}`, attendee_email: `racer${i}@example.com`, start_time: startTime }),
      }).then((r) => r.status),
    ),
  );
  return { ms: performance.now() - t0, won: answers.filter((s) => s === 201).length, refused: answers.filter((s) => s === 409).length, other: answers.filter((s) => s !== 201 && s !== 409).length };
}

async function baselineRace(n = 200) {
  const baseline = await startBaseline({ id: 'bk_x', status: 'confirmed' }, 201);
  try {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, () => fetch(baseline.url, { method: 'POST', body: '{}' }).then((r) => r.arrayBuffer())));
    return performance.now() - t0;
  } finally {
    await baseline.close();
  }
}

async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const goal = (p95: number, limit: number) => (p95 < limit ? `met (${ms(p95)} ms < ${limit} ms)` : `**not met** (${ms(p95)} ms ≥ ${limit} ms)`);
const table = (c: Comparison) => [
  '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  `| baseline (\`node:http\`) | ${rps(c.baseline.requestsPerSec)} | ${ms(c.baseline.p50)} | ${ms(c.baseline.p95)} | ${ms(c.baseline.p99)} | 100.0 % |`,
  `| Muster | ${rps(c.subject.requestsPerSec)} | ${ms(c.subject.p50)} | ${ms(c.subject.p95)} | ${ms(c.subject.p99)} | ${(c.ratio * 100).toFixed(1)} % |`,
];

export async function run(): Promise<BenchResult> {
  const m = await start('sqlite');
  const lines: string[] = ['## Scheduling: availability and concurrent bookings', ''];
  try {
    const root = await signUp(m.app, 'Root');
    const host = await signUp(m.app, 'Solo Host');
    const solo = await call<{ id: number; org_id: number; slug: string }>(m.app, 'POST', '/v1/event-types', { name: 'Visit', ...EVENT }, { cookie: host.cookie });
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const soloSeed = seedBookings(m.file!, solo.id, solo.org_id, null, [host.id], 10_000, today - 365 * DAY, 730);
    const day = new Date(today + 7 * DAY).toISOString().slice(0, 10);
    const soloPath = `/v1/slots/${host.slug}/${solo.slug}?date=${day}&timezone=Europe/Paris`;
    const soloRun = await measure(m, soloPath);

    await call(m.app, 'PATCH', `/v1/users/${root.id}`, { plan: 'enterprise' }, { cookie: root.cookie });
    const org = await call<{ id: number; slug: string }>(m.app, 'POST', '/v1/orgs', { name: 'Field Crew' }, { cookie: root.cookie });
    const team = await call<{ id: number; slug: string }>(m.app, 'POST', `/v1/orgs/${org.slug}/teams`, { name: 'Day Shift' }, { cookie: root.cookie });
    const members: number[] = [];
    for (let i = 0; i < 25; i++) {
      const u = await signUp(m.app, `Member ${i}`);
      // Only a proven address joins when added by email; the admin vouches for it (issue #14).
      await call(m.app, 'PATCH', `/v1/users/${u.id}`, { email_verified: true }, { cookie: root.cookie });
      await call(m.app, 'POST', `/v1/orgs/${org.slug}/members`, { email: u.email }, { cookie: root.cookie });
      await call(m.app, 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/members`, { user_id: u.id }, { cookie: root.cookie });
      members.push(u.id);
    }
    const teamEt = await call<{ id: number; slug: string }>(m.app, 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`, { name: 'Crew visit', ...EVENT }, { cookie: root.cookie });
    const teamSeed = seedBookings(m.file!, teamEt.id, org.id, team.id, members, 10_000, today - 200 * DAY, 400);
    const teamPath = `/v1/slots/${org.slug}/${team.slug}/${teamEt.slug}?date=${day}`;
    const teamRun = await measure(m, teamPath);

    const slotOf = async (p: string) => (await call<{ slots: { start_time: string }[] }>(m.app, 'GET', p)).slots.at(-1)!.start_time;
    const sqliteRace = await race(m, `/v1/book/${host.slug}/${solo.slug}`, await slotOf(soloPath));
    let pgLine = 'PostgreSQL was not reachable at the time: not run.';
    if (await pgReachable()) {
      const p = await start('postgres');
      try {
        const h = await signUp(p.app, 'Pg Host');
        const et = await call<{ slug: string }>(p.app, 'POST', '/v1/event-types', { name: 'Visit', ...EVENT }, { cookie: h.cookie });
        const slot = (await call<{ slots: { start_time: string }[] }>(p.app, 'GET', `/v1/slots/${h.slug}/${et.slug}?date=${day}`)).slots[10]!.start_time;
        const r = await race(p, `/v1/book/${h.slug}/${et.slug}`, slot);
        pgLine = `PostgreSQL: ${r.won} booking, ${r.refused} × 409, ${r.other} other, all settled in ${ms(r.ms)} ms.`;
      } finally {
        await p.close();
      }
    }
    const baseRace = await baselineRace();

    lines.push(
      `Availability is \`GET /v1/slots/...\` for one day (public, no key) with 10,000 confirmed bookings of the host spread over two years`,
      `(seeded in ${(soloSeed / 1000).toFixed(1)} s through a second SQLite connection), a schedule open around the clock, 30-minute slots;`,
      'the day is asked in Europe/Paris. The baseline is a bare `node:http` server sending the same JSON. 10 connections, three rounds',
      `alternating baseline and Muster, each a 1 s warm-up then ${SECONDS} s; medians; latencies in ms.`,
      '',
      `### One host, 10,000 bookings (goal p95 < 20 ms: ${goal(soloRun.subject.p95, 20)})`,
      '',
      ...table(soloRun),
      '',
      `### A team of 25, 10,000 bookings among them (goal < 50 ms: ${goal(teamRun.subject.p95, 50)})`,
      '',
      `Seeded in ${(teamSeed / 1000).toFixed(1)} s; each slot needs one of the 25 members free, from one query for all their bookings of the window.`,
      '',
      ...table(teamRun),
      '',
      '### 200 concurrent bookings of one slot',
      '',
      `SQLite: ${sqliteRace.won} booking, ${sqliteRace.refused} × 409, ${sqliteRace.other} other, all settled in ${ms(sqliteRace.ms)} ms.`,
      pgLine,
      `Baseline: a bare \`node:http\` server answers the same 200 concurrent POSTs in ${ms(baseRace)} ms.`,
      '',
      'What limits these figures: every request runs on one event loop and, on SQLite, one connection; a day of availability is one',
      'indexed range query for all hosts (`bookings_host_time_idx`) plus the slot grid (48 slots × hosts × their bookings that day).',
      'Concurrent bookings of one host are serialised by design (SQLite: BEGIN IMMEDIATE; PostgreSQL: a row lock on the hosts), and',
      'each winner pays one fsync (`synchronous = FULL`), so the settle time is the queue of 200 short transactions.',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- scheduling\`.`,
    );
    return { name: NAME, markdown: lines.join('\n') };
  } finally {
    await m.close();
  }
}
