// GET /v1/tickets/:id/responders for an incident whose org has 10,000 active, recently seen
// devices (one per member), against a bare node:http server answering the same bytes.
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';
import { iso } from '../src/lib/clock.js';
import { compare, liveKey, machine, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type LoadFigures, type Server } from './lib.js';

const NAME = 'responders';
const SECONDS = RUN_SECONDS;
const DEVICES = sized(10_000, 1_000);

const ms = (n: number) => n.toFixed(2);
const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const row = (label: string, f: LoadFigures, ratio: number) =>
  `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;

/** Members with one beaconing device each, scattered over about 50 x 50 km around the incident (direct inserts: registering 10,000 accounts through Argon2 would take minutes). */

async function seed(db: Kysely<DB>, orgId: number, n: number): Promise<void> {
  const now = iso(new Date());
  for (let start = 0; start < n; start += 500) {
    const batch = Array.from({ length: Math.min(500, n - start) }, (_, i) => start + i);
    const users = await db
      .insertInto('users')
      .values(batch.map((i) => ({ email: `responder-${i}@bench.test`, password_hash: null, name: `Responder ${i}`, slug: `responder-${i}`, plan: 'free' as const, timezone: 'UTC', phone: null, is_admin: 0 as const, created_at: now, updated_at: now })))
      .returning('id')
      .execute();
    await db.insertInto('memberships').values(users.map((u) => ({ org_id: orgId, user_id: u.id, role: 'member' as const, is_primary: 0 as const, created_at: now }))).execute();
    await db
      .insertInto('beacon_states')
      .values(
        users.map((u, k) => {
          // A deterministic scatter (a low-discrepancy sequence), so every run measures the same map.
          const i = start + k;
          return { livemode: 1 as const, user_id: u.id, device_key: `dev-${i}`, device_id: `dev-${i}`, org_id: orgId, active: 1 as const, lat: 52.37 + (((i * 0.618034) % 1) - 0.5) * 0.45, lng: 4.89 + (((i * 0.754878) % 1) - 0.5) * 0.75, accuracy: 10, meta: '{}', position_at: now, last_seen_at: now };
        }),
      )
      .execute();
  }
}

export async function run(): Promise<BenchResult> {
  // Limits at the configuration's maximum: the load is 10 connections on one key.
  let muster = await startMuster();
  let baseline: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    const headers = { 'x-api-key': key };
    const created = await muster.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title: 'Bench incident', priority: 'urgent', lat: 52.37, lng: 4.89 } });
    if (created.statusCode !== 201) throw new Error(`POST /v1/tickets: ${created.statusCode} ${created.body}`);
    const incident = created.json<{ Id: number; org_id: number }>();
    await seed(muster.ctx.db, incident.org_id, DEVICES);
    // Without Redis the active devices live in memory, loaded from beacon_states when the context
    // is created: a restart after the seed loads them, as a restarted server would.
    muster = await muster.restart();
    const url = `/v1/tickets/${incident.Id}/responders?limit=20`;
    const first = await muster.app.inject({ method: 'GET', url, headers });
    const answer = first.json<{ responders: { distance_m: number }[] }>();
    if (first.statusCode !== 200 || answer.responders.length !== 20) throw new Error(`GET ${url}: ${first.statusCode} ${first.body.slice(0, 200)}`);
    baseline = await startBaseline(answer);

    const c = await compare({ url: baseline.url, seconds: SECONDS }, { url: `${muster.url}${url}`, headers, seconds: SECONDS });
    const rounds = c.rounds.map((r) => `${rps(r.subject)} / ${rps(r.baseline)}`).join(', ');
    const markdown = [
      `## GET /v1/tickets/:id/responders with ${DEVICES.toLocaleString('en-US')} active devices in the org`,
      '',
      `Measured: the nearest 20 responders of an incident whose org has ${DEVICES.toLocaleString('en-US')} members, each with an active,`,
      'recently seen device scattered over about 50 x 50 km. Per request Muster checks the caller and the incident, reads the',
      "active devices of the org and mode seen within the beacon timeout inside a bounding box around the incident (5 km,",
      'growing fourfold until it holds twice the limit; a scan of the org\'s devices in memory, no query), keeps each',
      "member's nearest device with its haversine distance in the same pass, sorts, then confirms membership and counts open",
      'assignments for the 20 picked only (two small queries). SQLite, no Redis. The',
      `baseline is a bare \`node:http\` server sending the same JSON body. 10 connections; three rounds alternating baseline and`,
      `Muster, each run a 1 s warm-up then ${SECONDS} s; medians; latencies in ms.`,
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`)', c.baseline, 1),
      row('Muster', c.subject, c.ratio),
      '',
      `Muster / baseline req/s per round: ${rounds}. Nearest responder at ${answer.responders[0]!.distance_m} m, 20th at`,
      `${answer.responders[19]!.distance_m} m.`,
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- responders\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await baseline?.close();
    await muster.close();
  }
}
