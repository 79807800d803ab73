import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { dropTestSchema, testSchemaName } from '../helpers.js';
import { startReceiver, type Receiver } from '../peers.js';
import { connectSse, eventOf, type SseClient } from '../sse-client.js';
import { call, clusterEnv, newUser, ok, startInstance, until, type ClusterUser, type Instance } from './instances.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

// Scale-out as operators run it: two server processes (A and B) on different ports, one
// PostgreSQL schema, one Redis that this test starts itself (so it can stop and restart it).
// Every check below talks to the instances over HTTP only, the way a load balancer would.

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

describe('two instances on one PostgreSQL and one Redis', () => {
  let redis: RedisServer;
  let receiver: Receiver;
  let db: pg.Client;
  const schema = testSchemaName('c');
  let env: Record<string, string>;
  let a: Instance;
  let b: Instance;
  const streams: SseClient[] = [];
  let ann: ClusterUser;
  let bob: ClusterUser;

  before(async () => {
    redis = await startRedisServer();
    receiver = await startReceiver();
    env = clusterEnv(DATABASE_URL, schema, redis, {
      MUSTER_ALLOW_PRIVATE_WEBHOOKS: 'true',
      OUTBOX_POLL_MS: '50',
      SLA_SWEEP_INTERVAL_MS: '200',
      BEACON_SWEEP_INTERVAL_MS: '200',
      SSE_HEARTBEAT_MS: '1000',
    });
    // One after the other: the first creates the schema and migrates it.
    a = await startInstance('a', env);
    b = await startInstance('b', env);
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    ann = await newUser(a, b, 'Ann');
    bob = await newUser(b, a, 'Bob');
  });

  after(async () => {
    for (const s of streams) await s.close();
    await a?.stop();
    await b?.stop();
    await db?.end();
    await receiver?.close();
    await redis?.clean();
    await redis?.stop();
    await dropTestSchema(schema);
  });

  const open = async (at: Instance, path: string, headers: Record<string, string>) => {
    const s = await connectSse(at.port, path, headers);
    assert.equal(s.status, 200);
    streams.push(s);
    await s.waitForEvent('connected');
    return s;
  };
  const createIncident = (at: Instance, user: ClusterUser, title: string, mode: 'live' | 'test' = 'live') =>
    ok<{ Id: number }>(201, at, 'POST', '/v1/incidents', user[mode], { title });
  const beacon = (at: Instance, user: ClusterUser, device: string, mode: 'live' | 'test' = 'live', lat = 52) =>
    call(at, 'POST', '/v1/signals', user[mode], { type: 'beacon', lat, lng: 4, meta: { device_id: device } });
  const auditOf = async (at: Instance, user: ClusterUser, mode: 'live' | 'test' = 'live') =>
    (await ok<{ entries: { action: string; device_id: string | null }[] }>(200, at, 'GET', `/v1/audit?org_id=${user.org}&limit=200`, user[mode])).entries;
  // Each incident change is followed by its timeline event (incident_id, no Id): left out here.
  const typesOf = (s: SseClient) => s.events.filter((e) => e.type !== 'connected' && e.type !== 'incident.timeline');

  test('a beacon posted to A reaches a stream held on B; an incident created on B reaches a stream on A; org and mode stay apart', async () => {
    const annSignalsOnB = await open(b, '/v1/signals/stream', ann.live);
    const annTestSignalsOnB = await open(b, '/v1/signals/stream', ann.test);
    const bobSignalsOnB = await open(b, '/v1/signals/stream', bob.live);
    const annIncidentsOnA = await open(a, '/v1/incidents/stream', ann.live);
    const bobIncidentsOnA = await open(a, '/v1/incidents/stream', bob.live);

    assert.equal((await beacon(a, ann, 'ann-phone', 'live', 52.5)).status, 201);
    await annSignalsOnB.waitForEvent('signal.beacon', (p) => p.user_id === ann.id && p.lat === 52.5);
    const incident = await createIncident(b, ann, 'Pump 3 offline');
    await annIncidentsOnA.waitForEvent('incident.created', (p) => p.Id === incident.Id);

    // Markers: once each of these arrived, anything misrouted would have arrived before it.
    assert.equal((await beacon(a, ann, 'ann-test-phone', 'test', 10)).status, 201);
    await annTestSignalsOnB.waitForEvent('signal.beacon', (p) => p.lat === 10);
    assert.equal((await beacon(a, bob, 'bob-phone', 'live', 11)).status, 201);
    await bobSignalsOnB.waitForEvent('signal.beacon', (p) => p.lat === 11);
    const bobs = await createIncident(b, bob, 'Bob’s own');
    await bobIncidentsOnA.waitForEvent('incident.created', (p) => p.Id === bobs.Id);

    assert.deepEqual(
      typesOf(annTestSignalsOnB).map((e) => (e.payload as { lat: number }).lat),
      [10],
      'test mode sees only test-mode beacons',
    );
    assert.deepEqual(
      typesOf(bobSignalsOnB).map((e) => (e.payload as { user_id: number }).user_id),
      [bob.id],
      'another org sees nothing of Ann’s',
    );
    assert.deepEqual(
      typesOf(annSignalsOnB).map((e) => (e.payload as { lat: number }).lat),
      [52.5],
    );
    assert.deepEqual(
      typesOf(annIncidentsOnA).map((e) => (e.payload as { Id: number }).Id),
      [incident.Id],
    );
    assert.deepEqual(
      typesOf(bobIncidentsOnA).map((e) => (e.payload as { Id: number }).Id),
      [bobs.Id],
    );
  });

  test('a client dropped from A resumes on B with Last-Event-ID and misses nothing, even on a B that just started', async () => {
    const first = await open(a, '/v1/incidents/stream', ann.live);
    const e1 = await createIncident(a, ann, 'before the drop');
    const lastSeen = (await first.waitForEvent('incident.created', (p) => p.Id === e1.Id)).id!;
    await first.close(); // dropped

    // B restarts while the client is away: nothing it holds in memory can help the client.
    await b.stop();
    const missed = [await createIncident(a, ann, 'missed 1'), await createIncident(a, ann, 'missed 2')];
    b = await startInstance('b', env);
    missed.push(await createIncident(b, ann, 'missed 3'));

    const resumed = await open(b, '/v1/incidents/stream', { ...ann.live, 'last-event-id': String(lastSeen) });
    const live = await createIncident(a, ann, 'after the resume');
    await resumed.waitForEvent('incident.created', (p) => p.Id === live.Id);
    const got = resumed.frames.filter((f) => eventOf(f)?.type === 'incident.created');
    assert.deepEqual(
      got.map((f) => (eventOf(f)!.payload as { Id: number }).Id),
      [...missed.map((m) => m.Id), live.Id],
      'each missed event once, in order, then the live one',
    );
    const ids = got.map((f) => f.id!);
    assert.ok(ids[0]! > lastSeen && ids.every((id, i) => i === 0 || id > ids[i - 1]!), 'ids grow across both instances');
  });

  test('100 concurrent bookings of one slot, split across A and B, make exactly one booking', async () => {
    const host = ann;
    const et = await ok<{ id: number; slug: string }>(201, a, 'POST', '/v1/event-types', host.live, {
      name: 'Site visit',
      slug: 'site-visit',
      duration_minutes: 30,
      availability: { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) },
    });
    const date = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const slots = await ok<{ slots: { start_time: string }[] }>(200, b, 'GET', `/v1/slots/${host.slug}/${et.slug}?date=${date}`);
    const start_time = slots.slots[0]!.start_time;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(i % 2 === 0 ? a : b, 'POST', `/v1/book/${host.slug}/${et.slug}`, {}, { start_time, attendee_name: `Guest ${i}`, attendee_email: `guest-${i}-${process.pid}@example.com` }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `one 201 (${[...new Set(statuses)].join(', ')})`);
    assert.equal(statuses.filter((s) => s === 409).length, 99, 'the rest are refused as taken');
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from "${schema}".bookings where event_type_id = $1 and status <> 'cancelled'`, [et.id]);
    assert.equal(rows[0]?.n, 1);
  });

  test('200 queued deliveries with both workers running arrive exactly once each', async () => {
    receiver.requests.length = 0;
    // A slow receiver keeps batches in flight, so both workers claim while the other sends.
    receiver.respond = () => (res) => setTimeout(() => res.writeHead(200).end('ok'), 20);
    const et = await ok<{ id: number }>(201, b, 'POST', '/v1/event-types', ann.live, {
      name: 'Hooked',
      slug: 'hooked',
      duration_minutes: 30,
      webhook_url: `${receiver.origin}/hooks`,
    });
    const now = new Date().toISOString();
    const values: string[] = [];
    const params: unknown[] = [];
    for (let i = 0; i < 200; i++) {
      params.push(JSON.stringify({ event_type_id: et.id, body: { type: 'test.delivery', n: i } }));
      values.push(`('webhook', 'booking.created', ${ann.org}, ${ann.id}, 1, '${receiver.origin}/hooks', $${params.length}, 'pending', 0, '${now}', '${now}', '${now}')`);
    }
    // One statement, so both workers find all 200 due at once.
    await db.query(
      `insert into "${schema}".outbox (kind, topic, org_id, user_id, livemode, recipient, payload, status, attempts, next_attempt_at, created_at, updated_at) values ${values.join(', ')}`,
      params,
    );
    await until(() => receiver.requests.length >= 200, '200 webhooks', 30_000);
    // Until every row is settled (no longer pending or being sent): a duplicate could only come from a row
    // claimed twice, and each claimed row is sent before it settles, so after this none can arrive.
    const unsettled = async () =>
      (await db.query<{ n: number }>(`select count(*)::int as n from "${schema}".outbox where recipient = $1 and status in ('pending', 'sending')`, [`${receiver.origin}/hooks`])).rows[0]?.n ?? 0;
    await until(async () => (await unsettled()) === 0, 'every delivery settled', 30_000);
    const ids = receiver.requests.map((r) => String(r.headers['webhook-id']));
    assert.equal(ids.length, 200, 'no delivery twice');
    assert.equal(new Set(ids).size, 200);
    const bodies = receiver.requests.map((r) => (JSON.parse(r.text) as { n: number }).n).sort((x, y) => x - y);
    assert.deepEqual(
      bodies,
      Array.from({ length: 200 }, (_, i) => i),
    );
    const { rows } = await db.query(`select status, attempts, count(*)::int as n from "${schema}".outbox where recipient = $1 group by status, attempts`, [`${receiver.origin}/hooks`]);
    assert.deepEqual(rows, [{ status: 'sent', attempts: 1, n: 200 }]);
  });

  test('one beacon_on per device run although its pings alternate between A and B', async () => {
    const pings = await Promise.all(Array.from({ length: 40 }, (_, i) => beacon(i % 2 === 0 ? a : b, ann, 'alternating', 'live', i)));
    assert.deepEqual([...new Set(pings.map((p) => p.status))], [201]);
    const runOf = async () => (await auditOf(b, ann)).filter((e) => e.device_id === 'alternating').map((e) => e.action);
    assert.deepEqual(await runOf(), ['beacon_on']);

    assert.equal((await call(b, 'DELETE', '/v1/signals/beacon', ann.live, { device_id: 'alternating' })).status, 200);
    await Promise.all([call(a, 'DELETE', '/v1/signals/beacon', ann.live, { device_id: 'alternating' }), call(b, 'DELETE', '/v1/signals/beacon', ann.live, { device_id: 'alternating' })]);
    await Promise.all(Array.from({ length: 10 }, (_, i) => beacon(i % 2 === 0 ? b : a, ann, 'alternating', 'live', i)));
    assert.deepEqual(await runOf(), ['beacon_on', 'beacon_off', 'beacon_on'], 'a new run after the stop, one of each');

    const shown = await ok<{ beacons: { device_id: string }[] }>(200, a, 'GET', '/v1/signals/beacons', ann.live);
    assert.ok(shown.beacons.some((x) => x.device_id === 'alternating'), 'A lists the device that B turned on');
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from "${schema}".beacon_states`);
    assert.equal(rows[0]?.n, 0, 'the device state lives in Redis, not in the database');
  });

  test('Redis stopped and restarted mid-test: requests keep succeeding and streams resume', async () => {
    const onA = await open(a, '/v1/incidents/stream', ann.live);
    const onB = await open(b, '/v1/incidents/stream', ann.live);

    await redis.stop();
    for (const at of [a, b]) {
      await until(async () => (await ok<{ redis: string }>(200, at, 'GET', '/readyz')).redis === 'down', `${at.name} reports redis down`);
    }
    const during = await createIncident(a, ann, 'during the outage');
    await createIncident(b, ann, 'during the outage, on B');
    assert.equal((await beacon(b, ann, 'outage-phone')).status, 201);
    assert.equal((await call(a, 'GET', '/v1/incidents', ann.live)).status, 200);
    await onA.waitForEvent('incident.created', (p) => p.Id === during.Id);

    await redis.start();
    for (const at of [a, b]) {
      await until(async () => (await ok<{ redis: string }>(200, at, 'GET', '/readyz')).redis === 'ok', `${at.name} reports redis ok`, 20_000);
    }
    // Streams resume: an incident created on B reaches the stream on A, and one from A reaches B.
    const fromB: number[] = [];
    await until(
      async () => {
        fromB.push((await createIncident(b, ann, 'after the outage')).Id);
        await new Promise((r) => setTimeout(r, 100));
        return onA.events.some((e) => e.type === 'incident.created' && fromB.includes((e.payload as { Id: number }).Id));
      },
      'an event from B on A after the outage',
      20_000,
    );
    const fromA = await createIncident(a, ann, 'after the outage, from A');
    await onB.waitForEvent('incident.created', (p) => p.Id === fromA.Id, 10_000);
    assert.ok(onA.isOpen && onB.isOpen, 'the streams stayed open through the outage');
  });
});
