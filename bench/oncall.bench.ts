// On-call schedules (issue #35): GET /v1/orgs/:org_slug/on-call for an org of 200 schedules of 3
// layers each (who is on call now and next in every one), and GET .../schedules/:schedule/shifts
// over 93 days, each against a bare node:http server answering the same bytes.
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';
import { iso } from '../src/lib/clock.js';
import { compare, liveKey, machine, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Comparison, type LoadFigures, type MusterServer, type Server } from './lib.js';

const NAME = 'oncall';
const SCHEDULES = sized(200, 10);
const MEMBERS = 30;
const ZONES = ['Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata'];
const DAY = 86_400_000;

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const row = (label: string, f: LoadFigures, ratio: number) =>
  `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;

/** Members of the org, inserted directly (registering them through Argon2 would only slow the setup). */
async function seedMembers(db: Kysely<DB>, orgId: number): Promise<number[]> {
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
async function seedSchedules(muster: MusterServer, headers: Record<string, string>, slug: string, users: number[]): Promise<number[]> {
  const ids: number[] = [];
  const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => users[(i * 7 + k * 3) % users.length]!);
  for (let i = 0; i < SCHEDULES; i++) {
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

export async function run(): Promise<BenchResult> {
  const muster = await startMuster();
  const baselines: Server[] = [];
  try {
    const key = await liveKey(muster.app);
    const headers = { 'x-api-key': key };
    const org = (await muster.app.inject({ url: '/v1/orgs', headers })).json<{ orgs: { id: number; slug: string; primary: boolean }[] }>().orgs.find((o) => o.primary)!;
    const users = await seedMembers(muster.ctx.db, org.id);
    const ids = await seedSchedules(muster, headers, org.slug, users);

    // The org view: every schedule, someone on call now (the weekly layer covers all time) and next.
    const onCallUrl = `/v1/orgs/${org.slug}/on-call`;
    const view = await muster.app.inject({ url: onCallUrl, headers });
    const viewBody = view.json<{ schedules: { on_call: unknown[]; next: unknown[] }[] }>();
    if (view.statusCode !== 200 || viewBody.schedules.length !== SCHEDULES || viewBody.schedules.some((s) => s.on_call.length !== 1 || s.next.length !== 1)) {
      throw new Error(`GET ${onCallUrl}: ${view.statusCode} ${view.body.slice(0, 300)}`);
    }
    // The final shifts of one schedule over 93 days: covered throughout, in order.
    const from = new Date(Math.floor(Date.now() / DAY) * DAY);
    const shiftsUrl = `/v1/orgs/${org.slug}/schedules/${ids[1]}/shifts?from=${from.toISOString()}&to=${new Date(from.getTime() + 93 * DAY).toISOString()}`;
    const shifts = await muster.app.inject({ url: shiftsUrl, headers });
    const shiftsBody = shifts.json<{ shifts: { start: string; end: string }[]; gaps: unknown[] }>();
    const covered = shiftsBody.shifts.every((s, i) => i === 0 || s.start === shiftsBody.shifts[i - 1]!.end);
    if (shifts.statusCode !== 200 || shiftsBody.gaps.length !== 0 || !covered || shiftsBody.shifts.length < 93) throw new Error(`GET ${shiftsUrl}: ${shifts.statusCode} ${shifts.body.slice(0, 300)}`);

    const measure = async (url: string, body: object): Promise<Comparison> => {
      const baseline = await startBaseline(body);
      baselines.push(baseline);
      return compare({ url: baseline.url, seconds: RUN_SECONDS }, { url: `${muster.url}${url}`, headers, seconds: RUN_SECONDS });
    };
    const a = await measure(onCallUrl, viewBody);
    const b = await measure(shiftsUrl, shiftsBody);
    const rounds = (c: Comparison) => c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ');
    const markdown = [
      `## On call: GET /v1/orgs/:org_slug/on-call (${SCHEDULES} schedules x 3 layers) and 93 days of shifts`,
      '',
      `Measured: an org of ${SCHEDULES} schedules, each of three layers (a weekly rotation around the clock, a daily one on`,
      'weekdays 09:00-17:00 above it, 12-hour turns over the nights 22:00-06:00 on top), in four zones, with an override each.',
      'The org view answers every schedule with who is on call now and next, each with the whole bounds of their shift: per',
      'request Muster checks the caller, reads the schedules, their layer versions, the overrides of 93 days either side and the',
      "org's memberships (one query each, whatever the number of schedules), then resolves each schedule around now in pure",
      "code (a window of a day back and two ahead, widened only when a shift reaches its edge). The shifts row is one schedule's",
      `final shifts over 93 days (${shiftsBody.shifts.length} shifts). SQLite, no Redis. The baseline is a bare \`node:http\` server sending the same`,
      `JSON body. 10 connections; three rounds alternating baseline and Muster, each run a 1 s warm-up then ${RUN_SECONDS} s; medians;`,
      'latencies in ms.',
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`), org view body', a.baseline, 1),
      row(`Muster, \`GET /v1/orgs/:org_slug/on-call\` (${SCHEDULES} schedules)`, a.subject, a.ratio),
      row('baseline (`node:http`), shifts body', b.baseline, 1),
      row('Muster, `GET .../schedules/:schedule/shifts` (93 days)', b.subject, b.ratio),
      '',
      `Muster / baseline req/s per round: on-call ${rounds(a)}; shifts ${rounds(b)}.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- oncall\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    for (const b of baselines) await b.close();
    await muster.close();
  }
}
