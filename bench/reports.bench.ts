// Reports (issue #39): GET /v1/orgs/:org_slug/reports/incidents and .../reports/oncall over one org
// with 1,000,000 incidents opened over the past year, their pages and timelines, and a year of
// on-call schedules; on SQLite and on PostgreSQL, each case against a bare node:http server
// answering the same bytes in the same run.
//
// The incidents, pages and timeline events are written straight into the database (a second
// better-sqlite3 connection, or a pg client inserting arrays), as incidents.bench.ts does: the API
// would take hours. The schedules go through the API with Muster's clock set a year back, so the
// report's hours are resolved from real layer versions and overrides, as they were at the time.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Clock } from '../src/lib/clock.js';
import type { IncidentSource, IncidentStatus, Priority } from '../src/db/schema.js';
import { slaTimes } from '../src/modules/incidents/sla.js';
import { col, pgBulkWriter, sqliteBulkWriter, dropPgSchemas, type BulkWriter } from './bulk-writer.js';
import { compare, liveKey, machine, median, QUICK, ROUNDS_TEXT, RUN_SECONDS, sized, WARMUP_SECONDS, startBaseline, startMuster, type BenchResult, type Comparison, type LoadFigures, type MusterServer, type Server, prng } from './lib.js';

const NAME = 'reports';
const INCIDENTS = sized(1_000_000, 10_000);
/** The issue's goal: p95 of every case under this many ms, on both engines. */
const GOAL_P95_MS = 500;
/** A case whose one answer alone takes this long or longer is not loaded (runEngine). */
const LOAD_LIMIT_MS = 700;
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** Schedules, each a weekly rotation of its own PEOPLE (no one in two, so the joined hours add up). */
const SCHEDULES = 6;
const PEOPLE = 10;
const ZONES = ['Europe/London', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney', 'UTC'];
/** The zone the periods are cut in: two daylight-saving changes in the year. */
const REPORT_TZ = 'Europe/Berlin';
const INTEGRATIONS: { name: string; source: IncidentSource; tool: 'alertmanager' | 'grafana' | 'events_api' | 'email' }[] = [
  { name: 'Prometheus', source: 'alert', tool: 'alertmanager' },
  { name: 'Grafana', source: 'alert', tool: 'grafana' },
  { name: 'Datadog', source: 'webhook', tool: 'events_api' },
  { name: 'Sentry', source: 'webhook', tool: 'events_api' },
  { name: 'Support mailbox', source: 'email', tool: 'email' },
];

const ms = (n: number) => n.toFixed(1);
const rps = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: n < 100 ? 1 : 0 });
const int = (n: number) => n.toLocaleString('en-US');
const secs = (n: number) => `${(n / 1000).toFixed(1)} s`;
const iso = (t: number) => new Date(t).toISOString();

/** Muster's clock, moved back while the schedules are made "a year ago", then put right. */
class ShiftedClock implements Clock {
  shift = 0;
  now = () => new Date(Date.now() + this.shift);
  nowMs = () => Date.now() + this.shift;
}

// ---------------------------------------------------------------------------------------------
// Bulk writing, one interface over both engines.

// ---------------------------------------------------------------------------------------------
// The org: responders, teams, integrations (small: through Kysely), then the schedules.

interface Org {
  id: number;
  slug: string;
  ownerId: number;
  key: string;
  /** Schedule s's people, in rotation order. */
  rotations: number[][];
  integrations: number[];
}

