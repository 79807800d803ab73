// Scheduling: availability of a host with 10,000 bookings and of a team of 25, and 200 (quick mode: fewer)
// concurrent bookings of one slot on SQLite and PostgreSQL, each against a bare node:http baseline.
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { compare, machine, QUICK, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Comparison, type Server } from './lib.js';

const NAME = 'scheduling';
const DAY = 86_400_000;
/** Bookings seeded for the host, and for the team; members of the team; concurrent bookings of one slot. */
const BOOKINGS = sized(10_000, 1_000);
const MEMBERS = sized(25, 5);
const RACERS = sized(200, 50);
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Instance extends Server {
  app: FastifyInstance;
  file: string | undefined;
}

/**
 * A real Muster through lib's startMuster (so with the benchmarks' configuration, rate limits out of
 * reach) on a fresh database: a temp SQLite file, or a new PostgreSQL schema (dropped at close).
 */
async function start(engine: 'sqlite' | 'postgres'): Promise<Instance> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const m = await startMuster(engine === 'postgres' ? { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } : {});
  return {
    url: m.url,
    app: m.app,
    file: engine === 'sqlite' ? path.join(m.dataDir, 'muster.db') : undefined,
    close: async () => {
      await m.close();
      if (engine === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
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

/** Gives each host a calendar connection with `perHost` busy intervals (30-60 min) over `days` days from `from` (issue #18). */
function seedCalendarBusy(file: string, hostIds: number[], perHost: number, from: number, days: number): number {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 5000');
  const t0 = performance.now();
  const now = new Date().toISOString();
  const conn = db.prepare(`insert into calendar_connections (user_id, kind, name, url, calendars, status, busy_count, created_at, updated_at) values (?, 'ics', 'Work', 'https://calendar.example/feed.ics', '{}', 'ok', ?, ?, ?)`);
  const busy = db.prepare('insert into calendar_busy (connection_id, user_id, start_time, end_time) values (?, ?, ?, ?)');
  db.transaction(() => {
    for (const host of hostIds) {
      const id = Number(conn.run(host, perHost, now, now).lastInsertRowid);
      for (let i = 0; i < perHost; i++) {
        const start = from + Math.floor(Math.random() * days * 48) * 30 * 60_000;
        busy.run(id, host, new Date(start).toISOString(), new Date(start + (1 + (i % 2)) * 30 * 60_000).toISOString());
      }
    }
  })();
  db.exec('analyze');
  db.close();
  return performance.now() - t0;
}

/** Loads GET `path` on Muster against a baseline answering the same JSON. */
async function measure(m: Instance, urlPath: string): Promise<Comparison> {
  const sample = await m.app.inject({ url: urlPath });
  const slots = sample.statusCode === 200 ? sample.json<{ slots?: unknown[] }>().slots : undefined;
  if (!slots?.length) throw new Error(`GET ${urlPath}: ${sample.statusCode} ${sample.body.slice(0, 200)} (expected slots)`);
  const baseline = await startBaseline(sample.json<object>());
  try {
    return await compare({ url: baseline.url, seconds: RUN_SECONDS }, { url: `${m.url}${urlPath}`, seconds: RUN_SECONDS });
  } finally {
    await baseline.close();
  }
}

/**
 * RACERS concurrent bookings of one slot: how many won, and how long until every answer was in.
 * Throws unless exactly one won and every other got 409: anything else is a broken setup or a bug.
 */
async function race(m: Instance, urlPath: string, startTime: string, n = RACERS) {
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
  const r = { ms: performance.now() - t0, won: answers.filter((s) => s === 201).length, refused: answers.filter((s) => s === 409).length };
  if (r.won !== 1 || r.refused !== n - 1) {
    const other = answers.filter((s) => s !== 201 && s !== 409);
    throw new Error(`${n} concurrent POST ${urlPath}: ${r.won} x 201, ${r.refused} x 409, others: ${other.join(', ') || 'none'}`);
  }
  return r;
}

async function baselineRace(n = RACERS) {
  const baseline = await startBaseline({ id: 'bk_x', status: 'confirmed' }, 201);
  try {
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: n }, () => fetch(baseline.url, { method: 'POST', body: '{}' }).then((r) => (void r.arrayBuffer(), r.status))));
    if (answers.some((s) => s !== 201)) throw new Error(`baseline race: answers ${answers.filter((s) => s !== 201).join(', ')}`);
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
const int = (n: number) => n.toLocaleString('en-US');
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
    const soloSeed = seedBookings(m.file!, solo.id, solo.org_id, null, [host.id], BOOKINGS, today - 365 * DAY, 730);
    const day = new Date(today + 7 * DAY).toISOString().slice(0, 10);
    const soloPath = `/v1/slots/${host.slug}/${solo.slug}?date=${day}&timezone=Europe/Paris`;
    const soloRun = await measure(m, soloPath);

    await call(m.app, 'PATCH', `/v1/users/${root.id}`, { plan: 'enterprise' }, { cookie: root.cookie });
    const org = await call<{ id: number; slug: string }>(m.app, 'POST', '/v1/orgs', { name: 'Field Crew' }, { cookie: root.cookie });
    const team = await call<{ id: number; slug: string }>(m.app, 'POST', `/v1/orgs/${org.slug}/teams`, { name: 'Day Shift' }, { cookie: root.cookie });
    const members: number[] = [];
    for (let i = 0; i < MEMBERS; i++) {
      const u = await signUp(m.app, `Member ${i}`);
      // Only a proven address joins when added by email; the admin vouches for it (issue #14).
      await call(m.app, 'PATCH', `/v1/users/${u.id}`, { email_verified: true }, { cookie: root.cookie });
      await call(m.app, 'POST', `/v1/orgs/${org.slug}/members`, { email: u.email }, { cookie: root.cookie });
      await call(m.app, 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/members`, { user_id: u.id }, { cookie: root.cookie });
      members.push(u.id);
    }
    const teamEt = await call<{ id: number; slug: string }>(m.app, 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`, { name: 'Crew visit', ...EVENT }, { cookie: root.cookie });
    const teamSeed = seedBookings(m.file!, teamEt.id, org.id, team.id, members, BOOKINGS, today - 200 * DAY, 400);
    const teamPath = `/v1/slots/${org.slug}/${team.slug}/${teamEt.slug}?date=${day}`;
    const teamRun = await measure(m, teamPath);
    const calSeed = seedCalendarBusy(m.file!, members, 500, today, 60);
    const teamCalRun = await measure(m, teamPath);

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
        pgLine = `PostgreSQL: ${r.won} booking, ${r.refused} × 409, all settled in ${ms(r.ms)} ms.`;
      } finally {
        await p.close();
      }
    } else if (QUICK) {
      throw new Error(`PostgreSQL is not reachable at ${PG_URL}: the booking race is not checked on it`);
    }
    const baseRace = await baselineRace();

    lines.push(
      `Availability is \`GET /v1/slots/...\` for one day (public, no key) with ${int(BOOKINGS)} confirmed bookings of the host spread over two years`,
      `(seeded in ${(soloSeed / 1000).toFixed(1)} s through a second SQLite connection), a schedule open around the clock, 30-minute slots;`,
      `the day is asked in Europe/Paris. The baseline is a bare \`node:http\` server sending the same JSON. 10 connections, ${ROUNDS_TEXT}`,
      `alternating baseline and Muster, each a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms.`,
      '',
      `### One host, ${int(BOOKINGS)} bookings (goal p95 < 20 ms: ${goal(soloRun.subject.p95, 20)})`,
      '',
      ...table(soloRun),
      '',
      `### A team of ${MEMBERS}, ${int(BOOKINGS)} bookings among them (goal < 50 ms: ${goal(teamRun.subject.p95, 50)})`,
      '',
      `Seeded in ${(teamSeed / 1000).toFixed(1)} s; each slot needs one of the ${MEMBERS} members free, from one query for all their bookings of the window.`,
      '',
      ...table(teamRun),
      '',
      `### The same team with 500 external calendar busy intervals per host (goal < 50 ms: ${goal(teamCalRun.subject.p95, 50)})`,
      '',
      `${members.length * 500} intervals over the next 60 days (seeded in ${(calSeed / 1000).toFixed(1)} s), read in the same one query as the bookings`,
      `(\`UNION ALL\` over \`calendar_busy_user_time_idx\`). Against the run above: p95 ${ms(teamRun.subject.p95)} ms without, ${ms(teamCalRun.subject.p95)} ms with.`,
      '',
      ...table(teamCalRun),
      '',
      `### ${RACERS} concurrent bookings of one slot`,
      '',
      `SQLite: ${sqliteRace.won} booking, ${sqliteRace.refused} × 409, all settled in ${ms(sqliteRace.ms)} ms.`,
      pgLine,
      `Baseline: a bare \`node:http\` server answers the same ${RACERS} concurrent POSTs in ${ms(baseRace)} ms.`,
      '',
      'What limits these figures: every request runs on one event loop and, on SQLite, one connection; a day of availability is one',
      'indexed range query for all hosts (`bookings_host_time_idx`) plus the slot grid (48 slots × hosts × their bookings that day).',
      'Concurrent bookings of one host are serialised by design (SQLite: BEGIN IMMEDIATE; PostgreSQL: a row lock on the hosts), and',
      `each winner pays one fsync (\`synchronous = FULL\`), so the settle time is the queue of ${RACERS} short transactions.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- scheduling\`.`,
    );
    return { name: NAME, markdown: lines.join('\n') };
  } finally {
    await m.close();
  }
}
