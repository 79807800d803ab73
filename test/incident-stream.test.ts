import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp, type Headers } from './helpers.js';
import { createKey, setPlan, signUp, type TestUser } from './factories.js';
import { connectSse, eventOf, listen, until, within, type SseClient, StreamSet } from './sse-client.js';

interface IncidentView {
  Id: number;
  org_id: number;
  livemode: boolean;
  title: string;
  status: string;
  priority: string;
}

async function createIncident(t: TestApp, headers: Headers, payload: Record<string, unknown>, url = '/v1/incidents'): Promise<IncidentView> {
  const res = await t.app.inject({ method: 'POST', url, headers, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<IncidentView>();
}

const createdWith = (id: number) => (p: Record<string, unknown>) => p.Id === id;

describe('GET /v1/incidents/stream', () => {
  let t: TestApp;
  let port: number;
  let root: TestUser;
  const streams = new StreamSet(() => port, '/v1/incidents/stream');

  before(async () => {
    t = await buildTestApp({ SSE_HEARTBEAT_MS: '50' });
    root = await signUp(t.app); // the first user: instance admin
    port = await listen(t);
  });
  after(async () => {
    await streams.closeAll();
    await t.close();
  });

  const stream = (headers: Headers, path?: string) => streams.accepted(headers, path);

  test('answers an event stream whose first event names the caller’s orgs, sorted, without an id', async () => {
    // The user's personal org is made after the shared one, so sorting is visible.
    await setPlan(t.app, root.cookie, root.id, 'agency');
    const created = await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: { cookie: root.cookie }, payload: { name: 'Shared ops' } });
    assert.equal(created.statusCode, 201, created.body);
    const shared = created.json<{ id: number; slug: string }>();
    const user = await signUp(t.app);
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${shared.slug}/members`, headers: { cookie: root.cookie }, payload: { email: user.email } });
    assert.equal(added.statusCode, 201, added.body);
    const orgIds = (await t.app.inject({ url: '/v1/orgs', headers: { cookie: user.cookie } })).json<{ orgs: { id: number }[] }>().orgs.map((o) => o.id);
    assert.equal(orgIds.length, 2);
    const sorted = [...orgIds].sort((a, b) => a - b);
    assert.equal(sorted[0], shared.id);

    const client = await stream({ cookie: user.cookie });
    assert.equal(client.status, 200);
    assert.match(String(client.res.headers['content-type']), /^text\/event-stream/);
    assert.equal(client.res.headers['cache-control'], 'no-cache, no-transform');
    assert.equal(client.res.headers['x-accel-buffering'], 'no');

    await client.waitFor((f) => f.data !== undefined);
    const first = client.frames.find((f) => f.data !== undefined)!;
    assert.equal(client.frames.indexOf(first), 0, 'nothing comes before the connected event');
    assert.deepEqual(first.data, { type: 'connected', org_ids: sorted });
    // Its id is the stream's position (issue #32): a client that drops before any event resumes from it.
    assert.ok(first.id !== undefined && first.id > 0, 'the connected event carries the stream’s position');
    assert.match(first.raw, /^id: \d+$/m);

    const keyed = await stream({ 'x-api-key': (await createKey(t.app, user.cookie, 'test')).key });
    assert.deepEqual((await keyed.waitFor((f) => f.data !== undefined)).data, { type: 'connected', org_ids: sorted });
  });

  test('answers 401 JSON without a credential or with a bad one', async () => {
    for (const path of ['/v1/incidents/stream', '/v1/tickets/stream']) {
      for (const headers of [{}, { 'x-api-key': `sk_live_${'A'.repeat(43)}` }, { cookie: 'muster_session=nope' }] as Headers[]) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
        assert.equal(res.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(await res.json(), { error: 'Unauthorized', code: 'unauthorized' });
      }
    }
  });

  test('incident.created, incident.updated and incident.reply arrive as {type, payload} with an id', async () => {
    const user = await signUp(t.app);
    const client = await stream({ cookie: user.cookie });
    const headers = { cookie: user.cookie };

    const incident = await createIncident(t, headers, { title: 'Pump 3 offline', priority: 'normal' });
    const created = await client.waitForEvent('incident.created', createdWith(incident.Id));
    const payload = eventOf(created)!.payload as IncidentView;
    assert.equal(payload.Id, incident.Id);
    assert.equal(payload.title, 'Pump 3 offline');
    assert.equal(payload.status, 'open');
    assert.deepEqual(Object.keys(created.data as object).sort(), ['payload', 'type']);

    const patch = async (body: Record<string, unknown>) => {
      const res = await t.app.inject({ method: 'PATCH', url: `/v1/incidents/${incident.Id}`, headers, payload: body });
      assert.equal(res.statusCode, 200, res.body);
    };
    await patch({ status: 'in_progress' });
    const statusChanged = await client.waitForEvent('incident.updated', (p) => p.Id === incident.Id && p.status === 'in_progress');
    await patch({ priority: 'urgent' });
    const priorityChanged = await client.waitForEvent('incident.updated', (p) => p.Id === incident.Id && p.priority === 'urgent');
    assert.equal((eventOf(priorityChanged)!.payload as IncidentView).status, 'in_progress');

    const res = await t.app.inject({ method: 'POST', url: `/v1/incidents/${incident.Id}/replies`, headers, payload: { body: 'Crew on site' } });
    assert.equal(res.statusCode, 201, res.body);
    const reply = await client.waitForEvent('incident.reply', (p) => p.incident_id === incident.Id);
    const replyPayload = eventOf(reply)!.payload as { incident_id: number; body: string };
    assert.equal(replyPayload.body, 'Crew on site');

    const ids = [created, statusChanged, priorityChanged, reply].map((f) => f.id);
    for (const id of ids) assert.ok(Number.isSafeInteger(id) && id! > 0, `event id ${id}`);
    assert.deepEqual([...ids].sort((a, b) => a! - b!), ids, 'ids grow in publish order');
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual(
      client.events.map((e) => e.type),
      // Each change is followed by its timeline event (src/modules/dispatch/timeline.test.ts; recorded by src/modules/incidents/timeline.ts).
      ['connected', 'incident.created', 'incident.timeline', 'incident.updated', 'incident.timeline', 'incident.updated', 'incident.timeline', 'incident.reply', 'incident.timeline'],
    );
  });

  test('the same stream is served at /v1/tickets/stream', async () => {
    const user = await signUp(t.app);
    const key = await createKey(t.app, user.cookie, 'live');
    const tickets = await stream({ 'x-api-key': key.key }, '/v1/tickets/stream');
    assert.match(String(tickets.res.headers['content-type']), /^text\/event-stream/);
    assert.equal(tickets.res.headers['cache-control'], 'no-cache, no-transform');
    assert.equal(tickets.res.headers['x-accel-buffering'], 'no');
    const incidents = await stream({ cookie: user.cookie });
    assert.equal(eventOf(await tickets.waitFor((f) => f.data !== undefined))!.type, 'connected');

    const viaTickets = await createIncident(t, { 'x-api-key': key.key }, { title: 'Via tickets' }, '/v1/tickets');
    const viaIncidents = await createIncident(t, { cookie: user.cookie }, { title: 'Via incidents' });
    for (const client of [tickets, incidents]) {
      await client.waitForEvent('incident.created', createdWith(viaTickets.Id));
      await client.waitForEvent('incident.created', createdWith(viaIncidents.Id));
    }
  });

  test("a user of another org never receives this org's events", async () => {
    const a = await signUp(t.app);
    const b = await signUp(t.app);
    const streamA = await stream({ cookie: a.cookie });
    const streamB = await stream({ cookie: b.cookie });

    const secret = await createIncident(t, { cookie: a.cookie }, { title: 'A only' });
    await streamA.waitForEvent('incident.created', createdWith(secret.Id));
    const marker = await createIncident(t, { cookie: b.cookie }, { title: 'B marker' });
    await streamB.waitForEvent('incident.created', createdWith(marker.Id));
    const laterA = await createIncident(t, { cookie: a.cookie }, { title: 'A later' });
    await streamA.waitForEvent('incident.created', createdWith(laterA.Id));

    // Every event but `connected` names its incident: `Id` on the incident, `incident_id` on a timeline event.
    const seen = (c: SseClient) => [
      ...new Set(c.events.flatMap((e) => (e.type === 'connected' ? [] : [(e.payload as { Id?: number; incident_id?: number }).Id ?? (e.payload as { incident_id: number }).incident_id]))),
    ];
    assert.deepEqual(seen(streamB), [marker.Id], "B's stream carried only B's event");
    assert.deepEqual(seen(streamA), [secret.Id, laterA.Id], "A's stream carried only A's events");
    assert.ok(!streamB.events[0]!.org_ids!.includes(secret.org_id));
  });

  test('a test-key stream carries only test-mode incidents; live streams never carry them', async () => {
    const user = await signUp(t.app);
    const live = await createKey(t.app, user.cookie, 'live');
    const testKey = await createKey(t.app, user.cookie, 'test');
    const testStream = await stream({ 'x-api-key': testKey.key });
    const liveKeyStream = await stream({ 'x-api-key': live.key });
    const cookieStream = await stream({ cookie: user.cookie });

    const l1 = await createIncident(t, { 'x-api-key': live.key }, { title: 'live by key' });
    const t1 = await createIncident(t, { 'x-api-key': testKey.key }, { title: 'test one' });
    const l2 = await createIncident(t, { cookie: user.cookie }, { title: 'live by cookie' });
    const t2 = await createIncident(t, { 'x-api-key': testKey.key }, { title: 'test two' });
    const l3 = await createIncident(t, { cookie: user.cookie }, { title: 'live last' });
    assert.equal(t1.livemode, false);
    assert.equal(l1.livemode, true);

    // Events leave in publish order, so once the last one of a mode has arrived, an earlier one of the other mode would have too.
    await testStream.waitForEvent('incident.created', createdWith(t2.Id));
    for (const c of [liveKeyStream, cookieStream]) await c.waitForEvent('incident.created', createdWith(l3.Id));

    const created = (c: SseClient) => c.events.filter((e) => e.type === 'incident.created').map((e) => (e.payload as IncidentView).Id);
    assert.deepEqual(created(testStream), [t1.Id, t2.Id]);
    assert.deepEqual(created(liveKeyStream), [l1.Id, l2.Id, l3.Id]);
    assert.deepEqual(created(cookieStream), [l1.Id, l2.Id, l3.Id]);
    for (const e of testStream.events.filter((x) => x.type === 'incident.created')) assert.equal((e.payload as IncidentView).livemode, false);
  });

  test('a client reconnecting with Last-Event-ID receives exactly what it missed, then live events', async () => {
    const user = await signUp(t.app);
    const headers = { cookie: user.cookie };
    const first = await stream(headers);
    const x1 = await createIncident(t, headers, { title: 'before the gap' });
    const seen = await first.waitForEvent('incident.created', createdWith(x1.Id));
    const lastId = seen.id;
    assert.ok(lastId !== undefined && lastId > 0);
    await first.close();

    const x2 = await createIncident(t, headers, { title: 'missed one' });
    const x3 = await createIncident(t, headers, { title: 'missed two' });

    const second = await stream({ ...headers, 'last-event-id': String(lastId) });
    await second.waitForEvent('incident.created', createdWith(x3.Id));
    const x4 = await createIncident(t, headers, { title: 'after reconnecting' });
    await second.waitForEvent('incident.created', createdWith(x4.Id));

    const summary = (c: SseClient) =>
      c.frames.filter((f) => f.data !== undefined && eventOf(f)!.type !== 'incident.timeline').map((f) => [eventOf(f)!.type, (eventOf(f)!.payload as IncidentView | undefined)?.Id]);
    assert.deepEqual(summary(second), [
      ['connected', undefined],
      ['incident.created', x2.Id],
      ['incident.created', x3.Id],
      ['incident.created', x4.Id],
    ]);
    assert.equal(second.frames[0]!.id, lastId, 'a resumed stream’s connected frame carries the id it resumes from');
    const ids = second.frames.filter((f) => f.id !== undefined && eventOf(f)?.type !== 'connected').map((f) => f.id!);
    assert.ok(ids.every((id) => id > lastId));
    assert.deepEqual([...ids].sort((a, b) => a - b), ids);

    // The same through the query string, for clients that cannot set headers.
    const viaQuery = await stream(headers, `/v1/incidents/stream?last_event_id=${lastId}`);
    await viaQuery.waitForEvent('incident.created', createdWith(x4.Id));
    assert.deepEqual(summary(viaQuery), summary(second));
  });

  test('sends heartbeat comments', async () => {
    const user = await signUp(t.app);
    const client = await stream({ cookie: user.cookie });
    const beat = await client.waitFor((f) => f.comment !== undefined, 2000);
    assert.equal(beat.comment, 'heartbeat');
    assert.match(beat.raw, /^:/);
    assert.equal(beat.data, undefined);
    assert.equal(beat.id, undefined);
  });
});

describe('a client that stops reading', () => {
  const MAX = 65_536;
  let t: TestApp;
  let port: number;
  let socket: net.Socket | undefined;
  let reader: SseClient | undefined;

  before(async () => {
    t = await buildTestApp({ SSE_MAX_BUFFER_BYTES: String(MAX), SSE_HEARTBEAT_MS: '60000' });
    port = await listen(t);
  });
  after(async () => {
    socket?.destroy();
    await reader?.close();
    await t.close();
  });

  test('is dropped once its unflushed bytes pass SSE_MAX_BUFFER_BYTES; memory stays bounded and readers keep going', async (tt) => {
    const user = await signUp(t.app);
    const hub = t.ctx.events.hub;
    reader = await connectSse(port, '/v1/incidents/stream', { cookie: user.cookie });
    assert.equal(reader.status, 200);

    const stalled = net.connect({ port, host: '127.0.0.1' });
    socket = stalled;
    stalled.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      stalled.once('connect', resolve);
      stalled.once('error', reject);
    });
    stalled.pause(); // never read: no 'data' listener, ever
    stalled.write(`GET /v1/incidents/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nCookie: ${user.cookie}\r\n\r\n`);
    await until(() => hub.stats().subscribers === 2, 'both streams subscribed');

    const description = 'x'.repeat(16_000);
    const created: number[] = [];
    for (let i = 0; i < 2000 && hub.stats().dropped === 0; i++) {
      created.push((await createIncident(t, { cookie: user.cookie }, { title: `Flood ${i}`, description })).Id);
    }
    const stats = hub.stats();
    tt.diagnostic(`dropped after ${created.length} incidents; maxBufferedSeen ${stats.maxBufferedSeen} bytes`);
    assert.equal(stats.dropped, 1, `the stalled client was dropped (after ${created.length} incidents)`);
    assert.equal(stats.subscribers, 1, 'only the reading client is left');
    assert.ok(stats.maxBufferedSeen > MAX, 'it did get past the limit before being dropped');
    assert.ok(stats.maxBufferedSeen <= MAX + 4 * 20_000, `maxBufferedSeen ${stats.maxBufferedSeen} stays near ${MAX}`);

    // The reading client is still connected and got every event, in order.
    await reader.waitForEvent('incident.created', createdWith(created.at(-1)!), 15_000);
    assert.equal(reader.isOpen, true);
    assert.deepEqual(
      reader.events.filter((e) => e.type === 'incident.created').map((e) => (e.payload as IncidentView).Id),
      created,
    );
    const afterDrop = await createIncident(t, { cookie: user.cookie }, { title: 'After the drop' });
    await reader.waitForEvent('incident.created', createdWith(afterDrop.Id));
    assert.equal(hub.stats().dropped, 1);

    await reader.close();
    await until(() => hub.stats().subscribers === 0, 'no subscriber left once the reader has gone');
  });
});

describe('closing the app', () => {
  test('ends open streams instead of hanging', async () => {
    const t = await buildTestApp({ SSE_HEARTBEAT_MS: '50' });
    let client: SseClient | undefined;
    try {
      const port = await listen(t);
      const user = await signUp(t.app);
      client = await connectSse(port, '/v1/incidents/stream', { cookie: user.cookie });
      const open = client;
      await open.waitFor((f) => f.data !== undefined);
      assert.equal(t.ctx.events.hub.stats().subscribers, 1);

      await within(t.app.close(), 5000, 'app.close()');
      await within(open.ended, 5000, 'the stream ending');
      assert.equal(open.isOpen, false);
      assert.equal(t.ctx.events.hub.stats().subscribers, 0);
    } finally {
      await client?.close();
      await t.close();
    }
  });
});