async function seedOrg(muster: MusterServer): Promise<Org> {
  const db = muster.ctx.db;
  const key = await liveKey(muster.app);
  const headers = { 'x-api-key': key };
  const me = (await muster.app.inject({ url: '/v1/auth/me', headers })).json<{ id: number }>();
  const org = (await muster.app.inject({ url: '/v1/orgs', headers })).json<{ orgs: { id: number; slug: string; primary: boolean }[] }>().orgs.find((o) => o.primary);
  if (!org) throw new Error('no primary org');
  const then = iso(Date.now() - 400 * DAY);
  // Members inserted directly: registering 60 people through Argon2 would only slow the setup.
  const users = await db
    .insertInto('users')
    .values(
      Array.from({ length: SCHEDULES * PEOPLE }, (_, i) => ({
        email: `responder-${i}@bench.test`,
        password_hash: null,
        name: `Responder ${String(i).padStart(2, '0')}`,
        slug: `responder-${i}`,
        plan: 'free' as const,
        timezone: ZONES[i % ZONES.length]!,
        phone: null,
        is_admin: 0 as const,
        created_at: then,
        updated_at: then,
      })),
    )
    .returning('id')
    .execute();
  const ids = users.map((u) => Number(u.id));
  await db.insertInto('memberships').values(ids.map((id) => ({ org_id: org.id, user_id: id, role: 'member' as const, is_primary: 0 as const, created_at: then }))).execute();
  const rotations = Array.from({ length: SCHEDULES }, (_, s) => ids.slice(s * PEOPLE, (s + 1) * PEOPLE));
  // A team per rotation (group_by=team counts an incident in its assignee's teams).
  for (let s = 0; s < SCHEDULES; s++) {
    const team = await db
      .insertInto('teams')
      .values({ org_id: org.id, name: `Team ${s}`, slug: `team-${s}`, routing: 'round_robin', description: null, created_at: then, updated_at: then })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('team_members').values(rotations[s]!.map((user_id) => ({ team_id: team.id, user_id, active: 1 as const, created_at: then }))).execute();
  }
  const integrations: number[] = [];
  for (const [n, it] of INTEGRATIONS.entries()) {
    const row = await db
      .insertInto('integrations')
      .values({
        org_id: org.id,
        livemode: 1,
        name: it.name,
        key_hash: randomBytes(32).toString('hex'),
        last4: String(1000 + n),
        email_token: randomBytes(12).toString('hex'),
        created_by: me.id,
        default_assignee_id: null,
        priority_map: null,
        allowed_senders: null,
        created_at: then,
        revoked_at: null,
        escalation_policy_id: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    integrations.push(Number(row.id));
  }
  return { id: org.id, slug: org.slug, ownerId: me.id, key, rotations, integrations };
}

/**
 * SCHEDULES schedules made through the API a year and a day before `to` (Muster's clock moved back),
 * each a weekly rotation around the clock of its PEOPLE in its own zone; half a year later each gets
 * new layers (the rotation reversed, handing off on another day), and every month an override puts
 * another of its people on call for a day. Coverage stays whole, so the hours of any range served
 * add up to SCHEDULES x its hours. Answers how many layer versions and overrides were made.
 */
async function seedSchedules(muster: MusterServer, clock: ShiftedClock, org: Org, to: number): Promise<{ versions: number; overrides: number }> {
  const headers = { 'x-api-key': org.key };
  const call = async (method: 'POST' | 'PATCH', url: string, payload: object) => {
    const res = await muster.app.inject({ method, url, headers, payload });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<{ id: number }>();
  };
  const at = (t: number) => {
    clock.shift = t - Date.now();
  };
  const start = to - 366 * DAY;
  const wall = (t: number) => iso(t).slice(0, 16); // a wall time a few hours off is fine: the rotation covers all time
  let versions = 0;
  let overrides = 0;
  try {
    const ids: number[] = [];
    at(start);
    for (let s = 0; s < SCHEDULES; s++) {
      const layer = { name: 'Primary', start: wall(start - 2 * WEEK + s * DAY), turn: { unit: 'week', length: 1 }, users: org.rotations[s] };
      ids.push((await call('POST', `/v1/orgs/${org.slug}/schedules`, { name: `Rotation ${s}`, time_zone: ZONES[s % ZONES.length], layers: [layer] })).id);
      versions++;
    }
    for (let month = 0; month < 12; month++) {
      const t = start + month * 30 * DAY + DAY;
      at(t);
      for (let s = 0; s < SCHEDULES; s++) {
        if (month === 6) {
          const layer = { name: 'Primary', start: wall(t - ((s + 3) % 7) * DAY), turn: { unit: 'week', length: 1 }, users: [...org.rotations[s]!].reverse() };
          await call('PATCH', `/v1/orgs/${org.slug}/schedules/${ids[s]}`, { layers: [layer] });
          versions++;
        }
        const o = t + (s + 1) * DAY;
        await call('POST', `/v1/orgs/${org.slug}/schedules/${ids[s]}/overrides`, { user_id: org.rotations[s]![(month + s) % PEOPLE], start: iso(o), end: iso(o + DAY) });
        overrides++;
      }
    }
  } finally {
    clock.shift = 0;
  }
  return { versions, overrides };
}

// ---------------------------------------------------------------------------------------------
// The incidents, their pages and their timelines.

const STATUS_DONE: readonly IncidentStatus[] = ['resolved', 'closed'];
const STATUS_OPEN: readonly IncidentStatus[] = ['open', 'in_progress'];

/** What the reports must answer for a range, counted while seeding. */
interface Expected {
  incidents: number;
  acknowledged: number;
  resolved: number;
  reopened: number;
  pages: number;
  answered: number;
  escalatedPast: number;
}
const none = (): Expected => ({ incidents: 0, acknowledged: 0, resolved: 0, reopened: 0, pages: 0, answered: 0, escalatedPast: 0 });

interface Seeded {
  /** By range start (ms): what it holds up to `to`. */
  expected: Map<number, Expected>;
  pages: number;
  events: number;
  insertMs: number;
  analyzeMs: number;
}

const INCIDENT_COLUMNS = [
  col('id', 'bigint'), col('org_id', 'bigint'), col('livemode', 'int'), col('title'), col('status'), col('priority'), col('source'),
  col('assignee_id', 'bigint'), col('creator_id', 'bigint'), col('customer_token'), col('sla_due_at'), col('sla_warn_at'), col('sla_warned_at'),
  col('sla_breached_at'), col('resolved_at'), col('created_at'), col('updated_at'), col('acknowledged_at'), col('acknowledged_by', 'bigint'),
  col('integration_id', 'bigint'), col('integration_name'), col('integration_tool'), col('first_acknowledged_at'), col('escalated_at'),
  col('reopened_count', 'int'),
];
const PAGE_COLUMNS = [col('incident_id', 'bigint'), col('org_id', 'bigint'), col('livemode', 'int'), col('user_id', 'bigint'), col('level', 'int'), col('loop', 'int'), col('target_type'), col('target_id', 'bigint'), col('created_at')];
const EVENT_COLUMNS = [col('incident_id', 'bigint'), col('org_id', 'bigint'), col('livemode', 'int'), col('type'), col('actor_id', 'bigint'), col('data'), col('created_at')];

/**
 * INCIDENTS live incidents of the org opened over the year before `to` (one every ~31 s, ids and
 * created_at rising together), with their pages and timeline events; `rangeStarts` are the ranges
 * (each up to `to`) whose answers are counted. The mix:
 * - priority low 30 %, normal 40 %, high 20 %, urgent 10 %; 70 % from the five integrations (alerts,
 *   webhooks, mail), the rest by API or the dashboard; 85 % assigned, spread unevenly over the 60 people;
 * - 90 % acknowledged (within minutes for urgent work, within hours for low); nearly all incidents
 *   older than three days resolved or closed (half of them past their SLA window), about half of the
 *   newer ones; 3 % reopened once and 0.5 % twice; SLA marks as the sweeper would have set them;
 * - the high and urgent incidents from integrations page the person on call in the rotation of their
 *   integration at level 1 (about 20 % of all incidents). 15 % of those are not acknowledged within
 *   5 minutes: the walk escalates (an `escalated` event) and pages the next in the rotation at level 2,
 *   who acknowledges; 2 % of those nobody acknowledges and the policy ends (`escalation_exhausted`).
 *   Otherwise the first person acknowledges (an `acknowledged` event by them). 5 % of the others
 *   escalate by hand later (an `escalated` event, no page).
 */
async function seedIncidents(w: BulkWriter, org: Org, to: number, rangeStarts: number[]): Promise<Seeded> {
  const t0 = performance.now();
  const random = prng(39);
  const start = to - 365 * DAY + MINUTE;
  const end = to - 2 * HOUR;
  const step = (end - start) / INCIDENTS;
  const expected = new Map(rangeStarts.map((s) => [s, none()]));
  const people = org.rotations.flat();
  const CHUNK = 5_000;
  let incidents: unknown[][] = [];
  let pages: unknown[][] = [];
  let events: unknown[][] = [];
  let pageCount = 0;
  let eventCount = 0;
  const flush = async () => {
    await w.insert('incidents', INCIDENT_COLUMNS, incidents);
    if (pages.length) await w.insert('paging_pages', PAGE_COLUMNS, pages);
    if (events.length) await w.insert('incident_events', EVENT_COLUMNS, events);
    pageCount += pages.length;
    eventCount += events.length;
    incidents = [];
    pages = [];
    events = [];
  };
  const within = (t: number, f: (e: Expected) => void) => {
    for (const [s, e] of expected) if (t >= s && t < to) f(e);
  };
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;

  let tokens = Buffer.alloc(0);
  for (let i = 0; i < INCIDENTS; i++) {
    if (i % CHUNK === 0) tokens = randomBytes(24 * CHUNK);
    const id = i + 1;
    const created = Math.floor(start + i * step);
    const r = random();
    const priority: Priority = r < 0.3 ? 'low' : r < 0.7 ? 'normal' : r < 0.9 ? 'high' : 'urgent';
    const fromIntegration = random() < 0.7;
    const n = Math.floor(random() * INTEGRATIONS.length);
    const integration = fromIntegration ? INTEGRATIONS[n]! : undefined;
    const source: IncidentSource = integration ? integration.source : random() < 0.67 ? 'api' : 'dashboard';
    // Skewed: the lower-numbered people of each rotation take more of the work.
    const assignee = random() < 0.85 ? people[Math.floor(people.length * random() * random())]! : null;
    const { dueAt, warnAt } = slaTimes(new Date(created), priority);
    const due = dueAt.getTime();
    const warn = warnAt.getTime();
    const window = due - created;

    // Paging: the person on call in the integration's rotation (week by week), then the next one.
    const paged = integration !== undefined && (priority === 'high' || priority === 'urgent');
    const rotation = org.rotations[n % SCHEDULES]!;
    const week = Math.floor(created / WEEK);
    let firstAck: number | null = null;
    let escalatedAt: number | null = null;
    let ackBy: number | null = null;
    if (paged) {
      const first = rotation[week % PEOPLE]!;
      pages.push([id, org.id, 1, first, 1, 0, 'schedule', null, iso(created)]);
      within(created, (e) => e.pages++);
      if (random() < 0.15) {
        escalatedAt = created + 5 * MINUTE;
        const second = rotation[(week + 1) % PEOPLE]!;
        events.push([id, org.id, 1, 'escalated', null, '{"level":2}', iso(escalatedAt)]);
        pages.push([id, org.id, 1, second, 2, 0, 'schedule', null, iso(escalatedAt)]);
        within(created, (e) => e.escalatedPast++);
        within(escalatedAt, (e) => e.pages++);
        if (random() < 0.02) {
          events.push([id, org.id, 1, 'escalation_exhausted', null, '{}', iso(escalatedAt + 5 * MINUTE)]);
          within(escalatedAt, (e) => e.escalatedPast++);
        } else {
          firstAck = escalatedAt + Math.floor(random() * 4 * MINUTE) + 1000;
          ackBy = second;
          within(escalatedAt, (e) => e.answered++);
        }
      } else {
        firstAck = created + Math.floor(random() * 5 * MINUTE) + 1000;
        ackBy = first;
        within(created, (e) => e.answered++);
      }
      if (firstAck !== null) events.push([id, org.id, 1, 'acknowledged', ackBy, '{}', iso(firstAck)]);
    } else if (random() < 0.9) {
      const at = created + Math.floor(random() * random() * window) + 1000;
      const byHand = random() < 0.05 ? at + Math.floor(random() * window) : to;
      if (at < to) {
        firstAck = at;
        ackBy = assignee;
        if (ackBy !== null) events.push([id, org.id, 1, 'acknowledged', ackBy, '{}', iso(firstAck)]);
        if (byHand < to) {
          escalatedAt = byHand;
          events.push([id, org.id, 1, 'escalated', null, '{"by_hand":true}', iso(escalatedAt)]);
        }
      }
    }

    const age = to - created;
    let resolved: number | null = null;
    if (random() < (age > 3 * DAY ? 0.98 : 0.5)) {
      // Within twice the SLA window from opening (half met it), after the acknowledgement.
      resolved = Math.max(firstAck ?? created, created + Math.floor(random() * 2 * window)) + MINUTE;
      if (resolved >= to) resolved = null;
    }
    const status = resolved !== null ? pick(STATUS_DONE) : pick(STATUS_OPEN);
    const rr = random();
    const reopened = resolved === null ? 0 : rr < 0.005 ? 2 : rr < 0.035 ? 1 : 0;
    const until = resolved ?? to;
    const j = (i % CHUNK) * 24;
    incidents.push([
      id, org.id, 1, `Incident ${id}`, status, priority, source,
      assignee, org.ownerId, tokens.subarray(j, j + 24).toString('base64url'), iso(due), iso(warn), warn <= until ? iso(warn) : null,
      due < until ? iso(due) : null, resolved === null ? null : iso(resolved), iso(created), iso(resolved ?? firstAck ?? created),
      firstAck === null ? null : iso(firstAck), firstAck === null ? null : ackBy,
      integration ? org.integrations[n] : null, integration?.name ?? null, integration?.tool ?? null,
      firstAck === null ? null : iso(firstAck), escalatedAt === null ? null : iso(escalatedAt), reopened,
    ]);
    within(created, (e) => {
      e.incidents++;
      if (firstAck !== null) e.acknowledged++;
      if (resolved !== null) e.resolved++;
      if (reopened > 0) e.reopened++;
    });
    if (incidents.length === CHUNK) await flush();
  }
  await flush();
  return { expected, pages: pageCount, events: eventCount, insertMs: performance.now() - t0, analyzeMs: 0 };
}

/** The counts and list version the API's own writes would have left (the list's `total` reads them). */
async function seedCounts(muster: MusterServer, orgId: number): Promise<void> {
  const db = muster.ctx.db;
  await db.deleteFrom('incident_counts').where('org_id', '=', orgId).execute();
  await sql`insert into incident_counts (org_id, livemode, status, priority, n)
    select org_id, livemode, status, priority, count(*) from incidents where org_id = ${orgId} group by org_id, livemode, status, priority`.execute(db);
  await sql`insert into incident_list_versions (org_id, livemode, version) values (${orgId}, 1, 1)
    on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`.execute(db);
  if (muster.ctx.database.dialect === 'postgres') {
    // Ids were given explicitly: the identity goes on from the largest.
    await sql`select setval(pg_get_serial_sequence('incidents', 'id'), (select max(id) from incidents))`.execute(db);
  }
}

// ---------------------------------------------------------------------------------------------
// The cases.

interface IncidentTotals {
  incidents: number;
  acknowledged: number;
  resolved: number;
  reopened: number;
}
interface OncallTotals {
  hours_on_call: number;
  pages: number;
  acknowledged: number;
  escalated_past: number;
}

interface Case {
  label: string;
  days: number;
  url: string;
  check(body: unknown, e: Expected): string | undefined;
}

function cases(slug: string, to: number): Case[] {
  const range = (days: number) => `from=${iso(to - days * DAY)}&to=${iso(to)}`;
  const incidentCase = (days: number, group: string, rows: (n: number) => boolean): Case => ({
    label: `incidents, ${days} days by ${group}`,
    days,
    url: `/v1/orgs/${slug}/reports/incidents?${range(days)}&group_by=${group}&tz=${REPORT_TZ}`,
    check: (body, e) => {
      const b = body as { rows: unknown[]; totals: IncidentTotals };
      const t = b.totals;
      if (t.incidents !== e.incidents || t.acknowledged !== e.acknowledged || t.resolved !== e.resolved || t.reopened !== e.reopened) {
        return `totals ${JSON.stringify(t)}, seeded ${JSON.stringify(e)}`;
      }
      if (!rows(b.rows.length)) return `${b.rows.length} rows`;
      return undefined;
    },
  });
  const oncallCase = (days: number): Case => ({
    label: `on call, ${days} days`,
    days,
    url: `/v1/orgs/${slug}/reports/oncall?${range(days)}&tz=${REPORT_TZ}`,
    check: (body, e) => {
      const b = body as { rows: unknown[]; totals: OncallTotals };
      const t = b.totals;
      const hours = SCHEDULES * days * 24;
      if (Math.abs(t.hours_on_call - hours) > 0.01 || t.pages !== e.pages || t.acknowledged !== e.answered || t.escalated_past !== e.escalatedPast) {
        return `totals ${JSON.stringify(t)}, seeded ${hours} hours and ${JSON.stringify(e)}`;
      }
      if (b.rows.length === 0 || b.rows.length > SCHEDULES * PEOPLE) return `${b.rows.length} rows`;
      return undefined;
    },
  });
  return [
    incidentCase(30, 'day', (n) => n === 30 || n === 31),
    incidentCase(365, 'month', (n) => n === 12 || n === 13),
    incidentCase(365, 'assignee', (n) => n > 1 && n <= SCHEDULES * PEOPLE + 1),
    oncallCase(30),
    oncallCase(365),
  ];
}

type Engine = 'SQLite' | 'PostgreSQL';

interface Measured {
  c: Case;
  comparison?: Comparison;
  /** Seconds of each of its runs (RUN_SECONDS, or more for a slow answer). */
  seconds?: number;
  bytes: number;
  /** The answer computed (`Cache-Control: no-cache`), with nothing else running: its time in ms. */
  computeMs: number;
  /** The next request, with nothing else running: from the stored answer where it was stored. */
  aloneMs: number;
  /** Whether the next request got the stored answer (the same `as_of`). */
  stored: boolean;
}

/** The load on one case while incidents are written through the API (the answer recomputed again and again). */
interface WhileWritten {
  c: Case;
  comparison: Comparison;
  seconds: number;
  /** Incidents created through the API during the load, one every WRITE_EVERY_MS. */
  writes: number;
  /** Recomputations of the answer during the load. */
  recomputed: number;
  /** Of the stored answers served, how far their `as_of` trailed the request (ms), sampled once a second. */
  lagMs: number[];
}

/** While written: an incident created through the API this often. */
const WRITE_EVERY_MS = 1_000;

interface EngineRun {
  engine: Engine;
  seeded: Seeded;
  setupMs: number;
  versions: number;
  overrides: number;
  measured: Measured[];
  whileWritten?: WhileWritten;
}

/** Seeds and measures on one engine; `probe` (bench/probe-reports.ts) runs on the seeded Muster before it closes. */
export async function runEngine(engine: Engine, measureLabels: (c: Case) => boolean, measureWhileWritten: boolean, probe?: (muster: MusterServer, urls: string[], headers: Record<string, string>) => Promise<void>): Promise<EngineRun> {
  const schema = `bench_reports_${randomBytes(4).toString('hex')}`;
  const clock = new ShiftedClock();
  const muster = await startMuster(engine === 'PostgreSQL' ? { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } : {}, { clock });
  const baselines: Server[] = [];
  let writer: BulkWriter | undefined;
  try {
    const t0 = performance.now();
    // `to` on a whole minute, a little ahead of the seed's last incident; the reports end there.
    const to = Math.floor(Date.now() / MINUTE) * MINUTE;
    const org = await seedOrg(muster);
    const { versions, overrides } = await seedSchedules(muster, clock, org, to);
    const setupMs = performance.now() - t0;
    const all = cases(org.slug, to);
    process.stderr.write(`  ${engine}: seeding ${int(INCIDENTS)} incidents...\n`);
    writer = engine === 'SQLite' ? sqliteBulkWriter(path.join(muster.dataDir, 'muster.db')) : await pgBulkWriter(PG_URL, schema, ['incidents', 'paging_pages', 'incident_events']);
    const seeded = await seedIncidents(writer, org, to, [...new Set(all.map((c) => to - c.days * DAY))]);
    const { analyzeMs } = await writer.finish();
    await writer.close();
    writer = undefined;
    seeded.analyzeMs = analyzeMs;
    await seedCounts(muster, org.id);
    process.stderr.write(`  ${engine}: seeded in ${secs(seeded.insertMs)} (+ ANALYZE ${secs(analyzeMs)}): ${int(seeded.pages)} pages, ${int(seeded.events)} timeline events\n`);

    const headers = { 'x-api-key': org.key };
    const measured: Measured[] = [];
    const runSeconds = new Map<string, number>();
    for (const c of all) {
      // The answer computed first (`Cache-Control: no-cache`): its totals must be the seeded ones, or no figure is taken.
      const t = performance.now();
      const res = await muster.app.inject({ url: c.url, headers: { ...headers, 'cache-control': 'no-cache' } });
      const computeMs = performance.now() - t;
      if (res.statusCode !== 200) throw new Error(`${engine} GET ${c.url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      const body = res.json<{ as_of: string }>();
      const wrong = c.check(body, seeded.expected.get(to - c.days * DAY)!);
      if (wrong) throw new Error(`${engine} GET ${c.url}: ${wrong}`);
      // Then as a client asks: the stored answer where computing it took REPORT_STORE_AFTER_MS or more.
      const t2 = performance.now();
      const again = await muster.app.inject({ url: c.url, headers });
      const aloneMs = performance.now() - t2;
      if (again.statusCode !== 200) throw new Error(`${engine} GET ${c.url}: ${again.statusCode}`);
      const stored = again.json<{ as_of: string }>().as_of === body.as_of;
      let comparison: Comparison | undefined;
      // An answer that alone takes longer than LOAD_LIMIT_MS is not loaded: 10 connections would queue
      // behind it for 10 times as long, and its p95 is over the goal whatever the load. Below it, a
      // request may wait for its answer twice the run's length: one under 700 ms alone queued past the
      // load generator's 10 s timeout, and then past 30 times its time alone (2026-11-27, the 30-day report).
      if (measureLabels(c) && aloneMs < LOAD_LIMIT_MS) {
        process.stderr.write(`  ${engine}: ${c.label}...\n`);
        const baseline = await startBaseline(again.json());
        baselines.push(baseline);
        // Long enough for every connection to get several answers in a run (10 queue behind each other).
        const seconds = Math.max(RUN_SECONDS, Math.ceil((aloneMs * 10 * 4) / 1000));
        const timeoutSeconds = 2 * seconds;
        // Muster and the baseline share this thread: when a run stops, Muster still computes the answers
        // queued in it, and the next load (the baseline's) would get none in a short warm-up. Warm-ups as
        // long as the runs outlast that queue (10 answers at most).
        const warmupSeconds = Math.max(WARMUP_SECONDS, seconds);
        comparison = await compare({ url: baseline.url, seconds, warmupSeconds }, { url: `${muster.url}${c.url}`, headers, seconds, timeoutSeconds, warmupSeconds });
        runSeconds.set(c.label, seconds);
      } else {
        process.stderr.write(`  ${engine}: ${c.label}: computed in ${ms(computeMs)} ms, then ${ms(aloneMs)} ms alone${measureLabels(c) ? ', not loaded' : ''}\n`);
      }
      measured.push({ c, ...(comparison ? { comparison, seconds: runSeconds.get(c.label)! } : {}), bytes: res.rawPayload.length, computeMs, aloneMs, stored });
    }
    const written = all.find((c) => c.label === WHILE_WRITTEN);
    const whileWritten = written && measureWhileWritten ? await loadWhileWritten(engine, muster, org, written, headers, baselines) : undefined;
    await probe?.(muster, all.map((c) => c.url), headers);
    return { engine, seeded, setupMs, versions, overrides, measured, ...(whileWritten ? { whileWritten } : {}) };
  } finally {
    await writer?.close();
    for (const b of baselines) await b.close();
    await muster.close();
    if (engine === 'PostgreSQL') await dropPgSchemas(PG_URL, [schema]);
  }
}

const WHILE_WRITTEN = 'incidents, 365 days by month';

/**
 * The load on case `c` while an incident is created through the API every WRITE_EVERY_MS (opened
 * now, after the range: its figures stay the same, but the org's incidents changed, so every stored
 * answer is recomputed), against the baseline; once a second the age of the answer served is sampled.
 */
async function loadWhileWritten(engine: Engine, muster: MusterServer, org: Org, c: Case, headers: Record<string, string>, baselines: Server[]): Promise<WhileWritten> {
  process.stderr.write(`  ${engine}: ${c.label}, while incidents are written...\n`);
  const sample = await muster.app.inject({ url: c.url, headers });
  const baseline = await startBaseline(sample.json());
  baselines.push(baseline);
  const computedBefore = muster.ctx.reportStore.computed;
  let writes = 0;
  let stop = false;
  const lagMs: number[] = [];
  const writer = (async () => {
    while (!stop) {
      const res = await muster.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title: `Written during the load (${writes + 1})`, org_id: org.id } });
      if (res.statusCode !== 201) throw new Error(`${engine} POST /v1/tickets: ${res.statusCode} ${res.body.slice(0, 200)}`);
      writes++;
      const asked = Date.now();
      const r = await muster.app.inject({ url: c.url, headers });
      if (r.statusCode !== 200) throw new Error(`${engine} GET ${c.url}: ${r.statusCode}`);
      lagMs.push(Math.max(0, asked - Date.parse(r.json<{ as_of: string }>().as_of)));
      await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
    }
  })();
  const seconds = RUN_SECONDS;
  let comparison: Comparison;
  try {
    comparison = await compare({ url: baseline.url, seconds }, { url: `${muster.url}${c.url}`, headers, seconds, timeoutSeconds: 2 * seconds });
  } finally {
    stop = true;
    await writer;
  }
  await muster.ctx.reportStore.idle();
  return { c, comparison, seconds, writes, recomputed: muster.ctx.reportStore.computed - computedBefore, lagMs };
}

function goalOf(f: LoadFigures): string {
  return f.p95 < GOAL_P95_MS ? 'met' : '**not met**';
}

function section(runs: EngineRun[]): string {
  const lines = [
    `## Reports: ${int(INCIDENTS)} incidents and a year of schedules, SQLite and PostgreSQL`,
    '',
    `One org with ${int(INCIDENTS)} live incidents opened over the past year (one every ~${Math.round((365 * DAY) / INCIDENTS / 1000)} s), their pages and`,
    `timeline events, and ${SCHEDULES} on-call schedules made through the API a year ago (Muster's clock moved back while they were`,
    `made): each a weekly rotation around the clock of its own ${PEOPLE} people, in six zones, with new layers half a year later and`,
    `an override each month. Mix: priority low 30 %, normal 40 %, high 20 %, urgent 10 %; 70 % from five integrations, the rest`,
    'by API or the dashboard; 85 % assigned (unevenly over the 60 people, 6 teams); 90 % acknowledged; nearly all incidents',
    "older than three days resolved, about half within their SLA; 3.5 % reopened. The integrations' high and urgent incidents",
    'page the person on call at level 1 (an acknowledgement by them, or after 5 minutes an escalation, a level-2 page of the',
    'next person and their acknowledgement; 2 % of those end unanswered); 5 % of the others escalate by hand.',
    '',
    'Cases: `GET /v1/orgs/:org_slug/reports/incidents` over the last 30 days by day, and over the last 365 days by month and by',
    `assignee (all in \`tz=${REPORT_TZ}\`); \`GET /v1/orgs/:org_slug/reports/oncall\` over the last 30 and 365 days. Each case is first`,
    'asked with `Cache-Control: no-cache` ("computed": the answer computed for the request, with nothing else running, as the',
    'first asking of a question is), and its totals checked: incidents, acknowledged, resolved, reopened; pages, acknowledged,',
    `escalated past equal the seed's own count of the range, and the hours on call ${SCHEDULES} x the hours of the range. Then once as a`,
    'client asks ("next, alone": "stored" where the answer took long enough to be stored, REPORT_STORE_AFTER_MS, 250 ms by',
    `default, as here), then under load against a bare \`node:http\` server sending the same bytes: 10 connections; ${ROUNDS_TEXT} alternating`,
    `baseline and Muster, each run a ${WARMUP_SECONDS} s warm-up then ${RUN_SECONDS} s (longer for a slow answer: 40 times its time alone, and its warm-ups as long);`,
    `medians; latencies in ms; a request may wait twice the run's length before it counts as an error. A case whose next answer alone`,
    `takes ${LOAD_LIMIT_MS} ms or more is not loaded and misses the goal. "While written": the year by month loaded while an incident is`,
    `created through the API every ${WRITE_EVERY_MS / 1000} s (opened now, after the range: its figures stay, but the org's incidents changed, so the`,
    'stored answer no longer holds and is recomputed, by one computation at a time, again and again through the load); the',
    "recomputations are counted, and after each creation the age of the answer served (its `as_of`) is sampled.",
    '',
  ];
  for (const r of runs) {
    lines.push(
      `### ${r.engine}`,
      '',
      `Seeded in ${secs(r.seeded.insertMs)} (+ \`ANALYZE\` ${secs(r.seeded.analyzeMs)}): ${int(INCIDENTS)} incidents, ${int(r.seeded.pages)} pages, ${int(r.seeded.events)} timeline events;`,
      `schedules through the API: ${r.versions} layer versions, ${r.overrides} overrides (${secs(r.setupMs)} with the org).`,
      '',
      '| Case | answer | computed | next, alone | baseline req/s | Muster req/s | p50 | p95 | p99 | p95 under 500 ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    );
    for (const m of r.measured) {
      const c = m.comparison;
      const kb = `${(m.bytes / 1024).toFixed(1)} KB`;
      const next = `${ms(m.aloneMs)}${m.stored ? ' (stored)' : ''}`;
      if (!c) lines.push(`| ${m.c.label} | ${kb} | ${ms(m.computeMs)} | ${next} | - | - | - | - | - | ${m.aloneMs >= GOAL_P95_MS ? '**not met** (alone; not loaded)' : '(checked, not loaded)'} |`);
      else lines.push(`| ${m.c.label}${m.seconds !== RUN_SECONDS ? ` (runs of ${m.seconds} s)` : ''} | ${kb} | ${ms(m.computeMs)} | ${next} | ${rps(c.baseline.requestsPerSec)} | ${rps(c.subject.requestsPerSec)} | ${ms(c.subject.p50)} | ${ms(c.subject.p95)} | ${ms(c.subject.p99)} | ${goalOf(c.subject)} |`);
    }
    const ww = r.whileWritten;
    if (ww) {
      const c = ww.comparison;
      const lag = [...ww.lagMs].sort((x, y) => x - y);
      lines.push(
        `| ${ww.c.label}, while written (${ww.writes} incidents created, ${ww.recomputed} recomputations) | - | - | - | ${rps(c.baseline.requestsPerSec)} | ${rps(c.subject.requestsPerSec)} | ${ms(c.subject.p50)} | ${ms(c.subject.p95)} | ${ms(c.subject.p99)} | ${goalOf(c.subject)} |`,
        '',
        `While written: the \`as_of\` of the answer served trailed the request by ${lag.length ? `${secs(median(lag))} (median) and ${secs(lag.at(-1)!)} (most)` : '-'} over ${lag.length} samples, one after each incident created. The most is the answer stored when the case was first asked, minutes before (the other cases ran in between), served until the first recomputation under load ended; after that, an answer trails by about one recomputation.`,
      );
    }
    lines.push('');
  }
  // A case not loaded because one answer alone took LOAD_LIMIT_MS or more missed the goal too.
  const all = runs.flatMap((r) => [
    ...r.measured.filter((m) => m.comparison || m.aloneMs >= LOAD_LIMIT_MS).map((m) => ({ engine: r.engine, label: m.c.label, p95: m.comparison ? m.comparison.subject.p95 : m.aloneMs })),
    ...(r.whileWritten ? [{ engine: r.engine, label: `${r.whileWritten.c.label}, while written`, p95: r.whileWritten.comparison.subject.p95 }] : []),
  ]);
  const missed = all.filter((x) => x.p95 >= GOAL_P95_MS);
  lines.push(
    `Goal (from the issue): p95 under ${GOAL_P95_MS} ms for every case on both engines. Measured: ${
      missed.length === 0 ? `**met** in all ${all.length} cases` : `**not met** in ${missed.length} of ${all.length} (${missed.map((x) => `${x.engine}: ${x.label}`).join('; ')})`
    }.`,
    '',
    'The load generator shares the 2 cores with the server (and, on PostgreSQL, with the database), so absolute figures move between runs.',
    '',
    `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- reports\`.`,
  );
  return lines.join('\n');
}

export async function run(): Promise<BenchResult> {
  // Quick mode checks every answer on both engines but loads one case on each (the month of
  // incidents on SQLite, the month of pages on PostgreSQL), to stay within its time.
  const quickPick = (label: string) => (c: Case) => !QUICK || c.label === label;
  // While written: on both engines, but in quick mode on SQLite only.
  const runs = [await runEngine('SQLite', quickPick('incidents, 30 days by day'), true), await runEngine('PostgreSQL', quickPick('on call, 30 days'), !QUICK)];
  return { name: NAME, markdown: section(runs) };
}
