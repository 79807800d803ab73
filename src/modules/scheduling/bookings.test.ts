import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { body, buildTestApp, type TestApp, type Headers, type Method } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';

interface EventType {
  id: number;
  slug: string;
  livemode: boolean;
  booking_url: string;
}
interface Booking {
  id: string;
  status: 'confirmed' | 'pending' | 'cancelled' | 'declined';
  event_type_id: number | null;
  host_id: number;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  notes: string | null;
  timezone: string;
  requires_confirmation: boolean;
  cancel_url: string;
  reschedule_url: string;
  livemode: boolean;
  created_at: string;
}
interface BookingList {
  bookings: Booking[];
  page: number;
  limit: number;
  has_more: boolean;
}
interface Slots {
  date: string;
  event_type_id: number;
  timezone: string;
  slots: { start_time: string; end_time: string }[];
}
interface ErrorBody {
  error: string;
  code: string;
  details?: { field: string; message: string }[];
}
interface EmailPayload {
  subject: string;
  text: string;
  ics?: Record<string, unknown>;
}
interface WebhookPayload {
  event_type_id: number;
  body: { type: string; created_at: string; data: Booking };
}
interface OutboxRow {
  id: number;
  kind: string;
  topic: string;
  recipient: string;
  status: string;
  livemode: number;
  payload: string;
}

const NOW = '2026-01-05T12:00:00.000Z'; // a Monday
const SLOT_UNAVAILABLE = { error: 'Slot unavailable', code: 'slot_unavailable' };
const HOOK = 'https://hooks.example.com/muster-bookings';
const at = (date: string, hhmm: string) => `${date}T${hhmm}:00.000Z`;
const plus30 = (iso: string) => new Date(Date.parse(iso) + 30 * 60_000).toISOString();
const email = (row: OutboxRow) => JSON.parse(row.payload) as EmailPayload;
const hook = (row: OutboxRow) => JSON.parse(row.payload) as WebhookPayload;
const manageToken = (b: Booking) => /\/bookings\/manage\/([^?/]+)\?action=cancel$/.exec(b.cancel_url)![1]!;
/** The token with one character of its signature changed. */
const forge = (token: string) => token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.slice(-1);

