// On-call schedules (issue #35): GET /v1/orgs/:org_slug/on-call for an org of 200 schedules of 3
// layers each (who is on call now and next in every one), and GET .../schedules/:schedule/shifts
// over 93 days, each against a bare node:http server answering the same bytes; on SQLite alone and
// on PostgreSQL with Redis (issue #40), and the org view on SQLite without the on-call memo
// (ONCALL_MEMO_SIZE=0: every request resolves every schedule, as before the memo).
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';
import { iso } from '../src/lib/clock.js';
import { interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Interleaved, type MemoryRow, type MusterServer, type Server } from './lib.js';
import { bothTable, CONFIGS, configOf, costRows, cpuOf, CPU_NOTE, pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';

const NAME = 'oncall';
const SCHEDULES = sized(200, 10);
const MEMBERS = 30;
const ZONES = ['Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata'];
const DAY = 86_400_000;

const MEMO_OFF = 'Muster, SQLite, no memo (`ONCALL_MEMO_SIZE=0`)';
/** The side without the memo: full runs only (a quick run checks the paths, and CI's time is short). */
const WITH_OFF = sized(true, false);
const us = (n: number) => Math.round(n).toLocaleString('en-US');

// A full collection between heap readings (the benchmarks run without --expose-gc).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** Members of the org, inserted directly (registering them through Argon2 would only slow the setup). */
export async function seedMembers(db: Kysely<DB>, orgId: number): Promise<number[]> {
  const now = iso(new Date(Date.now() - 365 * DAY));
  const users = await db
    .insertInto('users')
    .values(Array.from({ length: MEMBERS }, (_, i) => ({ email: `oncall-${i}@bench.test`, password_hash: null, name: `Responder ${i}`, slug: `oncall-${i}`, plan: 'free' as const, timezone: 'UTC', phone: null, is_admin: 0 as const, created_at: now, updated_at: now })))
    .returning('id')
    .execute();
  await db.insertInto('memberships').values(users.map((u) => ({ org_id: orgId, user_id: u.id, role: 'member' as const, is_primary: 0 as const, created_at: now }))).execute();
  return users.map((u) => u.id);
}

/**
 * Schedules through the API, each of three layers as teams build them: a weekly rotation around
 * the clock, a daily one on weekdays 09:00-17:00 above it, and 12-hour turns over the nights
 * (22:00-06:00, past midnight) on top; in four zones, started months ago; an override each.
 */
export async function seedSchedules(muster: MusterServer, headers: Record<string, string>, slug: string, users: number[], count = SCHEDULES): Promise<number[]> {
  const ids: number[] = [];
  const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => users[(i * 7 + k * 3) % users.length]!);
  for (let i = 0; i < count; i++) {
    const res = await muster.app.inject({
      method: 'POST',
      url: `/v1/orgs/${slug}/schedules`,
      headers,
      payload: {
        name: `Schedule ${i}`,
        time_zone: ZONES[i % ZONES.length],
        layers: [
          { name: 'Primary', start: '2026-01-05T09:00', turn: { unit: 'week', length: 1 }, users: pick(i, 4) },
          { name: 'Office hours', start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: pick(i + 1, 3), restrictions: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] },
          { name: 'Nights', start: '2026-01-05T22:00', turn: { unit: 'hour', length: 12 }, users: pick(i + 2, 2), restrictions: [{ start_time: '22:00', end_time: '06:00' }] },
        ],
      },
    });
    if (res.statusCode !== 201) throw new Error(`POST schedule: ${res.statusCode} ${res.body}`);
    const id = res.json<{ id: number }>().id;
    const start = Date.now() + ((i % 10) + 1) * DAY;
    const o = await muster.app.inject({ method: 'POST', url: `/v1/orgs/${slug}/schedules/${id}/overrides`, headers, payload: { user_id: users[i % users.length], start: new Date(start).toISOString(), end: new Date(start + 6 * 3_600_000).toISOString() } });
    if (o.statusCode !== 201) throw new Error(`POST override: ${o.statusCode} ${o.body}`);
    ids.push(id);
  }
  return ids;
}

/** One side of the benchmark: a Muster with the org of SCHEDULES schedules, the URLs to load and the JS heap the schedules hold. */
interface Side {
  muster: MusterServer;
  headers: Record<string, string>;
  onCallUrl: string;
  shiftsUrl: string;
  viewBody: object;
  shiftsBody: { shifts: { start: string; end: string }[]; gaps: unknown[] };
  /** heapUsed after a full GC: after the schedules were made and the org view served twice, less before any schedule. */
  heldBytes: number;
}

