// Beacon ingest with the position observers watching (issue #38): 10,000 active devices and tracks
// on, against the same server with tracks off and a bare node:http baseline, in one run. The sites
// module (another part of #38) is not in this build: no sites are loaded, and that is said below.
import os from 'node:os';
import { sql } from 'kysely';
import { compare, liveKey, machine, ROUNDS_TEXT, RUN_SECONDS, sized, startBaseline, startMuster, type BenchResult, type Comparison, type LoadFigures, type MusterServer, type Server } from './lib.js';

const NAME = 'beacons-watch';
/** Active devices in the beacon store while the load runs (seeded, then loaded by a restart). */
const DEVICES = sized(10_000, 10_000);
/** The goal: tracks cost at most this share of the throughput. */
const GOAL_COST = 0.15;
const CONN = '[conn]';
const beacon = { type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: `watch-load-${CONN}` } };

const rps = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => n.toFixed(2);
const row = (label: string, f: LoadFigures, ratio: number) => `| ${label} | ${rps(f.requestsPerSec)} | ${ms(f.p50)} | ${ms(f.p95)} | ${ms(f.p99)} | ${(ratio * 100).toFixed(1)} % |`;

export async function run(): Promise<BenchResult> {
  let muster: MusterServer = await startMuster();
  let baseline: Server | undefined;
  try {
    const key = await liveKey(muster.app);
    const headers = { 'x-api-key': key };
    const first = await muster.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { ...beacon, meta: { device_id: 'watch-setup' } } });
    if (first.statusCode !== 201) throw new Error(`POST /v1/signals: ${first.statusCode} ${first.body}`);
    const created = first.json<{ org_id: number; user_id: number }>();

    // 10,000 active devices of the org, written as the store writes them, then loaded by a restart.
    const now = new Date().toISOString();
    for (let i = 0; i < DEVICES; i += 500) {
      const rows = Array.from({ length: Math.min(500, DEVICES - i) }, (_, k) => ({
        livemode: 1 as const,
        user_id: created.user_id,
        device_key: `watch-${i + k}`,
        device_id: `watch-${i + k}`,
        org_id: created.org_id,
        active: 1 as const,
        lat: 52 + (i + k) / 100_000,
        lng: 4.9,
        accuracy: 10,
        meta: '{}',
        position_at: now,
        last_seen_at: now,
      }));
      await muster.ctx.db.insertInto('beacon_states').values(rows).execute();
    }
    muster = await muster.restart();
    const active = (await muster.ctx.beacons.active(muster.ctx.db, { orgIds: [created.org_id], mode: 'live' })).length;
    if (active < DEVICES) throw new Error(`${active} active devices loaded, expected ${DEVICES}`);

    baseline = await startBaseline(created, 201);
    const post = { method: 'POST' as const, body: beacon, connectionPlaceholder: CONN, seconds: RUN_SECONDS };
    const base = { ...post, url: `${baseline.url}/v1/signals` };
    const subject = { ...post, url: `${muster.url}/v1/signals`, headers };

    process.stderr.write('  POST /v1/signals, tracks off...\n');
    const off: Comparison = await compare(base, subject);

    const orgs = (await muster.app.inject({ url: '/v1/orgs', headers })).json<{ orgs: { id: number; slug: string }[] }>().orgs;
    const slug = orgs.find((o) => o.id === created.org_id)!.slug;
    const patched = await muster.app.inject({ method: 'PATCH', url: `/v1/orgs/${slug}`, headers, payload: { retention: { tracks_days: 30 } } });
    if (patched.statusCode !== 200) throw new Error(`PATCH tracks_days: ${patched.statusCode} ${patched.body}`);
    process.stderr.write('  POST /v1/signals, tracks on...\n');
    const on: Comparison = await compare(base, subject);
    await muster.ctx.tracks.flush();
    const stored = Number((await sql<{ n: number }>`select count(*) as n from position_tracks`.execute(muster.ctx.db)).rows[0]?.n ?? 0);
    // Every beacon answered with tracks on is in the track (warm-ups included).
    if (stored < on.completed.subject) throw new Error(`${stored} positions stored for ${on.completed.subject} beacons answered with tracks on`);

    // From each side's ratio to the baseline runs around it: the shared machine's drift between the two comparisons cancels out.
    const cost = 1 - on.ratio / off.ratio;
    const met = cost <= GOAL_COST;
    const markdown = [
      '## Beacon ingest with 10,000 active devices and tracks',
      '',
      `Measured: \`POST /v1/signals\` beacons with a live API key (10 connections, each its own device) while the beacon store holds`,
      `${DEVICES.toLocaleString('en-US')} active devices of the org (seeded, then loaded by a restart), first with tracks off, then with the org's`,
      '`retention.tracks_days` set (every accepted position goes to the tracks observer and is written in batches, one multi-row',
      `insert per flush interval). The baseline is a bare \`node:http\` server answering the same 201. ${ROUNDS_TEXT} per comparison,`,
      `each run a 1 s warm-up then ${RUN_SECONDS} s; medians; latencies in ms. Sites (another part of issue #38) are not in this build: none are loaded.`,
      '',
      '| Server | req/s | p50 | p95 | p99 | Throughput vs baseline |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      row('baseline (`node:http`)', off.baseline, 1),
      row('Muster, tracks off', off.subject, off.ratio),
      row('Muster, tracks on', on.subject, on.ratio),
      '',
      `Checked: ${stored.toLocaleString('en-US')} positions in the track for ${on.completed.subject.toLocaleString('en-US')} beacons answered with tracks on (the flush wrote every one).`,
      '',
      `Goal (from the issue): tracks cost at most ${GOAL_COST * 100} % of the throughput. Measured: ${(cost * 100).toFixed(1)} %, **${met ? 'met' : 'not met'}**.`,
      'The cost is 1 - (tracks on / baseline) / (tracks off / baseline), each ratio against the baseline runs on either side of it, so',
      "drift of the shared machine between the two comparisons cancels out; the absolute req/s move a lot between runs on it.",
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- beacons-watch\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    await baseline?.close();
    await muster.close();
  }
}