describe('bookings', () => {
  let t: TestApp;
  let root: TestUser;
  let host: TestUser;
  let other: TestUser;
  let hostTest: Headers;
  let consult: EventType; // webhook, confirmed bookings
  let approval: EventType; // requires confirmation, webhook
  let plain: EventType; // no webhook
  let seq = 0;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    other = await signUp(t.app, { name: 'Otto Other' });
    await setPlan(t.app, root.cookie, host.id, 'enterprise');
    hostTest = { 'x-api-key': (await createKey(t.app, host.cookie, 'test')).key };
    consult = await createEventType(as(host), { name: 'Consult', slug: 'consult', webhook_url: HOOK });
    approval = await createEventType(as(host), { name: 'Approval', slug: 'approval', requires_confirmation: true, webhook_url: HOOK });
    plain = await createEventType(as(host), { name: 'Plain', slug: 'plain' });
  });
  after(() => t.close());

  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const req = (headers: Headers, method: Method, url: string, payload?: object) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  async function createEventType(headers: Headers, payload: object, url = '/v1/event-types'): Promise<EventType> {
    const res = await req(headers, 'POST', url, { duration_minutes: 30, ...payload });
    assert.equal(res.statusCode, 201, res.body);
    return body<EventType>(res);
  }
  const attendee = (extra: object = {}) => {
    seq += 1;
    return { attendee_name: `Guest ${seq}`, attendee_email: `guest-${seq}@example.com`, ...extra };
  };
  const publicBook = (url: string, start: string, extra: object = {}) => t.app.inject({ method: 'POST', url, payload: { ...attendee(extra), start_time: start } });
  async function bookOk(url: string, start: string, extra: object = {}): Promise<Booking> {
    const res = await publicBook(url, start, extra);
    assert.equal(res.statusCode, 201, `${url} ${start}: ${res.body}`);
    return body<Booking>(res);
  }
  const bookHost = (slug: string, start: string, extra: object = {}) => bookOk(`/v1/book/${host.slug}/${slug}`, start, extra);
  const openStarts = async (headers: Headers, eventTypeId: number, date: string) => {
    const res = await req(headers, 'GET', `/v1/availability?event_type_id=${eventTypeId}&date=${date}`);
    assert.equal(res.statusCode, 200, res.body);
    return body<Slots>(res).slots.map((s) => s.start_time);
  };
  async function outboxMark(): Promise<number> {
    const r = await t.ctx.db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
    return Number(r?.m ?? 0);
  }
  async function outboxSince(mark: number): Promise<OutboxRow[]> {
    const rows = await t.ctx.db.selectFrom('outbox').select(['id', 'kind', 'topic', 'recipient', 'status', 'livemode', 'payload']).where('id', '>', mark).orderBy('id').execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), livemode: Number(r.livemode) }));
  }
  const one = (rows: OutboxRow[], kind: string, topic: string) => {
    const found = rows.filter((r) => r.kind === kind && r.topic === topic);
    assert.equal(found.length, 1, `one ${kind} ${topic} in ${JSON.stringify(rows.map((r) => [r.kind, r.topic]))}`);
    return found[0]!;
  };
  const statusOf = async (b: Booking) => body<Booking>(await t.app.inject({ url: `/v1/bookings/manage/${manageToken(b)}` })).status;
  const expectUnavailable = (res: LightMyRequestResponse, what: string) => {
    assert.equal(res.statusCode, 409, `${what}: ${res.body}`);
    assert.deepEqual(body(res), SLOT_UNAVAILABLE, what);
  };

  describe('create', () => {
    test('POST /v1/bookings answers 201 with the booking and its attendee links', async () => {
      const res = await req(as(host), 'POST', '/v1/bookings', {
        event_type_id: plain.id,
        attendee_name: 'Ada Lovelace',
        attendee_email: 'ada@example.com',
        start_time: '2026-01-07T10:00:00.000Z',
        timezone: 'Europe/Paris',
        notes: 'About the engine',
      });
      assert.equal(res.statusCode, 201, res.body);
      const b = body<Booking>(res);
      assert.deepEqual(Object.keys(b).sort(), [
        'attendee_email',
        'attendee_name',
        'cancel_reason',
        'cancel_url',
        'created_at',
        'end_time',
        'event_type_id',
        'host_id',
        'id',
        'language',
        'livemode',
        'notes',
        'requires_confirmation',
        'reschedule_url',
        'start_time',
        'status',
        'timezone',
      ]);
      assert.equal(typeof b.id, 'string');
      assert.ok(b.id.length >= 8 && !/^\d+$/.test(b.id), `opaque id: ${b.id}`);
      const { id: _id, cancel_url, reschedule_url, ...rest } = b;
      assert.deepEqual(rest, {
        status: 'confirmed',
        event_type_id: plain.id,
        host_id: host.id,
        attendee_name: 'Ada Lovelace',
        attendee_email: 'ada@example.com',
        start_time: '2026-01-07T10:00:00.000Z',
        end_time: '2026-01-07T10:30:00.000Z',
        notes: 'About the engine',
        timezone: 'Europe/Paris',
        language: null,
        requires_confirmation: false,
        livemode: true,
        created_at: NOW,
        cancel_reason: null,
      });
      const token = manageToken(b);
      assert.equal(cancel_url, `http://muster.test/bookings/manage/${token}?action=cancel`);
      assert.equal(reschedule_url, `http://muster.test/bookings/manage/${token}?action=reschedule`);
      assert.ok(!(await openStarts(as(host), plain.id, '2026-01-07')).includes('2026-01-07T10:00:00.000Z'), 'the slot is taken');
    });

    test('the public booking routes book without credentials, in live mode', async () => {
      const starts = ['2026-01-07T11:00:00.000Z', '2026-01-07T11:30:00.000Z', '2026-01-07T12:00:00.000Z'];
      const paths = [`/v1/book/${host.slug}/plain`, `/v1/assign/${host.slug}/plain`, `/book/${host.slug}/plain`];
      for (const [i, path] of paths.entries()) {
        const b = await bookOk(path, starts[i]!);
        assert.deepEqual([b.status, b.event_type_id, b.host_id, b.livemode, b.start_time, b.end_time], ['confirmed', plain.id, host.id, true, starts[i], plus30(starts[i]!)], path);
      }
    });

    test('an event type that requires confirmation gives a pending booking', async () => {
      const b = await bookHost('approval', '2026-01-07T09:00:00.000Z');
      assert.equal(b.status, 'pending');
      assert.equal(b.requires_confirmation, true);
      assert.ok(!(await openStarts(as(host), approval.id, '2026-01-07')).includes('2026-01-07T09:00:00.000Z'), 'a pending booking holds its slot');
    });

    test('any start availability would not offer is 409 slot_unavailable', async () => {
      const blackout = await createEventType(as(host), { name: 'Closed Wednesday', slug: 'closed-wed', blackout_dates: ['2026-01-07'] });
      await bookHost('plain', '2026-01-08T10:00:00.000Z');
      const cases: [string, string, string][] = [
        ['taken', 'plain', '2026-01-08T10:00:00.000Z'],
        ['off-grid by a minute', 'plain', '2026-01-08T10:01:00.000Z'],
        ['before hours', 'plain', '2026-01-08T08:30:00.000Z'],
        ['at closing time', 'plain', '2026-01-08T17:00:00.000Z'],
        ['running past closing time', 'plain', '2026-01-08T16:45:00.000Z'],
        ['on a Saturday', 'plain', '2026-01-10T10:00:00.000Z'],
        ['in the past', 'plain', '2026-01-05T09:00:00.000Z'],
        ['earlier today', 'plain', '2026-01-05T11:30:00.000Z'],
        ['beyond max_advance_days', 'plain', '2026-03-10T10:00:00.000Z'],
        ['on a blackout day', 'closed-wed', '2026-01-07T10:00:00.000Z'],
      ];
      for (const [what, slug, start] of cases) expectUnavailable(await publicBook(`/v1/book/${host.slug}/${slug}`, start), what);
      expectUnavailable(await req(as(host), 'POST', '/v1/bookings', { ...attendee(), event_type_id: plain.id, start_time: '2026-01-08T10:00:00.000Z' }), 'taken, with a credential');
      expectUnavailable(await req(as(host), 'POST', '/v1/bookings', { ...attendee(), event_type_id: blackout.id, start_time: '2026-01-07T10:00:00.000Z' }), 'blackout, with a credential');
      // A start written with an offset is the same instant: it books the slot and is answered in UTC.
      const withOffset = await bookHost('plain', '2026-01-08T12:00:00+01:00');
      assert.deepEqual([withOffset.start_time, withOffset.end_time], ['2026-01-08T11:00:00.000Z', '2026-01-08T11:30:00.000Z']);
    });

    test('a failed booking leaves nothing behind', async () => {
      const mark = await outboxMark();
      const before = await t.ctx.db.selectFrom('bookings').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      expectUnavailable(await publicBook(`/v1/book/${host.slug}/consult`, '2026-01-10T10:00:00.000Z'), 'Saturday');
      const afterCount = await t.ctx.db.selectFrom('bookings').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n));
      assert.deepEqual(await outboxSince(mark), []);
    });

    test('422 for a bad email or a missing field, naming it', async () => {
      const start = '2026-01-09T10:00:00.000Z';
      const ok = { attendee_name: 'Val', attendee_email: 'val@example.com', start_time: start };
      const cases: [object, string][] = [
        [{ ...ok, attendee_email: 'not-an-email' }, 'attendee_email'],
        [{ ...ok, attendee_email: undefined }, 'attendee_email'],
        [{ ...ok, attendee_name: undefined }, 'attendee_name'],
        [{ ...ok, attendee_name: '   ' }, 'attendee_name'],
        [{ ...ok, start_time: undefined }, 'start_time'],
        [{ ...ok, start_time: 'next tuesday' }, 'start_time'],
        [{ ...ok, timezone: 'Mars/Base' }, 'timezone'],
      ];
      for (const [payload, field] of cases) {
        const res = await t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/plain`, payload });
        assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(body<ErrorBody>(res).code, 'validation_failed');
        assert.ok(body<ErrorBody>(res).details?.some((d) => d.field === field), `${field}: ${res.body}`);
      }
      const noType = await req(as(host), 'POST', '/v1/bookings', ok);
      assert.equal(noType.statusCode, 422);
      assert.ok(body<ErrorBody>(noType).details?.some((d) => d.field === 'event_type_id'), noType.body);
      assert.ok((await openStarts(as(host), plain.id, '2026-01-09')).includes(start), 'nothing was booked');
    });

    test('public routes are live: a test-mode event type is not bookable publicly', async () => {
      const sandbox = await createEventType(hostTest, { name: 'Sandbox', slug: 'sandbox' });
      assert.equal(sandbox.livemode, false);
      for (const path of [`/v1/book/${host.slug}/sandbox`, `/v1/assign/${host.slug}/sandbox`, `/book/${host.slug}/sandbox`]) {
        const res = await publicBook(path, '2026-01-09T10:00:00.000Z');
        assert.equal(res.statusCode, 404, path);
        assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
      }
      // With the same slug in both modes, the public route books the live one.
      const testPlain = await createEventType(hostTest, { name: 'Plain', slug: 'plain' });
      const b = await bookHost('plain', '2026-01-09T10:30:00.000Z');
      assert.deepEqual([b.event_type_id, b.livemode], [plain.id, true]);
      assert.notEqual(testPlain.id, plain.id);
    });

    test('a test key books its own mode only', async () => {
      const sandboxBooking = await req(hostTest, 'POST', '/v1/bookings', { ...attendee(), event_type_id: (await createEventType(hostTest, { name: 'Test Only' })).id, start_time: '2026-01-09T11:00:00.000Z' });
      assert.equal(sandboxBooking.statusCode, 201, sandboxBooking.body);
      assert.equal(body<Booking>(sandboxBooking).livemode, false);
      const crossMode = await req(hostTest, 'POST', '/v1/bookings', { ...attendee(), event_type_id: plain.id, start_time: '2026-01-09T11:30:00.000Z' });
      assert.equal(crossMode.statusCode, 404);
      const foreign = await req(as(other), 'POST', '/v1/bookings', { ...attendee(), event_type_id: plain.id, start_time: '2026-01-09T11:30:00.000Z' });
      assert.equal(foreign.statusCode, 404);
    });

    test('unknown users and event types are 404', async () => {
      assert.equal((await publicBook('/v1/book/nobody-here/plain', '2026-01-09T12:00:00.000Z')).statusCode, 404);
      assert.equal((await publicBook(`/v1/book/${host.slug}/no-such-event`, '2026-01-09T12:00:00.000Z')).statusCode, 404);
      assert.equal((await publicBook('/v1/book/no-org/no-team/no-event', '2026-01-09T12:00:00.000Z')).statusCode, 404);
      assert.equal((await req(as(host), 'POST', '/v1/bookings', { ...attendee(), event_type_id: 999_999, start_time: '2026-01-09T12:00:00.000Z' })).statusCode, 404);
    });

    test('every authenticated route answers 401 without credentials', async () => {
      for (const [method, url, payload] of [
        ['POST', '/v1/bookings', { ...attendee(), event_type_id: plain.id, start_time: '2026-01-09T13:00:00.000Z' }],
        ['GET', '/v1/bookings', undefined],
        ['DELETE', '/v1/bookings/bk_whatever', undefined],
        ['POST', '/v1/bookings/bk_whatever/reschedule', { start_time: '2026-01-09T13:00:00.000Z' }],
        ['GET', `/v1/availability?event_type_id=${plain.id}&date=2026-01-09`, undefined],
      ] as const) {
        const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) });
        assert.equal(res.statusCode, 401, `${method} ${url}`);
        assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
      }
    });
  });

  describe('notices in the outbox', () => {
    test('a confirmed booking queues the attendee email, the host email and the webhook', async () => {
      const mark = await outboxMark();
      const b = await bookHost('consult', '2026-01-12T09:00:00.000Z');
      const rows = await outboxSince(mark);
      assert.equal(rows.length, 3, JSON.stringify(rows.map((r) => [r.kind, r.topic])));

      const toAttendee = one(rows, 'email', 'booking.created');
      assert.deepEqual([toAttendee.recipient, toAttendee.status, toAttendee.livemode], [b.attendee_email, 'pending', 1]);
      const mail = email(toAttendee);
      assert.ok(mail.text.includes(b.cancel_url), mail.text);
      assert.ok(mail.text.includes(b.reschedule_url), mail.text);
      assert.equal(typeof mail.ics, 'object');
      assert.ok(mail.ics);

      const toHost = one(rows, 'email', 'booking.created.host');
      assert.deepEqual([toHost.recipient, toHost.status], [host.email, 'pending']);

      const webhook = one(rows, 'webhook', 'booking.created');
      assert.deepEqual([webhook.recipient, webhook.status, webhook.livemode], [HOOK, 'pending', 1]);
      // The webhook-id is fixed when queued: globally unique, the same on every retry (issue 32).
      const { webhook_id, ...queued } = hook(webhook) as WebhookPayload & { webhook_id: string };
      assert.match(webhook_id, /^msg_[0-9a-f]{32}$/);
      assert.deepEqual(queued, { event_type_id: consult.id, body: { type: 'booking.created', created_at: NOW, data: b } });
    });

    test('without a webhook URL there is no webhook row', async () => {
      const mark = await outboxMark();
      await bookHost('plain', '2026-01-12T09:30:00.000Z');
      const rows = await outboxSince(mark);
      assert.deepEqual(rows.map((r) => [r.kind, r.topic]).sort(), [
        ['email', 'booking.created'],
        ['email', 'booking.created.host'],
      ]);
    });

    test('a pending booking asks the host to confirm or decline', async () => {
      const mark = await outboxMark();
      const b = await bookHost('approval', '2026-01-12T10:00:00.000Z');
      const rows = await outboxSince(mark);
      const text = email(one(rows, 'email', 'booking.created.host')).text;
      assert.match(text, /http:\/\/muster\.test\/v1\/bookings\/[^\s/]+\/confirm/);
      assert.match(text, /http:\/\/muster\.test\/v1\/bookings\/[^\s/]+\/decline/);
      assert.equal(one(rows, 'email', 'booking.created').recipient, b.attendee_email);
      assert.equal(hook(one(rows, 'webhook', 'booking.created')).body.data.status, 'pending');
    });

    test('in test mode the emails are suppressed and the webhook is still queued', async () => {
      const sandboxHook = await createEventType(hostTest, { name: 'Sandbox hook', webhook_url: HOOK });
      const mark = await outboxMark();
      const res = await req(hostTest, 'POST', '/v1/bookings', { ...attendee(), event_type_id: sandboxHook.id, start_time: '2026-01-12T09:00:00.000Z' });
      assert.equal(res.statusCode, 201, res.body);
      const rows = await outboxSince(mark);
      assert.deepEqual(rows.map((r) => [r.kind, r.topic, r.status, r.livemode]).sort(), [
        ['email', 'booking.created', 'suppressed', 0],
        ['email', 'booking.created.host', 'suppressed', 0],
        ['webhook', 'booking.created', 'pending', 0],
      ]);
    });
  });

  describe('confirm and decline links', () => {
    /** A pending booking and the two links of the host's email. */
    async function pending(start: string) {
      const mark = await outboxMark();
      const b = await bookHost('approval', start);
      const text = email(one(await outboxSince(mark), 'email', 'booking.created.host')).text;
      const confirm = /http:\/\/muster\.test(\/v1\/bookings\/[^\s/]+\/confirm)/.exec(text)?.[1];
      const decline = /http:\/\/muster\.test(\/v1\/bookings\/[^\s/]+\/decline)/.exec(text)?.[1];
      assert.ok(confirm && decline, text);
      return { b, confirm, decline };
    }
    const json = { accept: 'application/json' };
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };

    test('GET asking for JSON confirms; a repeat answers the same; decline after confirm is 409', async () => {
      const { b, confirm, decline } = await pending('2026-01-13T09:00:00.000Z');
      const mark = await outboxMark();
      const res = await t.app.inject({ url: confirm, headers: json });
      assert.equal(res.statusCode, 200, res.body);
      const confirmed = body<Booking>(res);
      assert.deepEqual(confirmed, { ...b, status: 'confirmed' });
      const rows = await outboxSince(mark);
      assert.equal(one(rows, 'email', 'booking.confirmed').recipient, b.attendee_email);
      const webhook = hook(one(rows, 'webhook', 'booking.confirmed'));
      assert.deepEqual([webhook.body.type, webhook.body.data.id, webhook.body.data.status], ['booking.confirmed', b.id, 'confirmed']);

      const again = await t.app.inject({ url: confirm, headers: json });
      assert.equal(again.statusCode, 200);
      assert.deepEqual(body(again), body(res));
      const late = await t.app.inject({ url: decline, headers: json });
      assert.equal(late.statusCode, 409, late.body);
      assert.equal(await statusOf(b), 'confirmed');
    });

    test('GET asking for JSON declines; a repeat answers the same; confirm after decline is 409', async () => {
      const { b, confirm, decline } = await pending('2026-01-13T09:30:00.000Z');
      const mark = await outboxMark();
      const res = await t.app.inject({ url: decline, headers: json });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(body<Booking>(res).status, 'declined');
      const rows = await outboxSince(mark);
      assert.equal(one(rows, 'email', 'booking.declined').recipient, b.attendee_email);
      assert.equal(hook(one(rows, 'webhook', 'booking.declined')).body.data.status, 'declined');
      const again = await t.app.inject({ url: decline, headers: json });
      assert.equal(again.statusCode, 200);
      assert.equal(body<Booking>(again).status, 'declined');
      assert.equal((await t.app.inject({ url: confirm, headers: json })).statusCode, 409);
      assert.equal(await statusOf(b), 'declined');
    });

    test("a browser's GET shows a page with a form and changes nothing (link scanners)", async () => {
      const { b, confirm, decline } = await pending('2026-01-13T10:00:00.000Z');
      const mark = await outboxMark();
      for (const url of [confirm, decline]) {
        for (const headers of [browser, {}]) {
          const res = await t.app.inject({ url, headers });
          assert.equal(res.statusCode, 200, res.body);
          assert.match(String(res.headers['content-type']), /^text\/html/);
          assert.match(res.body, /<form[^>]*method="post"/i);
        }
      }
      assert.equal(await statusOf(b), 'pending');
      assert.deepEqual(await outboxSince(mark), []);
    });

    test('the form POST acts and answers a page', async () => {
      const { b, confirm, decline } = await pending('2026-01-13T10:30:00.000Z');
      const res = await t.app.inject({ method: 'POST', url: confirm, headers: form, payload: '' });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(await statusOf(b), 'confirmed');
      const second = await pending('2026-01-13T11:00:00.000Z');
      const declined = await t.app.inject({ method: 'POST', url: second.decline, headers: form, payload: '' });
      assert.equal(declined.statusCode, 200, declined.body);
      assert.match(String(declined.headers['content-type']), /^text\/html/);
      assert.equal(await statusOf(second.b), 'declined');
      // Declining the confirmed one through its form is refused.
      assert.equal((await t.app.inject({ method: 'POST', url: decline, headers: form, payload: '' })).statusCode, 409);
      assert.equal(await statusOf(b), 'confirmed');
    });

    test('a forged token is 404 and changes nothing', async () => {
      const { b, confirm, decline } = await pending('2026-01-13T11:30:00.000Z');
      const tokenOf = (path: string) => path.split('/')[3]!;
      for (const path of [confirm, decline]) {
        const [, , , token, action] = path.split('/');
        const forged = `/v1/bookings/${forge(token!)}/${action}`;
        assert.equal((await t.app.inject({ url: forged, headers: json })).statusCode, 404, forged);
        assert.equal((await t.app.inject({ url: forged, headers: browser })).statusCode, 404, forged);
        assert.equal((await t.app.inject({ method: 'POST', url: forged, headers: form, payload: '' })).statusCode, 404, forged);
      }
      // The attendee's manage token is no confirm token.
      assert.equal((await t.app.inject({ url: `/v1/bookings/${manageToken(b)}/confirm`, headers: json })).statusCode, 404);
      assert.notEqual(tokenOf(confirm), manageToken(b));
      assert.equal(await statusOf(b), 'pending');
    });
  });

  describe('host cancel and reschedule', () => {
    test('DELETE cancels; the slot is bookable again; booking.cancelled is queued', async () => {
      const b = await bookHost('consult', '2026-01-14T09:00:00.000Z');
      assert.ok(!(await openStarts(as(host), consult.id, '2026-01-14')).includes(b.start_time));
      const mark = await outboxMark();
      const res = await req(as(host), 'DELETE', `/v1/bookings/${b.id}`, {});
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), { id: b.id, status: 'cancelled' });
      const rows = await outboxSince(mark);
      const webhook = hook(one(rows, 'webhook', 'booking.cancelled'));
      assert.deepEqual([webhook.body.type, webhook.body.data.id, webhook.body.data.status], ['booking.cancelled', b.id, 'cancelled']);
      assert.equal(one(rows, 'email', 'booking.cancelled').recipient, b.attendee_email);
      assert.equal(await statusOf(b), 'cancelled');
      assert.ok((await openStarts(as(host), consult.id, '2026-01-14')).includes(b.start_time));
      await bookHost('consult', b.start_time);
    });

    test('DELETE needs no request body', async () => {
      const b = await bookHost('consult', '2026-01-14T09:30:00.000Z');
      const res = await t.app.inject({ method: 'DELETE', url: `/v1/bookings/${b.id}`, headers: as(host) });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), { id: b.id, status: 'cancelled' });
      assert.equal(await statusOf(b), 'cancelled');
    });

    test("another user's booking and one of the other mode are 404", async () => {
      const b = await bookHost('consult', '2026-01-14T10:00:00.000Z');
      for (const headers of [as(other), hostTest]) {
        const del = await req(headers, 'DELETE', `/v1/bookings/${b.id}`, {});
        assert.equal(del.statusCode, 404, del.body);
        assert.deepEqual(body(del), { error: 'Not found', code: 'not_found' });
        const move = await req(headers, 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: '2026-01-14T15:00:00.000Z' });
        assert.equal(move.statusCode, 404, move.body);
      }
      assert.equal((await req(as(host), 'DELETE', '/v1/bookings/bk_does_not_exist', {})).statusCode, 404);
      assert.equal(await statusOf(b), 'confirmed');
      assert.equal((await req(as(host), 'DELETE', `/v1/bookings/${b.id}`, { reason: 'Sick' })).statusCode, 200);
    });

    test('reschedule keeps id and status, moves the times, frees the old slot and queues booking.rescheduled', async () => {
      const b = await bookHost('consult', '2026-01-14T11:00:00.000Z');
      const mark = await outboxMark();
      const res = await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: '2026-01-14T14:00:00.000Z', reason: 'Clash' });
      assert.equal(res.statusCode, 200, res.body);
      const moved = body<Booking>(res);
      assert.deepEqual(moved, { ...b, start_time: '2026-01-14T14:00:00.000Z', end_time: '2026-01-14T14:30:00.000Z' });
      const open = await openStarts(as(host), consult.id, '2026-01-14');
      assert.ok(open.includes('2026-01-14T11:00:00.000Z'), 'the old slot is free');
      assert.ok(!open.includes('2026-01-14T14:00:00.000Z'), 'the new slot is taken');
      const webhook = hook(one(await outboxSince(mark), 'webhook', 'booking.rescheduled'));
      assert.deepEqual([webhook.body.type, webhook.body.data.id, webhook.body.data.start_time], ['booking.rescheduled', b.id, '2026-01-14T14:00:00.000Z']);
      await bookHost('consult', '2026-01-14T11:00:00.000Z');
    });

    test('a pending booking stays pending when moved', async () => {
      const b = await bookHost('approval', '2026-01-14T12:00:00.000Z');
      const moved = body<Booking>(await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: '2026-01-14T12:30:00.000Z' }));
      assert.deepEqual([moved.id, moved.status, moved.start_time], [b.id, 'pending', '2026-01-14T12:30:00.000Z']);
    });

    test('reschedule to a taken or unavailable slot is 409 and changes nothing', async () => {
      const a = await bookHost('consult', '2026-01-14T15:00:00.000Z');
      const b = await bookHost('consult', '2026-01-14T15:30:00.000Z');
      expectUnavailable(await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: a.start_time }), 'taken');
      expectUnavailable(await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: '2026-01-14T16:01:00.000Z' }), 'off-grid');
      expectUnavailable(await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { start_time: '2026-01-17T10:00:00.000Z' }), 'Saturday');
      const same = body<Booking>(await t.app.inject({ url: `/v1/bookings/manage/${manageToken(b)}` }));
      assert.equal(same.start_time, b.start_time);
      const missing = await req(as(host), 'POST', `/v1/bookings/${b.id}/reschedule`, { reason: 'no time given' });
      assert.equal(missing.statusCode, 422);
    });
  });

  describe("attendee links", () => {
    test('the manage token reads the booking', async () => {
      const b = await bookHost('consult', '2026-01-15T09:00:00.000Z');
      assert.match(b.reschedule_url, new RegExp(`/bookings/manage/${manageToken(b).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\?action=reschedule$`));
      const res = await t.app.inject({ url: `/v1/bookings/manage/${manageToken(b)}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), b);
    });

    test('the attendee reschedules: same id and status, new times, old slot free', async () => {
      const b = await bookHost('consult', '2026-01-15T10:00:00.000Z');
      const mark = await outboxMark();
      const res = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/reschedule`, payload: { start_time: '2026-01-15T13:00:00.000Z' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), { ...b, start_time: '2026-01-15T13:00:00.000Z', end_time: '2026-01-15T13:30:00.000Z' });
      assert.ok((await openStarts(as(host), consult.id, '2026-01-15')).includes('2026-01-15T10:00:00.000Z'));
      one(await outboxSince(mark), 'webhook', 'booking.rescheduled');
      const taken = await bookHost('consult', '2026-01-15T14:00:00.000Z');
      expectUnavailable(await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/reschedule`, payload: { start_time: taken.start_time } }), 'taken');
    });

    test('the attendee cancels; the slot frees up; booking.cancelled is queued', async () => {
      const b = await bookHost('consult', '2026-01-15T11:00:00.000Z');
      const mark = await outboxMark();
      const res = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/cancel`, payload: { reason: 'Cannot make it' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([body<Booking>(res).id, body<Booking>(res).status], [b.id, 'cancelled']);
      const rows = await outboxSince(mark);
      assert.equal(hook(one(rows, 'webhook', 'booking.cancelled')).body.data.id, b.id);
      assert.equal(one(rows, 'email', 'booking.cancelled').recipient, b.attendee_email);
      assert.ok((await openStarts(as(host), consult.id, '2026-01-15')).includes(b.start_time));
      // A cancelled booking cannot be moved.
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/reschedule`, payload: { start_time: '2026-01-15T15:00:00.000Z' } })).statusCode, 409);
    });

    test('a forged token is 404 on every attendee route', async () => {
      const b = await bookHost('consult', '2026-01-15T12:00:00.000Z');
      const forged = forge(manageToken(b));
      const idForged = manageToken(b).replace(b.id, `${b.id.slice(0, -1)}${b.id.endsWith('a') ? 'b' : 'a'}`);
      for (const token of [forged, idForged, 'nonsense']) {
        assert.equal((await t.app.inject({ url: `/v1/bookings/manage/${token}` })).statusCode, 404, token);
        assert.equal((await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token}/cancel`, payload: {} })).statusCode, 404, token);
        const move = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token}/reschedule`, payload: { start_time: '2026-01-15T15:30:00.000Z' } });
        assert.equal(move.statusCode, 404, token);
      }
      assert.equal(await statusOf(b), 'confirmed');
    });
  });

  describe('GET /v1/bookings', () => {
    let lena: TestUser;
    let lenaTest: Headers;
    let a: EventType;
    let p: EventType;
    const made: Record<string, Booking> = {};
    before(async () => {
      lena = await signUp(t.app, { name: 'Lena Lister' });
      lenaTest = { 'x-api-key': (await createKey(t.app, lena.cookie, 'test')).key };
      a = await createEventType(as(lena), { name: 'Alpha', slug: 'alpha' });
      p = await createEventType(as(lena), { name: 'Pending kind', slug: 'pending-kind', requires_confirmation: true });
      made.wed = await bookOk(`/v1/book/${lena.slug}/alpha`, at('2026-01-07', '09:00'));
      made.thu = await bookOk(`/v1/book/${lena.slug}/alpha`, at('2026-01-08', '09:00'));
      made.fri = await bookOk(`/v1/book/${lena.slug}/pending-kind`, at('2026-01-09', '09:00'));
      made.mon = await bookOk(`/v1/book/${lena.slug}/alpha`, at('2026-01-12', '09:00'));
      assert.equal((await req(as(lena), 'DELETE', `/v1/bookings/${made.mon.id}`, {})).statusCode, 200);
      const sandbox = await createEventType(lenaTest, { name: 'Sandbox', slug: 'alpha' });
      const res = await req(lenaTest, 'POST', '/v1/bookings', { ...attendee(), event_type_id: sandbox.id, start_time: at('2026-01-07', '09:00') });
      assert.equal(res.statusCode, 201, res.body);
      made.test = body<Booking>(res);
    });
    const list = async (headers: Headers, q = '') => {
      const res = await req(headers, 'GET', `/v1/bookings${q}`);
      assert.equal(res.statusCode, 200, `${q}: ${res.body}`);
      return body<BookingList>(res);
    };
    const ids = (l: BookingList) => l.bookings.map((b) => b.id).sort();
    const idsOf = (...keys: string[]) => keys.map((k) => made[k]!.id).sort();

    test("lists the caller's bookings as host, of one mode, with paging fields", async () => {
      const l = await list(as(lena));
      assert.deepEqual([l.page, l.limit, l.has_more], [1, 50, false]);
      assert.deepEqual(ids(l), idsOf('wed', 'thu', 'fri', 'mon'));
      assert.deepEqual(
        l.bookings.find((b) => b.id === made.thu!.id),
        made.thu,
      );
      assert.deepEqual(ids(await list(lenaTest)), idsOf('test'));
      assert.deepEqual((await list(as(other))).bookings.filter((b) => Object.values(made).some((m) => m.id === b.id)), []);
    });

    test('filters by event type, status and time', async () => {
      assert.deepEqual(ids(await list(as(lena), `?event_type_id=${p.id}`)), idsOf('fri'));
      assert.deepEqual(ids(await list(as(lena), `?event_type_id=${a.id}`)), idsOf('wed', 'thu', 'mon'));
      assert.deepEqual(ids(await list(as(lena), '?status=pending')), idsOf('fri'));
      assert.deepEqual(ids(await list(as(lena), '?status=cancelled')), idsOf('mon'));
      assert.deepEqual(ids(await list(as(lena), '?status=confirmed')), idsOf('wed', 'thu'));
      assert.deepEqual(ids(await list(as(lena), '?from=2026-01-08T00:00:00.000Z&to=2026-01-10T00:00:00.000Z')), idsOf('thu', 'fri'));
      assert.deepEqual(ids(await list(as(lena), '?from=2026-01-09T00:00:00.000Z')), idsOf('fri', 'mon'));
      assert.deepEqual(ids(await list(as(lena), '?to=2026-01-08T00:00:00.000Z')), idsOf('wed'));
      assert.deepEqual(ids(await list(as(lena), `?event_type_id=${a.id}&status=confirmed&from=2026-01-08T00:00:00.000Z`)), idsOf('thu'));
    });

    test('from and to are instants: an ISO time with an offset means the same moment as in UTC', async () => {
      // 10:00 at +02:00 is 08:00Z, before Thursday's 09:00Z booking.
      assert.deepEqual(ids(await list(as(lena), `?from=${encodeURIComponent('2026-01-08T10:00:00+02:00')}&to=${encodeURIComponent('2026-01-09T12:00:00+02:00')}`)), idsOf('thu', 'fri'));
      // Without milliseconds.
      assert.deepEqual(ids(await list(as(lena), '?from=2026-01-08T08:00:00Z&to=2026-01-09T10:00:00Z')), idsOf('thu', 'fri'));
    });

    test('pages with limit and has_more', async () => {
      const p1 = await list(as(lena), '?limit=3');
      const p2 = await list(as(lena), '?limit=3&page=2');
      const p3 = await list(as(lena), '?limit=3&page=3');
      assert.deepEqual([p1.bookings.length, p1.page, p1.limit, p1.has_more], [3, 1, 3, true]);
      assert.deepEqual([p2.bookings.length, p2.page, p2.has_more], [1, 2, false]);
      assert.deepEqual([p3.bookings.length, p3.has_more], [0, false]);
      assert.deepEqual([...p1.bookings, ...p2.bookings].map((b) => b.id).sort(), idsOf('wed', 'thu', 'fri', 'mon'));
      for (const q of ['limit=0', 'limit=201', 'page=0', 'status=done', 'from=yesterday', 'event_type_id=x']) {
        assert.equal((await req(as(lena), 'GET', `/v1/bookings?${q}`)).statusCode, 422, q);
      }
    });
  });

  describe('team routing', () => {
    let owner: TestUser;
    let ben: TestUser;
    let cleo: TestUser;
    let dev: TestUser;
    let org: { slug: string };
    /** A team with these members (in this join order) and one event type; answers the public booking path. */
    async function teamWith(name: string, routing: 'round_robin' | 'random', members: [TestUser, boolean][]) {
      const tm = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams`, { name, routing });
      assert.equal(tm.statusCode, 201, tm.body);
      const team = body<{ slug: string; members: { user_id: number }[] }>(tm);
      // The creator joins the team it makes (issue 33); this helper's hosts are exactly `members`.
      assert.deepEqual(team.members.map((m) => m.user_id), [owner.id]);
      assert.equal((await req(as(owner), 'DELETE', `/v1/orgs/${org.slug}/teams/${team.slug}/members/${owner.id}`)).statusCode, 200);
      for (const [u, active] of members) {
        const m = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/members`, { user_id: u.id, active });
        assert.equal(m.statusCode, 201, m.body);
      }
      const et = await createEventType(as(owner), { name: 'Team Call', slug: 'team-call' }, `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`);
      assert.equal(et.booking_url, `http://muster.test/book/${org.slug}/${team.slug}/team-call`);
      return { team: team.slug, path: `/v1/book/${org.slug}/${team.slug}/team-call` };
    }
    const name = (id: number) => [ben, cleo, dev, owner].find((u) => u.id === id)?.name ?? `user ${id}`;
    before(async () => {
      owner = await signUp(t.app, { name: 'Rita Router' });
      await setPlan(t.app, root.cookie, owner.id, 'agency');
      ben = await signUp(t.app, { name: 'Ben' });
      cleo = await signUp(t.app, { name: 'Cleo' });
      dev = await signUp(t.app, { name: 'Dev' });
      const o = await req(as(owner), 'POST', '/v1/orgs', { name: 'Routing Org' });
      assert.equal(o.statusCode, 201, o.body);
      org = body(o);
      for (const u of [ben, cleo, dev]) {
        const m = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/members`, { email: u.email });
        assert.equal(m.statusCode, 201, m.body);
      }
    });
    after(() => t.clock.set(NOW));

    describe('round_robin', () => {
      let rr: { team: string; path: string };
      before(async () => {
        rr = await teamWith('Round Robin', 'round_robin', [
          [ben, true],
          [cleo, true],
          [dev, true],
        ]);
      });
      /** Books in order, a second apart, and answers the hosts' names. */
      async function hostsOf(starts: string[]) {
        const out: string[] = [];
        for (const s of starts) {
          t.clock.advance(1000);
          out.push(name((await bookOk(rr.path, s)).host_id));
        }
        return out;
      }

      test('the team slots route and booking route work without credentials', async () => {
        const res = await t.app.inject({ url: `/v1/slots/${org.slug}/${rr.team}/team-call?date=2026-01-07` });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(body<Slots>(res).slots.length, 16);
      });

      test('never-booked members first, in join order, then the one whose last team booking is oldest', async () => {
        const starts = ['09:00', '09:30', '10:00', '10:30', '11:00', '11:30'].map((h) => at('2026-01-07', h));
        assert.deepEqual(await hostsOf(starts), ['Ben', 'Cleo', 'Dev', 'Ben', 'Cleo', 'Dev']);
      });

      test('a member busy at that time is skipped for the next free one, and keeps their turn', async () => {
        const personal = await createEventType(as(ben), { name: 'Ben personal', slug: 'ben-personal' });
        const busy = await bookOk(`/v1/book/${ben.slug}/ben-personal`, at('2026-01-08', '09:00'));
        assert.equal(busy.event_type_id, personal.id);
        assert.deepEqual(await hostsOf([at('2026-01-08', '09:00'), at('2026-01-08', '10:00'), at('2026-01-08', '10:30')]), ['Cleo', 'Ben', 'Dev']);
      });

      test('an inactive member never gets a booking', async () => {
        const res = await req(as(owner), 'PATCH', `/v1/orgs/${org.slug}/teams/${rr.team}/members/${dev.id}`, { active: false });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(body<{ active: boolean }>(res).active, false);
        const starts = ['11:00', '11:30', '12:00', '12:30'].map((h) => at('2026-01-08', h));
        assert.deepEqual(await hostsOf(starts), ['Cleo', 'Ben', 'Cleo', 'Ben']);
      });

      test('the only free active member takes the slot; once every active member is busy it is 409', async () => {
        // At 2026-01-08 11:00 Cleo is busy, Ben is free and Dev is inactive.
        assert.deepEqual(await hostsOf([at('2026-01-08', '11:00')]), ['Ben']);
        const res = await t.app.inject({ url: `/v1/slots/${org.slug}/${rr.team}/team-call?date=2026-01-08` });
        assert.ok(!body<Slots>(res).slots.some((s) => s.start_time === at('2026-01-08', '11:00')));
        expectUnavailable(await publicBook(rr.path, at('2026-01-08', '11:00')), 'both active members busy');
      });
    });

    test('round_robin still rotates when bookings are made within the same millisecond', async () => {
      const same = await teamWith('Same Instant', 'round_robin', [
        [ben, true],
        [cleo, true],
      ]);
      const hosts: string[] = [];
      for (const h of ['09:00', '09:30', '10:00', '10:30']) hosts.push(name((await bookOk(same.path, at('2026-01-09', h))).host_id));
      assert.deepEqual(hosts, ['Ben', 'Cleo', 'Ben', 'Cleo']);
    });

    test('random picks only free active members, and each of them', async () => {
      const rnd = await teamWith('Random', 'random', [
        [ben, true],
        [cleo, true],
        [dev, false],
      ]);
      const starts = [
        ...['09:00', '09:30', '10:00', '10:30', '11:00', '11:30', '12:00', '12:30', '13:00', '13:30', '14:00', '14:30', '15:00', '15:30', '16:00', '16:30'].map((h) => at('2026-01-12', h)),
        ...['09:00', '09:30', '10:00', '10:30', '11:00', '11:30', '12:00', '12:30'].map((h) => at('2026-01-13', h)),
      ];
      const hosts = new Set<string>();
      for (const s of starts) hosts.add(name((await bookOk(rnd.path, s)).host_id));
      assert.deepEqual([...hosts].sort(), ['Ben', 'Cleo']);
    });
  });
});
