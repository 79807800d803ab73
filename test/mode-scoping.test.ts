// Issue #31, F3: calendar connections, their busy time, the private feed and push subscriptions
// belong to the mode of the credential that made them (docs/api.md, "Mode scoping of every
// resource"). A test key sees and changes only test-mode ones; live alerts reach only live
// subscriptions; a live booking is written back only to a live calendar.
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, beforeEach, describe, test } from 'node:test';
import { vcalendar, vevent } from './calendar-fixtures.js';
import { createKey, signUp, type TestUser } from './factories.js';
import { body, buildTestApp, type TestApp, type Headers } from './helpers.js';
import { browserKeys, createEventType, selfSignedCert, startReceiver, type Receiver } from './peers.js';
import { processDue } from '../src/modules/deliveries/worker.js';
import { createSenders } from '../src/jobs/outbox-senders.js';

interface Cal {
  id: number;
  name: string;
  livemode: boolean;
  status: string;
}

describe('mode scoping of user-owned resources (calendars, push, the private feed)', () => {
  let t: TestApp;
  let feeds: Receiver;
  let pushService: Receiver;
  let senders: ReturnType<typeof createSenders>;
  let owner: TestUser;
  let live: Headers;
  let testKey: Headers;
  let liveCal: Cal;
  let testCal: Cal;

  before(async () => {
    const tls = selfSignedCert();
    pushService = await startReceiver({ tls });
    pushService.respond = () => ({ status: 201 });
    feeds = await startReceiver();
    // The live calendar is busy 10:00-11:00 UTC on 16 March, the test one 12:00-13:00.
    feeds.respond = (r) => ({
      status: 200,
      headers: { 'content-type': 'text/calendar' },
      body: vcalendar(vevent(r.path === '/live.ics' ? { UID: 'live@x', DTSTART: '20260316T100000Z', DTEND: '20260316T110000Z' } : { UID: 'test@x', DTSTART: '20260316T120000Z', DTEND: '20260316T130000Z' })),
    });
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', VAPID_SUBJECT: 'mailto:ops@muster.test' });
    t.clock.set('2026-03-10T12:00:00.000Z');
    senders = createSenders(t.ctx, new https.Agent({ ca: tls.cert }));
    owner = await signUp(t.app, { name: 'Mona Mode', timezone: 'UTC' });
    live = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
    testKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
    const made = async (headers: Headers, path: string, name: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers, payload: { kind: 'ics', url: `${feeds.origin}${path}`, name } });
      assert.equal(res.statusCode, 201, res.body);
      return body<Cal>(res);
    };
    liveCal = await made(live, '/live.ics', 'Live work');
    testCal = await made(testKey, '/test.ics', 'Test work');
  });
  after(async () => {
    await t.close();
    await feeds.close();
    await pushService.close();
  });
  beforeEach(() => {
    pushService.requests.length = 0;
  });

  const call = (headers: Headers, method: string, url: string, payload?: object) => t.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload } : {}) });

  test('each key lists, reads and changes only the calendar connections of its own mode; the other mode is 404', async () => {
    assert.deepEqual([liveCal.livemode, testCal.livemode], [true, false]);
    const names = async (h: Headers) => body<{ calendars: Cal[] }>(await call(h, 'GET', '/v1/calendars')).calendars.map((c) => c.name);
    assert.deepEqual(await names(live), ['Live work']);
    assert.deepEqual(await names({ cookie: owner.cookie }), ['Live work'], 'a session is live');
    assert.deepEqual(await names(testKey), ['Test work']);
    const failures: string[] = [];
    for (const [h, other] of [[testKey, liveCal], [live, testCal]] as const) {
      for (const [method, url, payload] of [
        ['GET', `/v1/calendars/${other.id}`],
        ['PATCH', `/v1/calendars/${other.id}`, { name: 'taken over' }],
        ['POST', `/v1/calendars/${other.id}/sync`],
        ['DELETE', `/v1/calendars/${other.id}`],
      ] as const) {
        const res = await call(h, method, url, payload);
        if (res.statusCode !== 404 || body<{ code: string }>(res).code !== 'not_found') failures.push(`${method} ${url} with the ${other === liveCal ? 'test' : 'live'} key: ${res.statusCode}`);
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(await names(live), ['Live work'], 'still there, not renamed');
    // The busy times each mode's calendars contribute.
    const busy = async (h: Headers) =>
      body<{ busy: { calendar_id: number }[] }>(await call(h, 'GET', '/v1/calendars/busy?from=2026-03-16T00:00:00Z&to=2026-03-17T00:00:00Z')).busy.map((b) => b.calendar_id);
    assert.deepEqual(await busy(live), [liveCal.id]);
    assert.deepEqual(await busy(testKey), [testCal.id]);
  });

  test("a test calendar's busy time never blocks live bookings; a live one blocks both modes", async () => {
    const liveEt = await createEventType(t.app, live, { name: 'Live call', slug: 'live-call', duration_minutes: 60 });
    const testEt = await createEventType(t.app, testKey, { name: 'Test call', slug: 'test-call', duration_minutes: 60 });
    const starts = async (h: Headers, etId: number) =>
      body<{ slots: { start_time: string }[] }>(await call(h, 'GET', `/v1/availability?event_type_id=${etId}&date=2026-03-16`)).slots.map((s) => s.start_time.slice(11, 16));
    const liveSlots = await starts(live, liveEt.id);
    assert.ok(!liveSlots.includes('10:00') && liveSlots.includes('12:00'), `live: ${liveSlots.join(' ')}`);
    const testSlots = await starts(testKey, testEt.id);
    assert.ok(!testSlots.includes('10:00') && !testSlots.includes('12:00'), `test: ${testSlots.join(' ')}`);
  });

  test('a live booking is written back only to a live calendar, never to one a test key connected', async () => {
    // Connections that offer a write calendar (CalDAV discovery stands aside here: set as a pick would).
    const pick = (id: number) => t.ctx.db.updateTable('calendar_connections').set({ kind: 'caldav', write_calendar: `${feeds.origin}/dav/${id}/` }).where('id', '=', id).execute();
    const writes = async () => (await t.ctx.db.selectFrom('outbox').select(['payload', 'livemode']).where('kind', '=', 'calendar').orderBy('id').execute()).map((r) => [(JSON.parse(r.payload) as { connection_id: number }).connection_id, r.livemode]);
    const et = await createEventType(t.app, live, { name: 'Written', slug: 'written', duration_minutes: 30 });
    const book = async (h: Headers, etId: number, start: string) => {
      const res = await call(h, 'POST', '/v1/bookings', { event_type_id: etId, attendee_name: 'Ann', attendee_email: 'ann@example.com', start_time: start });
      assert.equal(res.statusCode, 201, res.body);
    };
    await pick(testCal.id);
    await book(live, et.id, '2026-03-17T09:00:00.000Z');
    assert.deepEqual(await writes(), [], 'only the test connection has a write calendar: the live booking goes nowhere');
    await pick(liveCal.id);
    await book(live, et.id, '2026-03-17T10:00:00.000Z');
    const testEt = await createEventType(t.app, testKey, { name: 'Written test', slug: 'written-test', duration_minutes: 30 });
    await book(testKey, testEt.id, '2026-03-17T11:00:00.000Z');
    assert.deepEqual(await writes(), [[liveCal.id, 1], [testCal.id, 0]]);
  });

  test('the private calendar feed carries live bookings: a test key gets 404 for its link and its rotation', async () => {
    assert.equal((await call(live, 'GET', '/v1/calendar')).statusCode, 200);
    for (const [method, url] of [['GET', '/v1/calendar'], ['POST', '/v1/calendar/rotate']] as const) {
      const res = await call(testKey, method, url);
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
    }
  });

  test('a push subscription made with a test key never receives live incidents or alerts, and cannot take over or remove a live one', async () => {
    const endpoint = (name: string) => `${pushService.origin}/push/${name}`;
    const subscribe = async (h: Headers, name: string) => assert.equal((await call(h, 'POST', '/v1/push/subscriptions', { endpoint: endpoint(name), keys: browserKeys().json })).statusCode, 201);
    await subscribe({ cookie: owner.cookie }, 'live-browser');
    await subscribe(testKey, 'test-browser');
    const incident = async (h: Headers, title: string) => assert.equal((await call(h, 'POST', '/v1/tickets', { title })).statusCode, 201);
    await incident(live, 'LIVE incident');
    assert.equal((await call(live, 'POST', '/v1/signals', { type: 'alert', note: 'LIVE ALERT: intruder at gate 4' })).statusCode, 201);
    await processDue(t.ctx, senders);
    const paths = () => pushService.requests.map((r) => r.path);
    assert.ok(paths().length >= 2, `pushes: ${paths().join(' ')}`);
    assert.deepEqual([...new Set(paths())], ['/push/live-browser']);
    // Test mode: recorded as suppressed, sent to no browser (docs/api.md, "Deliveries"), the live one least of all.
    pushService.requests.length = 0;
    await incident(testKey, 'test incident');
    await processDue(t.ctx, senders);
    assert.deepEqual(paths(), []);
    // The test key registers the live browser's endpoint, then removes it: only its own row moves.
    await subscribe(testKey, 'live-browser');
    assert.equal((await call(testKey, 'DELETE', '/v1/push/subscriptions', { endpoint: endpoint('live-browser') })).statusCode, 200);
    const rows = await t.ctx.db.selectFrom('push_subscriptions').select(['endpoint', 'livemode']).where('user_id', '=', owner.id).orderBy('endpoint').execute();
    assert.deepEqual(rows, [
      { endpoint: endpoint('live-browser'), livemode: 1 },
      { endpoint: endpoint('test-browser'), livemode: 0 },
    ]);
    await incident(live, 'LIVE incident two');
    await processDue(t.ctx, senders);
    assert.deepEqual([...new Set(paths())], ['/push/live-browser']);
  });

  test("a test key's export holds only test-mode calendars and push subscriptions", async () => {
    const exp = body<{ calendars: { name: string }[]; push_subscriptions: { endpoint: string }[] }>(await call(testKey, 'GET', '/v1/auth/me/export'));
    assert.deepEqual(exp.calendars.map((c) => c.name), ['Test work']);
    assert.ok(exp.push_subscriptions.every((p) => !p.endpoint.endsWith('/live-browser')), JSON.stringify(exp.push_subscriptions));
  });
});
