import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { dispatchWorld, type DispatchWorld, type IncidentView } from '../../../test/world.js';

interface SignalView {
  Id: number;
  type: string;
  ticket_id: number | null;
}

describe('an alert opens an incident; linked signals reach its timeline', () => {
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

  const incidentCount = async (headers = w.as(w.owner)) => (await w.ok<{ total: number }>(headers, 'GET', `/v1/tickets?org_id=${w.orgId}`)).total;
  const alert = (fields: object = {}, headers = w.as(w.ann)) =>
    w.ok<SignalView>(headers, 'POST', '/v1/signals', { type: 'alert', note: 'Man down at pier 4\nconscious, bleeding', lat: 51.5, lng: -0.12, org_id: w.orgId, ...fields });

  test('an alert without ticket_id opens exactly one urgent incident from its note and position, in the same org and mode', async () => {
    const before = await incidentCount();
    const signal = await alert();
    assert.ok(signal.ticket_id, 'the signal is answered with its incident');
    assert.equal(await incidentCount(), before + 1);
    const incident = await w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${signal.ticket_id}`);
    assert.equal(incident.title, 'Man down at pier 4');
    assert.equal(incident.description, 'Man down at pier 4\nconscious, bleeding');
    assert.equal(incident.priority, 'urgent');
    assert.equal(incident.source, 'alert');
    assert.equal(incident.org_id, w.orgId);
    assert.equal(incident.livemode, true);
    assert.deepEqual([incident.lat, incident.lng], [51.5, -0.12]);
    const events = await w.timeline(w.as(w.owner), incident.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'signal']);
    assert.deepEqual(events[0]!.data, { title: 'Man down at pier 4', priority: 'urgent', source: 'alert' });
    assert.equal(events[1]!.data.signal_id, signal.Id);
    assert.equal(events[1]!.data.signal_type, 'alert');
    assert.equal(events[1]!.actor?.user_id, w.ann.id);
  });

  test('an alert without a position opens an incident without one', async () => {
    const signal = await alert({ lat: undefined, lng: undefined });
    const incident = await w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${signal.ticket_id}`);
    assert.deepEqual([incident.lat, incident.lng], [null, null]);
  });

  test('an alert with ticket_id links to that incident instead of opening one', async () => {
    const incident = await w.incident(w.as(w.owner));
    const before = await incidentCount();
    const signal = await alert({ ticket_id: incident.Id, note: 'Second caller: smoke now' });
    assert.equal(signal.ticket_id, incident.Id);
    assert.equal(await incidentCount(), before);
    const events = await w.timeline(w.as(w.owner), incident.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'signal']);
    assert.equal(events[1]!.data.note, 'Second caller: smoke now');
  });

  test('a capture, note or check-in with ticket_id is a signal event with its position and image; without one, nothing', async () => {
    const incident = await w.incident(w.as(w.owner));
    const image = 'http://muster.test/uploads/abc.jpg';
    await w.ok(w.as(w.ann), 'POST', '/v1/signals', { type: 'capture', image_url: image, lat: 1.5, lng: 2.5, accuracy: 4, ticket_id: incident.Id, org_id: w.orgId });
    await w.ok(w.as(w.ann), 'POST', '/v1/signals', { type: 'note', note: 'Door locked', ticket_id: incident.Id, org_id: w.orgId });
    await w.ok(w.as(w.ben), 'POST', '/v1/signals', { type: 'checkin', lat: 1.6, lng: 2.6, ticket_id: incident.Id, org_id: w.orgId });
    await w.ok(w.as(w.ben), 'POST', '/v1/signals', { type: 'note', note: 'unrelated', org_id: w.orgId });
    const events = (await w.timeline(w.as(w.owner), incident.Id)).filter((e) => e.type === 'signal');
    assert.deepEqual(
      events.map((e) => [e.data.signal_type, e.actor?.user_id]),
      [['capture', w.ann.id], ['note', w.ann.id], ['checkin', w.ben.id]],
    );
    assert.equal(events[0]!.data.image_url, image);
    assert.deepEqual([events[0]!.data.lat, events[0]!.data.lng, events[0]!.data.accuracy], [1.5, 2.5, 4]);
    assert.deepEqual([events[2]!.data.lat, events[2]!.data.lng], [1.6, 2.6]);
  });

  test('a test-mode alert opens a test-mode incident that live credentials never see', async () => {
    const liveBefore = await incidentCount();
    const signal = await alert({}, w.testKey);
    const incident = await w.ok<IncidentView>(w.testKey, 'GET', `/v1/tickets/${signal.ticket_id}`);
    assert.equal(incident.livemode, false);
    assert.equal((await w.call(w.as(w.owner), 'GET', `/v1/tickets/${signal.ticket_id}`)).statusCode, 404);
    assert.equal(await incidentCount(), liveBefore);
  });

  test("another org's incident cannot be linked (422), and nothing is opened", async () => {
    const theirs = await w.incident(w.as(w.stranger), { org_id: undefined });
    const before = await incidentCount();
    const res = await w.call(w.as(w.ann), 'POST', '/v1/signals', { type: 'alert', note: 'x', ticket_id: theirs.Id, org_id: w.orgId });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(await incidentCount(), before);
  });

  test('a replayed alert (same Idempotency-Key) opens no second incident', async () => {
    const before = await incidentCount();
    const payload = { type: 'alert', note: 'Replayed from the outbox', org_id: w.orgId };
    const headers = { ...w.as(w.ann), 'idempotency-key': 'alert-replay-1' };
    const first = await w.call(headers, 'POST', '/v1/signals', payload);
    const second = await w.call(headers, 'POST', '/v1/signals', payload);
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.json<SignalView>().ticket_id, first.json<SignalView>().ticket_id);
    assert.equal(await incidentCount(), before + 1);
  });

  test('concurrent alerts open one incident each, each with one created and one signal event', async () => {
    const before = await incidentCount();
    const signals = await Promise.all(Array.from({ length: 8 }, (_, i) => alert({ note: `Concurrent alert ${i}` })));
    const ids = new Set(signals.map((s) => s.ticket_id));
    assert.equal(ids.size, 8);
    assert.equal(await incidentCount(), before + 8);
    for (const s of signals) assert.deepEqual((await w.timeline(w.as(w.owner), s.ticket_id!)).map((e) => e.type), ['created', 'signal']);
  });

  test('the incident stream carries it: incident.created for an opened one, a timeline event for a linked one', async () => {
    const stream = await connectSse(port, '/v1/incidents/stream', w.as(w.ben));
    streams.push(stream);
    const opened = await alert({ note: 'Streamed alert' });
    await stream.waitForEvent('incident.created', (p) => p.Id === opened.ticket_id && p.source === 'alert');
    const linked = await alert({ note: 'Linked alert', ticket_id: opened.ticket_id });
    await stream.waitForEvent('incident.timeline', (p) => p.incident_id === opened.ticket_id && p.type === 'signal' && (p.data as { signal_id: number }).signal_id === linked.Id);
  });
});
