// GET /v1/tickets/:id/responders for an incident whose org has 10,000 active, recently seen
// devices (one per member), against a bare node:http server answering the same bytes: on SQLite
// alone (the devices in memory) and on PostgreSQL with Redis (the devices in Redis, issue #40).
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';
import { iso } from '../src/lib/clock.js';
import { bothTable, costRows, CPU_NOTE, pgRedis, prime, startPgRedisMuster, type PgRedis } from './pg-redis.js';
import { interleave, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type MusterServer, type Server } from './lib.js';

const NAME = 'responders';
const DEVICES = sized(10_000, 1_000);
const LIMIT = 20;

/** Device i's position: a deterministic scatter (a low-discrepancy sequence) over about 50 x 50 km around the incident, so every run measures the same map. */
const spot = (i: number) => ({ lat: 52.37 + (((i * 0.618034) % 1) - 0.5) * 0.45, lng: 4.89 + (((i * 0.754878) % 1) - 0.5) * 0.75 });

/** Members of the org, one per device (direct inserts: registering 10,000 accounts through Argon2 would take minutes); their ids in device order. */
async function seedMembers(db: Kysely<DB>, orgId: number, n: number): Promise<number[]> {
  const now = iso(new Date());
  const ids: number[] = [];
  for (let start = 0; start < n; start += 500) {
    const batch = Array.from({ length: Math.min(500, n - start) }, (_, i) => start + i);
    const users = await db
      .insertInto('users')
      .values(batch.map((i) => ({ email: `responder-${i}@bench.test`, password_hash: null, name: `Responder ${i}`, slug: `responder-${i}`, plan: 'free' as const, timezone: 'UTC', phone: null, is_admin: 0 as const, created_at: now, updated_at: now })))
      .returning('id')
      .execute();
    await db.insertInto('memberships').values(users.map((u) => ({ org_id: orgId, user_id: u.id, role: 'member' as const, is_primary: 0 as const, created_at: now }))).execute();
    ids.push(...users.map((u) => u.id));
  }
  return ids;
}

/**
 * An incident at the centre of the scatter, DEVICES members with one beaconing device each: on SQLite as
 * beacon_states rows (loaded into memory by a restart, as a restarted server would), on Redis through the
 * store's own pings. Returns the server to measure and the request's path.
 */
async function world(m: MusterServer): Promise<{ muster: MusterServer; key: string; url: string }> {
  const key = await liveKey(m.app);
  const created = await m.app.inject({ method: 'POST', url: '/v1/tickets', headers: { 'x-api-key': key }, payload: { title: 'Bench incident', priority: 'urgent', lat: 52.37, lng: 4.89 } });
  if (created.statusCode !== 201) throw new Error(`POST /v1/tickets: ${created.statusCode} ${created.body}`);
  const incident = created.json<{ Id: number; org_id: number }>();
  const users = await seedMembers(m.ctx.db, incident.org_id, DEVICES);
  const now = iso(new Date());
  const url = `/v1/tickets/${incident.Id}/responders?limit=${LIMIT}`;
  if (m.ctx.beacons.kind === 'redis') {
    for (let start = 0; start < users.length; start += 500) {
      const pings = users.slice(start, start + 500).map((userId, k) => {
        const i = start + k;
        return m.ctx.beacons.recordPing(m.ctx.db, { mode: 'live', userId, deviceKey: `dev-${i}` }, { orgId: incident.org_id, deviceId: `dev-${i}`, ...spot(i), accuracy: 10, meta: '{}', positionAt: now, now });
      });
      await Promise.all(pings);
    }
    return { muster: m, key, url };
  }
  for (let start = 0; start < users.length; start += 500) {
    const rows = users.slice(start, start + 500).map((userId, k) => {
      const i = start + k;
      return { livemode: 1 as const, user_id: userId, device_key: `dev-${i}`, device_id: `dev-${i}`, org_id: incident.org_id, active: 1 as const, ...spot(i), accuracy: 10, meta: '{}', position_at: now, last_seen_at: now };
    });
    await m.ctx.db.insertInto('beacon_states').values(rows).execute();
  }
  // Without Redis the active devices live in memory, loaded from beacon_states when the context is created.
  return { muster: await m.restart(), key, url };
}