async function side(muster: MusterServer): Promise<Side> {
  const headers = { 'x-api-key': await liveKey(muster.app) };
  const org = (await muster.app.inject({ url: '/v1/orgs', headers })).json<{ orgs: { id: number; slug: string; primary: boolean }[] }>().orgs.find((o) => o.primary)!;
  const onCallUrl = `/v1/orgs/${org.slug}/on-call`;
  // The route compiled on an empty org first, so the heap before holds everything but the schedules.
  if ((await muster.app.inject({ url: onCallUrl, headers })).statusCode !== 200) throw new Error(`GET ${onCallUrl} of an empty org failed`);
  const users = await seedMembers(muster.ctx.db, org.id);
  // So are the routes that make a schedule and an override, and the four zones' formats (four schedules made, viewed
  // and deleted): their compiled schemas and zone caches are no schedule's.
  for (const primer of await seedSchedules(muster, headers, org.slug, users, ZONES.length)) {
    await muster.app.inject({ url: onCallUrl, headers });
    if ((await muster.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/schedules/${primer}`, headers })).statusCode !== 200) throw new Error('DELETE of a primer schedule failed');
  }
  const before = heapUsed();
  const ids = await seedSchedules(muster, headers, org.slug, users);

  // The org view: every schedule, someone on call now (the weekly layer covers all time) and next.
  await muster.app.inject({ url: onCallUrl, headers });
  const view = await muster.app.inject({ url: onCallUrl, headers });
  const heldBytes = heapUsed() - before;
  const viewBody = view.json<{ schedules: { on_call: unknown[]; next: unknown[] }[] }>();
  if (view.statusCode !== 200 || viewBody.schedules.length !== SCHEDULES || viewBody.schedules.some((s) => s.on_call.length !== 1 || s.next.length !== 1)) {
    throw new Error(`GET ${onCallUrl}: ${view.statusCode} ${view.body.slice(0, 300)}`);
  }
  // The final shifts of one schedule over 93 days: covered throughout, in order.
  const from = new Date(Math.floor(Date.now() / DAY) * DAY);
  const shiftsUrl = `/v1/orgs/${org.slug}/schedules/${ids[1]}/shifts?from=${from.toISOString()}&to=${new Date(from.getTime() + 93 * DAY).toISOString()}`;
  const shifts = await muster.app.inject({ url: shiftsUrl, headers });
  const shiftsBody = shifts.json<Side['shiftsBody']>();
  const covered = shiftsBody.shifts.every((s, i) => i === 0 || s.start === shiftsBody.shifts[i - 1]!.end);
  if (shifts.statusCode !== 200 || shiftsBody.gaps.length !== 0 || !covered || shiftsBody.shifts.length < 93) throw new Error(`GET ${shiftsUrl}: ${shifts.statusCode} ${shifts.body.slice(0, 300)}`);
  return { muster, headers, onCallUrl, shiftsUrl, viewBody, shiftsBody, heldBytes };
}

/** The same people on call and next on every side (bounds start at each side's creation time): the sides differ in their engine or memo only. */
function sameView(a: Side, b: Side, what: string) {
  const who = (body: object) => JSON.stringify((body as { schedules: { on_call: { user_name: string }[]; next: { user_name: string }[] }[] }).schedules.map((s) => [s.on_call.map((x) => x.user_name), s.next.map((x) => x.user_name)]));
  if (who(a.viewBody) !== who(b.viewBody)) throw new Error(`the org view of ${what} differs from SQLite's`);
}

export async function run(): Promise<BenchResult> {
  const muster = await startMuster();
  let off: MusterServer | undefined;
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  const baselines: Server[] = [];
  try {
    const sqlite = await side(muster);
    off = WITH_OFF ? await startMuster({ ONCALL_MEMO_SIZE: '0' }) : undefined;
    const noMemo = off ? await side(off) : undefined;
    pgr = await pgRedis(NAME);
    pgMuster = await startPgRedisMuster(pgr);
    const pg = await side(pgMuster);
    if (noMemo) sameView(sqlite, noMemo, 'SQLite without the memo');
    sameView(sqlite, pg, 'PostgreSQL');

    const pgLoad = { seconds: RUN_SECONDS, otherCpuMs: pgr.backendCpuMs, wire: true };
    const baselineOf = async (body: object) => {
      const b = await startBaseline(body);
      baselines.push(b);
      return { url: b.url, seconds: RUN_SECONDS };
    };
    const on = (s: Side, url: string) => ({ url: `${s.muster.url}${url}`, headers: s.headers, seconds: RUN_SECONDS });
    const viewLabels = noMemo ? [...CONFIGS, MEMO_OFF] : CONFIGS;
    const a = await interleave(await baselineOf(sqlite.viewBody), [on(sqlite, sqlite.onCallUrl), { ...on(pg, pg.onCallUrl), ...pgLoad }, ...(noMemo ? [on(noMemo, noMemo.onCallUrl)] : [])]);
    const b = await interleave(await baselineOf(sqlite.shiftsBody), [on(sqlite, sqlite.shiftsUrl), { ...on(pg, pg.shiftsUrl), ...pgLoad }]);
    const cpu = (r: Interleaved, i: number) => cpuOf(r.subjects[i]!).server;
    const withMemo = { ...a, subjects: a.subjects.slice(0, 2) };
    const per1000 = (s: Side) => (s.heldBytes / SCHEDULES) * 1000;
    // A heap that shrank while the schedules were made measured memory released by earlier benchmarks of the same
    // process (a full run), not the schedules': no figure is taken from it (2026-11-27: -7.4 MB on SQLite).
    const measured = [sqlite, pg].filter((s) => s.heldBytes > 0);
    const memory: MemoryRow[] = measured.map((s) => ({ what: '1,000 on-call schedules (3 layers, served)', config: configOf(CONFIGS[s === sqlite ? 0 : 1]), bytes: per1000(s) }));
    const kb = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;
    const held = (s: Side, name: string) =>
      s.heldBytes > 0 ? `${name} ${kb(per1000(s))} per 1,000 schedules (${kb(s.heldBytes)} for ${SCHEDULES})` : `${name} not measured (the heap shrank by ${kb(-s.heldBytes)} meanwhile: memory of earlier benchmarks released; \`npm run bench -- oncall\` alone measures it)`;
    const markdown = [
      `## On call: GET /v1/orgs/:org_slug/on-call (${SCHEDULES} schedules x 3 layers) and 93 days of shifts`,
      '',
      `Measured: an org of ${SCHEDULES} schedules, each of three layers (a weekly rotation around the clock, a daily one on`,
      'weekdays 09:00-17:00 above it, 12-hour turns over the nights 22:00-06:00 on top), in four zones, with an override each.',
      'The org view answers every schedule with who is on call now and next, each with the whole bounds of their shift. Per',
      "request Muster checks the caller, reads the schedules (with their versions) and the org's members over time, and takes",
      'each answer from the on-call memo (`modules/oncall/around-memo.ts`: kept per schedule until its current shift ends or the',
      'schedule is written). Without the memo (`ONCALL_MEMO_SIZE=0`, the last row: every request as before it) it also reads',
      "the layer versions and the overrides of 93 days either side, then resolves each schedule around now in pure code (a window",
      "of a day back and two ahead, widened only when a shift reaches its edge). The shifts table is one schedule's final",
      `shifts over 93 days (${sqlite.shiftsBody.shifts.length} shifts; never memoised). The baseline is a bare \`node:http\` server sending the same JSON`,
      `body. 10 connections; the configurations in the same ${ROUNDS_TEXT} (baseline, then each configuration, alternating order),`,
      `each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms. Every side answers the same people (checked).`,
      '',
      `### The org view (${SCHEDULES} schedules)`,
      '',
      ...bothTable(a, viewLabels),
      '',
      noMemo
        ? `CPU per org-view request on SQLite: **${us(cpu(a, 2))} µs without the memo, ${us(cpu(a, 0))} µs with it** (${(cpu(a, 2) / cpu(a, 0)).toFixed(1)}x less), in the same rounds;`
        : 'Quick run: the side without the memo is left out.',
      `on PostgreSQL + Redis ${us(cpu(a, 1))} µs of Muster's with the memo.`,
      '',
      '### 93 days of one schedule\'s shifts',
      '',
      ...bothTable(b),
      '',
      CPU_NOTE,
      '',
      `Memory: the JS heap (\`heapUsed\` after a full collection) of the benchmark's process after the ${SCHEDULES} schedules were made`,
      'and the org view served twice, less before the first schedule (the route compiled already): the parsed layer versions,',
      `the memo's answers and their text. ${held(sqlite, 'SQLite')}; ${held(pg, 'PostgreSQL + Redis')} (one process, so other work of`,
      'those seconds is in it too).',
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- oncall\`.`,
    ].join('\n');
    return { name: NAME, markdown, costs: [...costRows(`GET /v1/orgs/:org_slug/on-call (${SCHEDULES} schedules)`, withMemo), ...costRows('GET .../schedules/:schedule/shifts (93 days)', b)], memory };
  } finally {
    for (const x of baselines) await x.close();
    await muster.close();
    await off?.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
