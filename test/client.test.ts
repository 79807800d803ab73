import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createMusterClient, streamEvents, type components, type IncidentStreamEvent, type MusterClient } from '../clients/typescript/index.js';
import { buildTestApp, type TestApp } from './helpers.js';
import { listen, within } from './sse-client.js';

/**
 * The generated client (clients/typescript) against a real server: every call below is typed
 * from the API description, so this file failing to type-check means the client and the code
 * parted ways.
 */
describe('TypeScript client', () => {
  let t: TestApp;
  let baseUrl: string;
  let muster: MusterClient;
  before(async () => {
    t = await buildTestApp();
    baseUrl = `http://127.0.0.1:${await listen(t)}`;
    const anonymous = createMusterClient({ baseUrl });
    const registered = await anonymous.POST('/v1/users', { body: { email: 'client@example.com', password: 'correct horse battery', name: 'Client User' } });
    assert.equal(registered.response.status, 201);
    const login = await anonymous.POST('/v1/auth/login', { body: { email: 'client@example.com', password: 'correct horse battery' } });
    assert.ok(login.data, 'logged in');
    const cookie = login.response.headers.get('set-cookie')!.split(';')[0]!;
    const key = await createMusterClient({ baseUrl, headers: { cookie, origin: t.ctx.config.publicUrl } }).POST('/v1/api-keys', { body: { name: 'client test', mode: 'live' } });
    assert.ok(key.data, `key created: ${JSON.stringify(key.error)}`);
    muster = createMusterClient({ baseUrl, apiKey: key.data.key });
  });
  after(() => t.close());

  test('creates an incident and reads it back', async () => {
    const created = await muster.POST('/v1/incidents', { body: { title: 'Gas leak on Main St', priority: 'urgent' } });
    assert.ok(created.data, JSON.stringify(created.error));
    assert.equal(created.response.status, 201);
    const got = await muster.GET('/v1/incidents/{id}', { params: { path: { id: created.data.Id } } });
    assert.equal(got.data?.title, 'Gas leak on Main St');
    assert.equal(got.data?.priority, 'urgent');
  });

  test('answers typed errors', async () => {
    const missing = await muster.GET('/v1/incidents/{id}', { params: { path: { id: 999_999 } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.code, 'not_found');
    // @ts-expect-error: the client knows `title` is required
    const invalid = await muster.POST('/v1/incidents', { body: { priority: 'low' } });
    assert.equal(invalid.response.status, 422);
    assert.equal(invalid.error?.code, 'validation_failed');
  });

  test('streams incident events', async () => {
    const controller = new AbortController();
    const opened = await muster.GET('/v1/incidents/stream', { parseAs: 'stream', signal: controller.signal });
    assert.equal(opened.response.status, 200);
    assert.match(opened.response.headers.get('content-type') ?? '', /text\/event-stream/);
    const events = streamEvents<IncidentStreamEvent>(opened.data!);
    try {
      const first = await within(events.next(), 5000, 'the connected event');
      assert.equal(first.value?.type, 'connected');
      const created = await muster.POST('/v1/tickets', { body: { title: 'Streamed through the client' } });
      assert.ok(created.data);
      const next = await within(events.next(), 5000, 'the incident.created event');
      const event = next.value;
      assert.ok(event && event.type === 'incident.created', `got ${JSON.stringify(event)}`);
      // Narrowed by `type`: the payload is an Incident.
      assert.equal(event.payload.Id, created.data.Id);
      assert.equal(event.payload.title, 'Streamed through the client');
      // The creation's timeline entry follows; the description names `incident.timeline`, so a
      // generated client has its type (narrowed: the payload is a TimelineEvent).
      const timeline = (await within(events.next(), 5000, 'the incident.timeline event')).value;
      assert.ok(timeline && timeline.type === 'incident.timeline', `got ${JSON.stringify(timeline)}`);
      const entry: components['schemas']['TimelineEvent'] = timeline.payload;
      assert.equal(entry.type, 'created');
      assert.equal(entry.incident_id, created.data.Id);
    } finally {
      controller.abort();
      await events.return(undefined).catch(() => undefined);
    }
  });

  test('lists without limit or page: both are optional, their defaults applied', async () => {
    // `GET('/v1/bookings')` with no query at all has to compile: openapi-fetch refused it while the
    // description marked `limit` and `page` required (issue #32).
    const bookings = await muster.GET('/v1/bookings');
    assert.equal(bookings.response.status, 200);
    assert.deepEqual([bookings.data?.limit, bookings.data?.page], [50, 1]);
    const tickets = await muster.GET('/v1/tickets', { params: { query: { status: 'open' } } });
    assert.deepEqual([tickets.data?.limit, tickets.data?.page], [50, 1]);
    const signals = await muster.GET('/v1/signals', { params: { query: { limit: 5 } } });
    assert.deepEqual([signals.data?.limit, signals.data?.page], [5, 1]);
  });

  test('books a slot', async () => {
    const eventType = await muster.POST('/v1/event-types', { body: { name: 'Site visit', duration_minutes: 30 } });
    assert.ok(eventType.data, JSON.stringify(eventType.error));
    // The test clock stands on Monday 2026-01-05 at noon UTC; default hours are weekdays 09:00-17:00.
    const availability = await muster.GET('/v1/availability', { params: { query: { event_type_id: eventType.data.id, date: '2026-01-06' } } });
    const slot = availability.data?.slots[0];
    assert.ok(slot, 'a slot is open');
    const booked = await muster.POST('/v1/bookings', {
      body: { event_type_id: eventType.data.id, attendee_name: 'Ana Field', attendee_email: 'ana@example.com', start_time: slot.start_time },
    });
    assert.ok(booked.data, JSON.stringify(booked.error));
    assert.equal(booked.data.status, 'confirmed');
    assert.equal(booked.data.start_time, slot.start_time);
    const again = await muster.POST('/v1/bookings', {
      body: { event_type_id: eventType.data.id, attendee_name: 'Bo Late', attendee_email: 'bo@example.com', start_time: slot.start_time },
    });
    assert.equal(again.response.status, 409);
    assert.equal(again.error?.code, 'slot_unavailable');
  });
});