/** The distances of the answer, checked: LIMIT responders. */
async function distances(m: MusterServer, url: string, key: string): Promise<{ body: object; metres: number[] }> {
  const res = await m.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  const answer = res.json<{ responders: { distance_m: number }[] }>();
  if (res.statusCode !== 200 || answer.responders.length !== LIMIT) throw new Error(`GET ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return { body: answer, metres: answer.responders.map((r) => r.distance_m) };
}

export async function run(): Promise<BenchResult> {
  let muster: MusterServer | undefined;
  let pgr: PgRedis | undefined;
  let pgMuster: MusterServer | undefined;
  let baseline: Server | undefined;
  try {
    const lite = await world(await startMuster());
    muster = lite.muster;
    pgr = await pgRedis(NAME);
    const pg = await world(await startPgRedisMuster(pgr));
    pgMuster = pg.muster;
    const answer = await distances(lite.muster, lite.url, lite.key);
    const pgAnswer = await distances(pg.muster, pg.url, pg.key);
    if (pgAnswer.metres.join() !== answer.metres.join()) throw new Error(`the two configurations differ: ${answer.metres.join()} / ${pgAnswer.metres.join()}`);
    baseline = await startBaseline(answer.body);
    const sides = [
      { url: `${lite.muster.url}${lite.url}`, headers: { 'x-api-key': lite.key }, seconds: RUN_SECONDS },
      { url: `${pg.muster.url}${pg.url}`, headers: { 'x-api-key': pg.key }, seconds: RUN_SECONDS, otherCpuMs: pgr.backendCpuMs, wire: true },
    ];
    // The PostgreSQL side's pool and path warmed before its first load (a quick run: one round of ten, CI's time).
    await prime(sides[1]!, sized(3, 1));
    const both = await interleave({ url: baseline.url, seconds: RUN_SECONDS }, sides);
    const n = DEVICES.toLocaleString('en-US');
    const markdown = [
      `## GET /v1/tickets/:id/responders with ${n} active devices in the org`,
      '',
      `Measured: the nearest ${LIMIT} responders of an incident whose org has ${n} members, each with an active,`,
      'recently seen device scattered over about 50 x 50 km. Per request Muster checks the caller and the incident, reads the',
      'active devices of the org and mode seen within the beacon timeout inside a bounding box around the incident (5 km,',
      "growing fourfold until it holds twice the limit), keeps each member's nearest device with its haversine distance in the",
      `same pass, sorts, then confirms membership and counts open assignments for the ${LIMIT} picked only (two small queries).`,
      "On SQLite alone the devices are in memory: the box is a scan of the org's devices, no query. On PostgreSQL with Redis",
      "they are in Redis: per box one `GEOSEARCH` of the org's geo set, then one pipelined `HMGET` per device inside",
      '(docs/dispatch.md, "Nearest responders"); the two queries go to PostgreSQL. The baseline is a bare `node:http` server',
      `sending the same JSON body. 10 connections; two configurations in the same ${ROUNDS_TEXT}; each run a 1 s warm-up then`,
      `${RUN_SECONDS} s; medians; latencies in ms. Each throughput is against the mean of the baseline runs around its round.`,
      '',
      ...bothTable(both),
      '',
      CPU_NOTE,
      '',
      `Both configurations answer the same ${LIMIT} responders: nearest at ${answer.metres[0]} m, ${LIMIT}th at ${answer.metres[LIMIT - 1]} m.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- responders\`.`,
    ].join('\n');
    return { name: NAME, markdown, costs: costRows(`GET /v1/tickets/:id/responders (${n} devices)`, both) };
  } finally {
    await baseline?.close();
    await muster?.close();
    await pgMuster?.close();
    await pgr?.drop();
  }
}
