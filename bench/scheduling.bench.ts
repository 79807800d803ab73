// Scheduling: availability of a host with 10,000 bookings and of a team of 25, on SQLite and on
// PostgreSQL with Redis (issue #40) in the same rounds, and 200 (quick mode: fewer) concurrent bookings
// of one slot on both, each against a bare node:http baseline.
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { col, pgBulkWriter, sqliteBulkWriter, type BulkWriter } from './bulk-writer.js';
import { interleave, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Interleaved, type LoadOptions, type MusterServer, type Server } from './lib.js';
import { bothTable, CONFIGS, costRows, CPU_NOTE, PG_URL, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';

const NAME = 'scheduling';
const DAY = 86_400_000;
/** Bookings seeded for the host, and for the team; members of the team; concurrent bookings of one slot. */
const BOOKINGS = sized(10_000, 1_000);
/** On PostgreSQL: the same in a full run; in a quick one (CI, at its time limit) the fewest that still check the answers. */
const PG_BOOKINGS = sized(BOOKINGS, 100);
/** Likewise its loads' seconds, measured and warm-up: half a second each in a quick run checks the path. */
const PG_RUN_SECONDS = sized(RUN_SECONDS, 0.5);
const PG_WARMUP_SECONDS = sized(1, 0.5);
const MEMBERS = sized(25, 5);
const RACERS = sized(200, 50);

interface Instance extends Server {
  app: FastifyInstance;
  /** Where its rows are seeded: a second connection to its SQLite file, or a bulk writer into its PostgreSQL schema (analysing `tables`). */
  writer: (tables?: readonly string[]) => Promise<BulkWriter>;
  /** The SQLite file (undefined on PostgreSQL). */
  file: string | undefined;
  /** The PostgreSQL side's schema and Redis prefix (its backends' CPU). */
  pgr: PgRedis | undefined;
}

/**
 * A real Muster through lib's startMuster (so with the benchmarks' configuration, rate limits out of
 * reach) on a fresh database: a temp SQLite file, or PostgreSQL with Redis through bench/pg-redis.ts
 * (a schema and a key prefix of the run's, dropped at close).
 */
async function start(engine: 'sqlite' | 'postgres'): Promise<Instance> {
  if (engine === 'sqlite') {
    const m = await startMuster();
    const file = path.join(m.dataDir, 'muster.db');
    return { url: m.url, app: m.app, writer: async () => sqliteBulkWriter(file), file, pgr: undefined, close: () => m.close() };
  }
  const pgr = await pgRedis(NAME);
  let m: MusterServer | undefined;
  try {
    m = await startPgRedisMuster(pgr);
  } catch (err) {
    await pgr.drop();
    throw err;
  }
  const started = m;
  return {
    url: started.url,
    app: started.app,
    writer: (tables = ['bookings']) => pgBulkWriter(PG_URL, pgr.schema, tables),
    file: undefined,
    pgr,
    close: async () => {
      try {
        await started.close();
      } finally {
        await pgr.drop();
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

const BOOKING_COLUMNS = [
  col('id'), col('event_type_id', 'bigint'), col('host_id', 'bigint'), col('team_id', 'bigint'), col('org_id', 'bigint'), col('livemode', 'int'), col('status'),
  col('attendee_name'), col('attendee_email'), col('start_time'), col('end_time'), col('buffer_before_minutes', 'int'), col('buffer_after_minutes', 'int'),
  col('timezone'), col('requires_confirmation', 'int'), col('created_at'), col('updated_at'),
];

/**
 * Inserts `n` confirmed bookings spread over `days` days from `from` on the 30-minute grid, dealt
 * round the hosts, through the instance's bulk writer (one transaction, then its statistics); answers the milliseconds taken.
 */
async function seedBookings(m: Instance, eventTypeId: number, orgId: number, teamId: number | null, hostIds: number[], n: number, from: number, days: number): Promise<number> {
  const t0 = performance.now();
  const w = await m.writer();
  try {
    const now = new Date().toISOString();
    const used = new Set<string>();
    const rows: unknown[][] = [];
    for (let i = 0; i < n; i++) {
      const host = hostIds[i % hostIds.length]!;
      let start: number;
      do start = from + Math.floor(Math.random() * days * 48) * 30 * 60_000;
      while (used.has(`${host}:${start}`));
      used.add(`${host}:${start}`);
      rows.push([`bk_seed_${eventTypeId}_${i}`, eventTypeId, host, teamId, orgId, 1, 'confirmed', 'Seed', 'seed@example.com', new Date(start).toISOString(), new Date(start + 30 * 60_000).toISOString(), 0, 0, 'UTC', 0, now, now]);
    }
    await w.insert('bookings', BOOKING_COLUMNS, rows);
    await w.finish();
  } finally {
    await w.close();
  }
  return performance.now() - t0;
}

const CONNECTION_COLUMNS = [
  col('id', 'bigint'), col('user_id', 'bigint'), col('kind'), col('name'), col('url'), col('calendars'), col('status'), col('busy_count', 'int'), col('created_at'), col('updated_at'),
];
const BUSY_COLUMNS = [col('connection_id', 'bigint'), col('user_id', 'bigint'), col('start_time'), col('end_time')];

/**
 * Gives each host a calendar connection with `perHost` busy intervals (30-60 min) over `days` days from `from` (issue #18),
 * through the instance's bulk writer (the connections numbered from 1: the database has none before); answers the ms taken.
 */
async function seedCalendarBusy(m: Instance, hostIds: number[], perHost: number, from: number, days: number): Promise<number> {
  const t0 = performance.now();
  const now = new Date().toISOString();
  const w = await m.writer(['calendar_connections', 'calendar_busy']);
  try {
    await w.insert('calendar_connections', CONNECTION_COLUMNS, hostIds.map((host, i) => [i + 1, host, 'ics', 'Work', 'https://calendar.example/feed.ics', '{}', 'ok', perHost, now, now]));
    const busy: unknown[][] = [];
    for (const [i, host] of hostIds.entries()) {
      for (let k = 0; k < perHost; k++) {
        const start = from + Math.floor(Math.random() * days * 48) * 30 * 60_000;
        busy.push([i + 1, host, new Date(start).toISOString(), new Date(start + (1 + (k % 2)) * 30 * 60_000).toISOString()]);
      }
    }
    await w.insert('calendar_busy', BUSY_COLUMNS, busy);
    await w.finish();
  } finally {
    await w.close();
  }
  return performance.now() - t0;
}

/** GET `urlPath`'s answer, checked to hold slots. */
async function slotsOf(m: Instance, urlPath: string): Promise<object> {
  const sample = await m.app.inject({ url: urlPath });
  const slots = sample.statusCode === 200 ? sample.json<{ slots?: unknown[] }>().slots : undefined;
  if (!slots?.length) throw new Error(`GET ${urlPath}: ${sample.statusCode} ${sample.body.slice(0, 200)} (expected slots)`);
  return sample.json<object>();
}

/** The same GET on each configuration (each its own path), in the same rounds against a baseline answering the first's JSON. */
async function measureBoth(sides: [Instance, string][]): Promise<Interleaved> {
  const answers = await Promise.all(sides.map(([m, urlPath]) => slotsOf(m, urlPath)));
  const baseline = await startBaseline(answers[0]);
  try {
    return await interleave(
      { url: baseline.url, seconds: RUN_SECONDS },
      sides.map(([m, urlPath]): LoadOptions => ({ url: `${m.url}${urlPath}`, ...(m.pgr ? { seconds: PG_RUN_SECONDS, warmupSeconds: PG_WARMUP_SECONDS, otherCpuMs: m.pgr.backendCpuMs, wire: true } : { seconds: RUN_SECONDS }) })),
    );
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

const ms = (n: number) => n.toFixed(2);
const int = (n: number) => n.toLocaleString('en-US');
const goal = (p95: number, limit: number) => (p95 < limit ? `met (${ms(p95)} ms < ${limit} ms)` : `**not met** (${ms(p95)} ms ≥ ${limit} ms)`);

/** A host with a personal event type, and a team of MEMBERS with a team event type, set up through the API. */
async function setUp(m: Instance) {
  const root = await signUp(m.app, 'Root');
  const host = await signUp(m.app, 'Solo Host');
  const solo = await call<{ id: number; org_id: number; slug: string }>(m.app, 'POST', '/v1/event-types', { name: 'Visit', ...EVENT }, { cookie: host.cookie });
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
  return { host, solo, org, team, members, teamEt };
}

export async function run(): Promise<BenchResult> {
  const t0 = performance.now();
  const at = (what: string) => process.stderr.write(`  ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  // Both configurations start (migrations) at once; whichever started is closed if the other did not.
  const started = await Promise.allSettled([start('sqlite'), start('postgres')]);
  const lines: string[] = ['## Scheduling: availability and concurrent bookings', ''];
  try {
    for (const x of started) if (x.status === 'rejected') throw x.reason;
    const [m, p] = started.map((x) => (x as PromiseFulfilledResult<Instance>).value) as [Instance, Instance];
    at('SQLite and PostgreSQL + Redis started');
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const day = new Date(today + 7 * DAY).toISOString().slice(0, 10);
    // The same setup and the same number of bookings on both (fewer on PostgreSQL in a quick run); paths by instance.
    const seeded = await Promise.all(
      [m, p].map(async (x) => {
        const s = await setUp(x);
        const n = x === m ? BOOKINGS : PG_BOOKINGS;
        const soloSeed = await seedBookings(x, s.solo.id, s.solo.org_id, null, [s.host.id], n, today - 365 * DAY, 730);
        const teamSeed = await seedBookings(x, s.teamEt.id, s.org.id, s.team.id, s.members, n, today - 200 * DAY, 400);
        return { ...s, n, soloSeed, teamSeed, soloPath: `/v1/slots/${s.host.slug}/${s.solo.slug}?date=${day}&timezone=Europe/Paris`, teamPath: `/v1/slots/${s.org.slug}/${s.team.slug}/${s.teamEt.slug}?date=${day}` };
      }),
    );
    const [lite, pgSide] = [seeded[0]!, seeded[1]!];
    at('both set up and seeded');
    const soloRun = await measureBoth([[m, lite.soloPath], [p, pgSide.soloPath]]);
    const teamRun = await measureBoth([[m, lite.teamPath], [p, pgSide.teamPath]]);
    at('slots measured on both');
    const calSeed = await seedCalendarBusy(m, lite.members, 500, today, 60);
    const pgCalSeed = await seedCalendarBusy(p, pgSide.members, 500, today, 60);
    const teamCalRun = await measureBoth([[m, lite.teamPath], [p, pgSide.teamPath]]);

    const slotOf = async (x: Instance, q: string) => (await call<{ slots: { start_time: string }[] }>(x.app, 'GET', q)).slots.at(-1)!.start_time;
    const sqliteRace = await race(m, `/v1/book/${lite.host.slug}/${lite.solo.slug}`, await slotOf(m, lite.soloPath));
    const pgRace = await race(p, `/v1/book/${pgSide.host.slug}/${pgSide.solo.slug}`, await slotOf(p, pgSide.soloPath));
    const baseRace = await baselineRace();
    at('bookings raced');
    const p95 = (r: Interleaved, limit: number) => r.subjects.map((s, i) => `${CONFIGS[i]} ${goal(s.figures.p95, limit)}`).join('; ');
    const pgBookings = PG_BOOKINGS === BOOKINGS ? '' : ` (PostgreSQL + Redis: ${int(PG_BOOKINGS)}, runs of ${PG_RUN_SECONDS} s after ${PG_WARMUP_SECONDS} s of warm-up; quick mode: its rows only check the path)`;

    lines.push(
      `Availability is \`GET /v1/slots/...\` for one day (public, no key) with ${int(BOOKINGS)} confirmed bookings of the host spread over two years${pgBookings}`,
      `(seeded in ${(lite.soloSeed / 1000).toFixed(1)} s through a second SQLite connection; on PostgreSQL in ${(pgSide.soloSeed / 1000).toFixed(1)} s by one bulk insert), a schedule open around the clock,`,
      '30-minute slots; the day is asked in Europe/Paris. The baseline is a bare `node:http` server sending the same JSON (SQLite\'s answer).',
      `10 connections; two configurations in the same ${ROUNDS_TEXT} (baseline, SQLite, PostgreSQL + Redis, baseline, PostgreSQL + Redis, SQLite, ...):`,
      'Muster on SQLite alone, and Muster on PostgreSQL (a schema of its own) with Redis (a key prefix of its own), both on this machine,',
      `the same hosts, event types and number of bookings set up on each; each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms.`,
      '',
      `### One host, ${int(BOOKINGS)} bookings (goal p95 < 20 ms: ${p95(soloRun, 20)})`,
      '',
      ...bothTable(soloRun),
      '',
      `### A team of ${MEMBERS}, ${int(BOOKINGS)} bookings among them (goal < 50 ms: ${p95(teamRun, 50)})`,
      '',
      `Seeded in ${(lite.teamSeed / 1000).toFixed(1)} s (PostgreSQL: ${(pgSide.teamSeed / 1000).toFixed(1)} s); each slot needs one of the ${MEMBERS} members free, from one query for all their bookings of the window.`,
      '',
      ...bothTable(teamRun),
      '',
      CPU_NOTE,
      'On PostgreSQL the queries of a request go to a backend over the pool, where SQLite answers them in the process; the slot grid',
      'is built in Muster on both. The traffic to PostgreSQL and Redis per request is in the cost table.',
      '',
      `### The same team with 500 external calendar busy intervals per host (goal < 50 ms: ${p95(teamCalRun, 50)})`,
      '',
      `${lite.members.length * 500} intervals over the next 60 days (seeded in ${(calSeed / 1000).toFixed(1)} s; PostgreSQL: ${(pgCalSeed / 1000).toFixed(1)} s), read in the same one query as the bookings`,
      `(\`UNION ALL\` over \`calendar_busy_user_time_idx\`). Against the run above, p95 without and with: ${teamRun.subjects
        .map((x, i) => `${CONFIGS[i]} ${ms(x.figures.p95)} and ${ms(teamCalRun.subjects[i]!.figures.p95)} ms`)
        .join('; ')}.`,
      '',
      ...bothTable(teamCalRun),
      '',
      `### ${RACERS} concurrent bookings of one slot`,
      '',
      `SQLite: ${sqliteRace.won} booking, ${sqliteRace.refused} × 409, all settled in ${ms(sqliteRace.ms)} ms.`,
      `PostgreSQL + Redis: ${pgRace.won} booking, ${pgRace.refused} × 409, all settled in ${ms(pgRace.ms)} ms.`,
      `Baseline: a bare \`node:http\` server answers the same ${RACERS} concurrent POSTs in ${ms(baseRace)} ms.`,
      '',
      'What limits these figures: every request runs on one event loop and, on SQLite, one connection; a day of availability is one',
      'indexed range query for all hosts (`bookings_host_time_idx`) plus the slot grid (48 slots × hosts × their bookings that day).',
      'Concurrent bookings of one host are serialised by design (SQLite: BEGIN IMMEDIATE; PostgreSQL: a row lock on the hosts), and',
      `each winner pays one fsync (\`synchronous = FULL\`), so the settle time is the queue of ${RACERS} short transactions.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- scheduling\`.`,
    );
    return {
      name: NAME,
      markdown: lines.join('\n'),
      costs: [
        ...costRows(`GET /v1/slots (one host, ${int(BOOKINGS)} bookings)`, soloRun),
        ...costRows(`GET /v1/slots (a team of ${MEMBERS}, ${int(BOOKINGS)} bookings)`, teamRun),
        ...costRows(`GET /v1/slots (a team of ${MEMBERS}, ${int(BOOKINGS)} bookings, 500 calendar intervals each)`, teamCalRun),
      ],
    };
  } finally {
    for (const x of started) if (x.status === 'fulfilled') await x.value.close();
  }
}
