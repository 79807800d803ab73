import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { dispatchWorld, type DispatchWorld, type IncidentView, type TimelineView } from '../../../test/world.js';

describe('assignment, acknowledgement and progress', () => {
  let w: DispatchWorld;
  let port: number;
  const streams: SseClient[] = [];
  before(async () => {
    w = await dispatchWorld({ SSE_HEARTBEAT_MS: '50' });
    port = await listen(w.t);
  });
  after(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await w.close();
  });

  const assign = (id: number, userId: number | null, by = w.owner) => w.ok<IncidentView>(w.as(by), 'PATCH', `/v1/tickets/${id}`, { assignee_id: userId });
  const ack = (id: number, by = w.ann) => w.call(w.as(by), 'POST', `/v1/tickets/${id}/acknowledge`);
  const deliveries = (topic: string) =>
    w.t.ctx.db.selectFrom('outbox').select(['kind', 'recipient', 'status', 'user_id', 'payload']).where('topic', '=', topic).orderBy('id').execute();

  test('assigning queues the assignee a push and an email through the outbox; assigning oneself sends nothing', async () => {
    await w.t.ctx.db.deleteFrom('outbox').where('topic', '=', 'incident.assigned').execute();
    const incident = await w.incident(w.as(w.owner), { title: 'Tree on the line', priority: 'high' });
    await assign(incident.Id, w.ann.id);
    const rows = await deliveries('incident.assigned');
    assert.deepEqual(
      rows.map((r) => [r.kind, r.recipient, r.status, r.user_id]),
      [
        ['push', `user:${w.ann.id}`, 'pending', w.ann.id],
        ['email', w.ann.email, 'pending', w.ann.id],
      ],
    );
    assert.equal((JSON.parse(rows[0]!.payload) as { incident_id: number }).incident_id, incident.Id);
    assert.match((JSON.parse(rows[1]!.payload) as { subject: string }).subject, /Tree on the line/);
    await assign(incident.Id, w.owner.id);
    assert.equal((await deliveries('incident.assigned')).length, 2, 'self-assignment queues nothing');
    // Test mode: recorded as suppressed, never sent.
    const testIncident = await w.incident(w.testKey);
    await w.ok(w.testKey, 'PATCH', `/v1/tickets/${testIncident.Id}`, { assignee_id: w.ann.id });
    assert.deepEqual((await deliveries('incident.assigned')).slice(2).map((r) => r.status), ['suppressed', 'suppressed']);
  });

  test("the assignment email says when in the assignee's own zone, in words (no ISO timestamp)", async () => {
    await w.ok(w.as(w.ann), 'PATCH', '/v1/auth/me', { timezone: 'America/New_York' });
    const incident = await w.incident(w.as(w.owner), { title: 'Gas smell' });
    await assign(incident.Id, w.ann.id);
    const mail = (await deliveries('incident.assigned')).filter((r) => r.kind === 'email').pop()!;
    const text = (JSON.parse(mail.payload) as { text: string }).text;
    const now = w.t.clock.now();
    const words = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'America/New_York' }).formatToParts(now);
    const part = (type: string) => words.find((p) => p.type === type)!.value;
    const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'America/New_York' }).format(now);
    assert.ok(text.includes(`Assigned: ${part('weekday')} ${part('day')} ${part('month')} ${part('year')}, ${time} (America/New_York)`), text);
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T/, 'no raw ISO timestamp');
    await w.ok(w.as(w.ann), 'PATCH', '/v1/auth/me', { timezone: 'UTC' });
  });

  test("incident.assigned reaches the assignee's streams and the org's, not another org's", async () => {
    const annStream = await connectSse(port, '/v1/incidents/stream', w.as(w.ann));
    const benStream = await connectSse(port, '/v1/incidents/stream', w.as(w.ben));
    const strangerStream = await connectSse(port, '/v1/incidents/stream', w.as(w.stranger));
    streams.push(annStream, benStream, strangerStream);
    const incident = await w.incident(w.as(w.owner));
    await assign(incident.Id, w.ann.id);
    const frame = await annStream.waitForEvent('incident.assigned', (p) => p.Id === incident.Id);
    assert.equal((frame.data as { payload: IncidentView }).payload.assignee_id, w.ann.id);
    await benStream.waitForEvent('incident.assigned', (p) => p.Id === incident.Id);
    const seen = strangerStream.frames.length;
    await strangerStream.waitFor((f) => f.comment !== undefined && strangerStream.frames.indexOf(f) >= seen);
    assert.equal(strangerStream.events.filter((e) => e.type === 'incident.assigned').length, 0);
  });

  test('GET /v1/tickets?assignee_id=me and =<id> list the assigned incidents with their total', async () => {
    const mine = [await w.incident(w.as(w.owner)), await w.incident(w.as(w.owner))];
    for (const i of mine) await assign(i.Id, w.ben.id);
    await w.incident(w.as(w.owner));
    const resolved = await w.incident(w.as(w.owner));
    await assign(resolved.Id, w.ben.id);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${resolved.Id}`, { status: 'resolved' });
    const asBen = await w.ok<{ tickets: IncidentView[]; total: number }>(w.as(w.ben), 'GET', '/v1/tickets?assignee_id=me');
    assert.equal(asBen.total, 3);
    assert.deepEqual(asBen.tickets.map((i) => i.Id), [resolved.Id, mine[1]!.Id, mine[0]!.Id]);
    const open = await w.ok<{ tickets: IncidentView[]; total: number }>(w.as(w.owner), 'GET', `/v1/tickets?assignee_id=${w.ben.id}&status=open`);
    assert.deepEqual([open.total, open.tickets.map((i) => i.Id)], [2, [mine[1]!.Id, mine[0]!.Id]]);
    assert.equal((await w.call(w.as(w.ben), 'GET', '/v1/incidents?assignee_id=you')).statusCode, 422);
    assert.equal((await w.call(w.as(w.ben), 'GET', '/v1/incidents?assignee_id=99999999999')).statusCode, 422);
    assert.equal((await w.ok<{ total: number }>(w.testKey, 'GET', `/v1/tickets?assignee_id=${w.ben.id}`)).total, 0, 'the other mode');
  });

  test('acknowledge: the assignee or an admin; idempotent (the first time stays); open becomes in_progress', async () => {
    const incident = await w.incident(w.as(w.owner), { priority: 'urgent' });
    await assign(incident.Id, w.ann.id);
    assert.equal((await ack(incident.Id, w.ben)).statusCode, 403, 'another member');
    assert.equal((await ack(incident.Id, w.stranger)).statusCode, 404, 'another org');
    assert.equal((await w.call(w.testKey, 'POST', `/v1/tickets/${incident.Id}/acknowledge`)).statusCode, 404, 'the other mode');
    const first = await ack(incident.Id);
    assert.equal(first.statusCode, 200, first.body);
    const acked = first.json<IncidentView>();
    assert.equal(acked.acknowledged_by, w.ann.id);
    assert.equal(acked.acknowledged_at, w.t.clock.now().toISOString());
    assert.equal(acked.status, 'in_progress');
    w.t.clock.advance(60_000);
    const again = (await ack(incident.Id)).json<IncidentView>();
    assert.equal(again.acknowledged_at, acked.acknowledged_at, 'a second call keeps the first time');
    const byAdmin = (await ack(incident.Id, w.admin)).json<IncidentView>();
    assert.equal(byAdmin.acknowledged_by, w.ann.id);
    const types = (await w.timeline(w.as(w.owner), incident.Id)).map((e) => e.type);
    assert.deepEqual(types, ['created', 'assigned', 'acknowledged', 'status_changed']);
    // An admin may acknowledge an unassigned incident ("I have it").
    const other = await w.incident(w.as(w.owner));
    assert.equal((await ack(other.Id, w.admin)).json<IncidentView>().acknowledged_by, w.admin.id);
  });

  test('reassignment clears the acknowledgement', async () => {
    const incident = await w.incident(w.as(w.owner));
    await assign(incident.Id, w.ann.id);
    await ack(incident.Id);
    const moved = await assign(incident.Id, w.ben.id);
    assert.deepEqual([moved.acknowledged_at, moved.acknowledged_by], [null, null]);
    assert.equal((await ack(incident.Id, w.ann)).statusCode, 403, 'the former assignee no longer may');
    assert.equal((await ack(incident.Id, w.ben)).json<IncidentView>().acknowledged_by, w.ben.id);
  });

  test('concurrent acknowledgements write one acknowledged event', async () => {
    const incident = await w.incident(w.as(w.owner));
    await assign(incident.Id, w.ann.id);
    const answers = await Promise.all([...Array.from({ length: 6 }, () => ack(incident.Id)), ...Array.from({ length: 4 }, () => ack(incident.Id, w.admin))]);
    assert.ok(answers.every((r) => r.statusCode === 200));
    assert.equal(new Set(answers.map((r) => r.json<IncidentView>().acknowledged_at)).size, 1);
    const types = (await w.timeline(w.as(w.owner), incident.Id)).map((e) => e.type);
    assert.deepEqual(types, ['created', 'assigned', 'acknowledged', 'status_changed']);
  });

  test("progress: en route and on scene with the phone's position; by the assignee it also acknowledges", async () => {
    const incident = await w.incident(w.as(w.owner), { lat: 1, lng: 1 });
    await assign(incident.Id, w.ann.id);
    const progress = (state: string, body: object = {}, by = w.ann) => w.call(w.as(by), 'POST', `/v1/tickets/${incident.Id}/progress`, { state, ...body });
    assert.equal((await progress('en_route', {}, w.ben)).statusCode, 403);
    assert.equal((await progress('lost')).statusCode, 422);
    assert.equal((await progress('en_route', { lat: 91 })).statusCode, 422);
    const enRoute = await progress('en_route', { lat: 0.9, lng: 0.95, accuracy: 12 });
    assert.equal(enRoute.statusCode, 201, enRoute.body);
    assert.deepEqual(enRoute.json<TimelineView>().data, { lat: 0.9, lng: 0.95, accuracy: 12 });
    assert.equal((await progress('on_scene', { lat: 1, lng: 1 })).statusCode, 201);
    const events = await w.timeline(w.as(w.owner), incident.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'assigned', 'acknowledged', 'status_changed', 'en_route', 'on_scene']);
    assert.equal(events[4]!.actor?.user_id, w.ann.id);
    const now = await w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${incident.Id}`);
    assert.deepEqual([now.status, now.acknowledged_by], ['in_progress', w.ann.id]);
    // A replay from the phone's outbox (same Idempotency-Key) writes no second event.
    const headers = { ...w.as(w.ann), 'idempotency-key': 'progress-replay-1' };
    const payload = { state: 'on_scene' };
    await w.call(headers, 'POST', `/v1/tickets/${incident.Id}/progress`, payload);
    await w.call(headers, 'POST', `/v1/tickets/${incident.Id}/progress`, payload);
    assert.equal((await w.timeline(w.as(w.owner), incident.Id)).filter((e) => e.type === 'on_scene').length, 2);
  });

  test('the status page shows public replies and status changes, never internal replies or dispatch steps', async () => {
    const incident = await w.ok<IncidentView & { customer_token: string }>(w.as(w.owner), 'POST', '/v1/tickets', { title: 'Outage', org_id: w.orgId });
    await assign(incident.Id, w.ann.id);
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${incident.Id}/replies`, { body: 'Internal: bring the ladder' });
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${incident.Id}/replies`, { body: 'Crew on the way', public: true });
    await ack(incident.Id);
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${incident.Id}/progress`, { state: 'on_scene', lat: 1, lng: 2 });
    await w.ok(w.as(w.ann), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' });
    const page = await w.ok<{ replies: { body: string }[]; status_changes: { from: string; to: string }[] }>({}, 'GET', `/v1/incidents/status/${incident.customer_token}`);
    assert.deepEqual(page.replies.map((r) => r.body), ['Crew on the way']);
    assert.deepEqual(page.status_changes.map((c) => [c.from, c.to]), [['open', 'in_progress'], ['in_progress', 'resolved']]);
    const html = (await w.call({}, 'GET', `/incidents/status/${incident.customer_token}`)).body;
    assert.match(html, /Status: Resolved/);
    assert.doesNotMatch(html, /ladder|on_scene|On scene|acknowledged/i);
  });
});
