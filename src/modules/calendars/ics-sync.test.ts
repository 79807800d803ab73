import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { hostWeekIcs, vcalendar, vevent } from '../../../test/calendar-fixtures.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createEventType, startReceiver, type Receiver } from '../../../test/peers.js';
import { syncDueCalendars } from './sync.service.js';

interface Cal {
  id: number;
  status: string;
  error: string | null;
  warning: string | null;
  busy_count: number;
  last_synced_at: string | null;
  failing_since: string | null;
}

// A host in New York whose Berlin-zoned feed (hostWeekIcs) is served over real HTTP by a local server.
describe('ICS feeds as busy time (a feed served over HTTP on 127.0.0.1)', () => {
  let t: TestApp;
  let feed: Receiver;
  let host: TestUser;
  let key: Headers;
  let ics = hostWeekIcs('W. Europe Standard Time');
  let etag = '"v1"';
  let cal: Cal;

  before(async () => {
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', CALENDAR_TIMEOUT_MS: '2000', CALENDAR_MAX_BYTES: '65536' });
    t.clock.set('2026-03-10T12:00:00.000Z');
    feed = await startReceiver();
    host = await signUp(t.app, { name: 'Nora York', timezone: 'America/New_York' });
    key = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    await createEventType(t.app, key, { name: 'Visit', slug: 'visit', duration_minutes: 60 });
    await createEventType(t.app, key, { name: 'Buffered', slug: 'buffered', duration_minutes: 60, buffer_before_minutes: 30 });
  });
  after(async () => {
    await t.close();
    await feed.close();
  });
  beforeEach(() => {
    feed.requests.length = 0;
    feed.respond = (r) => (r.headers['if-none-match'] === etag ? { status: 304 } : { status: 200, headers: { 'content-type': 'text/calendar', etag }, body: ics });
  });

  const slots = async (day: string, et = 'visit') => {
    const res = await t.app.inject({ url: `/v1/slots/${host.slug}/${et}?date=${day}` });
    assert.equal(res.statusCode, 200, res.body);
    return body<{ slots: { start_time: string }[] }>(res).slots.map((s) => s.start_time.slice(11, 16));
  };
  const sync = async (id = cal.id) => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/calendars/${id}/sync`, headers: key });
    assert.equal(res.statusCode, 200, res.body);
    return body<Cal>(res);
  };
  const book = (start: string, et = 'visit') => t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/${et}`, payload: { attendee_name: 'Ann', attendee_email: 'ann@example.com', start_time: start } });

  test('connecting a feed reads it at once and answers the connection without secrets', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: key, payload: { kind: 'ics', url: `${feed.origin}/private/basic.ics`, name: 'Work' } });
    assert.equal(res.statusCode, 201, res.body);
    cal = body<Cal>(res);
    assert.equal(cal.status, 'ok');
    assert.equal(cal.busy_count, 5);
    assert.equal(feed.requests.length, 1);
    assert.equal(feed.requests[0]!.method, 'GET');
    const list = body<{ calendars: Cal[] }>(await t.app.inject({ url: '/v1/calendars', headers: key }));
    assert.deepEqual(list.calendars.map((c) => c.id), [cal.id]);
    assert.ok(!('secret' in list.calendars[0]!) && !('password' in list.calendars[0]!));
  });

  test('busy time removes slots like a booking: DST-correct, all-day in the host zone, buffers apply', async () => {
    assert.ok(!(await slots('2026-03-16')).includes('09:00'), '10:00 CET');
    assert.ok((await slots('2026-03-16')).includes('08:00'));
    assert.ok((await slots('2026-03-16')).includes('10:00'));
    assert.ok(!(await slots('2026-03-30')).includes('08:00'), '10:00 CEST after the change');
    assert.ok((await slots('2026-03-30')).includes('09:00'));
    assert.ok((await slots('2026-03-23')).includes('09:00'), 'EXDATE frees the day');
    assert.ok((await slots('2026-04-06')).includes('08:00'), 'the moved occurrence left Monday');
    assert.ok(!(await slots('2026-04-07')).includes('12:00'), 'and blocks Tuesday 14:00 Berlin');
    assert.ok((await slots('2026-04-13')).includes('08:00'), 'the cancelled occurrence blocks nothing');
    assert.ok((await slots('2026-03-17')).includes('12:00'), 'TRANSPARENT blocks nothing');
    assert.ok((await slots('2026-03-18')).includes('09:00'), "Muster's own event is ignored");
    const holiday = await slots('2026-03-20');
    assert.ok(holiday.includes('03:00') && !holiday.includes('04:00') && !holiday.includes('23:00'), 'the New York day, 04:00Z to 04:00Z');
    // The buffered type needs 30 free minutes before: 10:00 touches the 09:00-10:00 event.
    assert.ok(!(await slots('2026-03-16', 'buffered')).includes('10:00'));
    assert.ok((await slots('2026-03-16', 'buffered')).includes('11:00'));
    assert.equal((await book('2026-03-16T09:00:00.000Z')).statusCode, 409);
    assert.equal((await book('2026-03-16T10:00:00.000Z', 'buffered')).statusCode, 409);
  });

  test('an unchanged feed costs one conditional request (If-None-Match) and keeps its intervals', async () => {
    const after = await sync();
    assert.equal(feed.requests.length, 1);
    assert.equal(feed.requests[0]!.headers['if-none-match'], etag);
    assert.equal(after.status, 'ok');
    assert.equal(after.busy_count, 5);
  });

  test('a slot freed in the calendar becomes bookable after the next sync', async () => {
    assert.equal((await book('2026-04-20T08:00:00.000Z')).statusCode, 409);
    ics = vcalendar(vevent({ UID: 'other@example.com', DTSTART: '20260317T150000Z', DTEND: '20260317T160000Z' }));
    etag = '"v2"';
    const after = await sync();
    assert.equal(after.busy_count, 1);
    assert.equal((await book('2026-04-20T08:00:00.000Z')).statusCode, 201);
    assert.ok(!(await slots('2026-03-17')).includes('15:00'));
  });

  test('a booking never waits for a calendar server that hangs; the sync then fails and keeps the last good data', async () => {
    let held: http.ServerResponse | undefined;
    feed.respond = () => (res) => void (held = res);
    let syncDone = false;
    const syncing = t.app.inject({ method: 'POST', url: `/v1/calendars/${cal.id}/sync`, headers: key }).then((r) => ((syncDone = true), r));
    while (feed.requests.length === 0) await new Promise((r) => setImmediate(r));
    const booked = await book('2026-04-21T08:00:00.000Z');
    assert.equal(booked.statusCode, 201, booked.body);
    assert.equal(syncDone, false, 'the booking was answered while the calendar server still held the sync');
    const res = await syncing;
    held?.destroy();
    const c = body<Cal>(res);
    assert.equal(c.status, 'error');
    assert.match(c.error ?? '', /timed out/);
    assert.equal(c.busy_count, 1);
    assert.ok(!(await slots('2026-03-17')).includes('15:00'), 'the last good busy time still counts');
  });

  test('a malformed feed, an HTTP error, a redirect loop and an oversized answer are error statuses, never a crash', async () => {
    for (const [respond, reason] of [
      [() => ({ status: 200, body: '<html>Please sign in</html>' }), /iCalendar|parse|invalid/i],
      [() => ({ status: 404, body: 'nope' }), /HTTP 404/],
      [(r: { path: string }) => ({ status: 302, headers: { location: `${r.path}x` } }), /too many redirects/],
      [() => ({ status: 200, body: 'X'.repeat(70_000) }), /too large/],
    ] as const) {
      feed.respond = respond;
      const c = await sync();
      assert.equal(c.status, 'error');
      assert.match(c.error ?? '', reason);
      assert.equal(c.busy_count, 1, 'the last good intervals stay');
    }
    assert.equal((await t.app.inject({ url: '/health' })).statusCode < 500, true);
  });

  test("a server that refuses the connection 'could not be reached': never the socket's error, address or port (issue #31, F11)", async () => {
    const closed = await startReceiver();
    await closed.close();
    const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: key, payload: { kind: 'ics', url: `${closed.origin}/gone.ics` } });
    assert.equal(res.statusCode, 201, res.body);
    const c = body<Cal>(res);
    assert.equal(c.error, 'the calendar server could not be reached');
    await t.app.inject({ method: 'DELETE', url: `/v1/calendars/${c.id}`, headers: key });
  });

  test('after 24 hours of failure the connection carries a warning; a good sync clears it', async () => {
    feed.respond = () => ({ status: 500 });
    const first = await sync();
    assert.equal(first.warning, null);
    t.clock.advance(25 * 3_600_000);
    const later = body<Cal>(await t.app.inject({ url: `/v1/calendars/${cal.id}`, headers: key }));
    assert.match(later.warning ?? '', /could not be read/);
    feed.respond = () => ({ status: 200, headers: { etag: '"v3"' }, body: ics });
    const ok = await sync();
    assert.equal(ok.status, 'ok');
    assert.equal(ok.warning, null);
    assert.equal(ok.failing_since, null);
    t.clock.set('2026-03-10T12:00:00.000Z');
  });

  test('the background job syncs connections not read within the interval, once', async () => {
    t.clock.set('2026-03-12T12:00:00.000Z'); // past the last sync (made a simulated day later) by the interval
    assert.equal(await syncDueCalendars(t.ctx), 1);
    assert.equal(feed.requests.length, 1);
    assert.equal(await syncDueCalendars(t.ctx), 0);
    t.clock.set('2026-03-10T12:00:00.000Z');
  });

  test('PATCH changes the address or credentials and reads the calendar at once; bad changes are 422s', async () => {
    const patch = (payload: object) => t.app.inject({ method: 'PATCH', url: `/v1/calendars/${cal.id}`, headers: key, payload });
    const bad = await patch({ password: 'secret' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(body<{ details: { field: string }[] }>(bad).details.map((d) => d.field), ['username']);
    assert.equal((await patch({ url: 'https://[bad' })).statusCode, 422);
    assert.equal((await patch({ url: 'ftp://x/y.ics' })).statusCode, 422);
    feed.requests.length = 0;
    const moved = await patch({ url: `${feed.origin}/moved.ics`, username: 'nora', password: 'app-password' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([body<Cal>(moved).status, body<Cal>(moved).busy_count], ['ok', 1]);
    assert.equal(feed.requests.length, 1, 'read at once, in full (no If-None-Match after a new address)');
    assert.equal(feed.requests[0]!.path, '/moved.ics');
    assert.equal(feed.requests[0]!.headers['if-none-match'], undefined);
    assert.equal(feed.requests[0]!.headers.authorization, `Basic ${Buffer.from('nora:app-password').toString('base64')}`);
    const row = await t.ctx.db.selectFrom('calendar_connections').select(['secret']).where('id', '=', cal.id).executeTakeFirstOrThrow();
    assert.ok(row.secret !== null && !row.secret.includes('app-password'), 'stored encrypted');
  });

  test('busy times for the week view, validation, refusals and deletion', async () => {
    const week = await t.app.inject({ url: '/v1/calendars/busy?from=2026-03-16T00:00:00Z&to=2026-03-23T00:00:00Z', headers: key });
    assert.equal(week.statusCode, 200, week.body);
    assert.deepEqual(body<{ busy: { start_time: string }[] }>(week).busy.map((b) => b.start_time), ['2026-03-17T15:00:00.000Z']);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: key, payload: { kind: 'exchange', url: 'ftp://x' } });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(body<{ details: { field: string }[] }>(bad).details.map((d) => d.field).sort(), ['kind', 'url']);
    const pick = await t.app.inject({ method: 'PATCH', url: `/v1/calendars/${cal.id}`, headers: key, payload: { write_calendar: 'http://x/' } });
    assert.equal(pick.statusCode, 422);
    assert.equal((await t.app.inject({ url: '/v1/calendars' })).statusCode, 401);
    const other = await signUp(t.app, { name: 'Other' });
    const otherKey = { 'x-api-key': (await createKey(t.app, other.cookie, 'live')).key };
    for (const [method, url] of [['GET', `/v1/calendars/${cal.id}`], ['POST', `/v1/calendars/${cal.id}/sync`], ['DELETE', `/v1/calendars/${cal.id}`]] as const) {
      assert.equal((await t.app.inject({ method, url, headers: otherKey })).statusCode, 404);
    }
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/calendars/${cal.id}`, headers: key });
    assert.deepEqual(body(del), { id: cal.id, deleted: true });
    assert.ok((await slots('2026-03-17')).includes('15:00'), 'its busy time went with it');
  });
});

describe('without MUSTER_ALLOW_PRIVATE_WEBHOOKS a feed on a private address is refused', () => {
  test('the connection is created with an error status, the server is never asked, and the error names no address (issue #31, F11)', async () => {
    const t = await buildTestApp();
    const feed = await startReceiver();
    try {
      const host = await signUp(t.app, { name: 'Pat' });
      // An address literal, and a name that resolves to one: the error never shows what it resolved to.
      for (const url of [`${feed.origin}/a.ics`, `http://localhost:${feed.port}/b.ics`]) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: { cookie: host.cookie }, payload: { kind: 'ics', url } });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(body<Cal>(res).status, 'error');
        assert.equal(body<Cal>(res).error, 'refused: not a public address');
      }
      assert.equal(feed.requests.length, 0);
    } finally {
      await t.close();
      await feed.close();
    }
  });
});
