import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers, type Method } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';

interface Window {
  day: string;
  start: string;
  end: string;
}
interface EventType {
  id: number;
  owner_id: number;
  org_id: number;
  team_id: number | null;
  livemode: boolean;
  name: string;
  slug: string;
  description: string | null;
  duration_minutes: number;
  location_type: string;
  requires_confirmation: boolean;
  max_advance_days: number;
  min_notice_hours: number;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  max_bookings_per_day: number | null;
  slot_interval_minutes: number | null;
  availability: { timezone: string; weekly: Window[] };
  blackout_dates: string[];
  webhook_url: string | null;
  webhook_secret: string | null;
  booking_url: string;
  locked: boolean;
  created_at: string;
  updated_at: string;
}
interface Slots {
  date: string;
  event_type_id: number;
  timezone: string;
  slots: { start_time: string; end_time: string }[];
}
interface Booking {
  id: string;
  status: string;
  event_type_id: number | null;
  host_id: number;
}
interface ErrorBody {
  error: string;
  code: string;
  upgrade?: boolean;
  details?: { field: string; message: string }[];
}

const NOW = '2026-01-05T12:00:00.000Z'; // a Monday
const WEEKDAYS_9_TO_5 = (['mon', 'tue', 'wed', 'thu', 'fri'] as const).map((day) => ({ day, start: '09:00', end: '17:00' }));
/** The half-hour starts from `from` (inclusive) to `to` (exclusive) of one UTC day, as the API writes them. */
function halfHours(date: string, from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${date}T${from}:00.000Z`); t < Date.parse(`${date}T${to}:00.000Z`); t += 30 * MINUTE) out.push(new Date(t).toISOString());
  return out;
}

describe('event types and availability', () => {
  let t: TestApp;
  let root: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let aliceTest: Headers;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' }); // first user: instance admin
    alice = await signUp(t.app, { name: 'Alice Example' });
    bob = await signUp(t.app, { name: 'Bob Example' });
    // Alice creates many event types below: her limit is not what those tests are about.
    await setPlan(t.app, root.cookie, alice.id, 'enterprise');
    aliceTest = { 'x-api-key': (await createKey(t.app, alice.cookie, 'test')).key };
  });
  after(() => t.close());

  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const req = (headers: Headers, method: Method, url: string, payload?: object) => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  async function create(headers: Headers, payload: object = {}, url = '/v1/event-types'): Promise<EventType> {
    const res = await req(headers, 'POST', url, { name: 'Intro Call', duration_minutes: 30, ...payload });
    assert.equal(res.statusCode, 201, res.body);
    return body<EventType>(res);
  }
  const userOn = async (plan: 'free' | 'starter' | 'agency' | 'enterprise', name: string, fields: { timezone?: string } = {}) => {
    const u = await signUp(t.app, { name, ...fields });
    if (plan !== 'free') await setPlan(t.app, root.cookie, u.id, plan);
    return u;
  };
  const slotsOf = async (headers: Headers, eventTypeId: number, date: string, timezone?: string) => {
    const res = await req(headers, 'GET', `/v1/availability?event_type_id=${eventTypeId}&date=${date}${timezone ? `&timezone=${encodeURIComponent(timezone)}` : ''}`);
    assert.equal(res.statusCode, 200, res.body);
    return body<Slots>(res);
  };
  const starts = (s: Slots) => s.slots.map((x) => x.start_time);
  const book = async (user: TestUser, slug: string, start: string, n: number) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${user.slug}/${slug}`,
      payload: { attendee_name: `Guest ${n}`, attendee_email: `guest-${n}-${slug}@example.com`, start_time: start },
    });
    assert.equal(res.statusCode, 201, res.body);
    return body<Booking>(res);
  };

  describe('create', () => {
    test('answers 201 with the defaults, a slug from the name and the booking link', async () => {
      const u = await userOn('free', 'Dana Default');
      const e = await create(as(u));
      const orgs = body<{ orgs: { id: number; primary: boolean }[] }>(await req(as(u), 'GET', '/v1/orgs')).orgs;
      assert.deepEqual(Object.keys(e).sort(), [
        'availability',
        'blackout_dates',
        'booking_url',
        'buffer_after_minutes',
        'buffer_before_minutes',
        'created_at',
        'description',
        'duration_minutes',
        'id',
        'livemode',
        'location',
        'location_type',
        'locked',
        'max_advance_days',
        'max_bookings_per_day',
        'min_notice_hours',
        'name',
        'org_id',
        'owner_id',
        'requires_confirmation',
        'slot_interval_minutes',
        'slug',
        'team_id',
        'updated_at',
        'webhook_secret',
        'webhook_url',
      ]);
      assert.ok(Number.isInteger(e.id) && e.id > 0);
      assert.equal(typeof e.location_type, 'string');
      const { id: _id, location_type: _loc, ...rest } = e;
      assert.deepEqual(rest, {
        owner_id: u.id,
        org_id: orgs.find((o) => o.primary)!.id,
        team_id: null,
        livemode: true,
        name: 'Intro Call',
        slug: 'intro-call',
        description: null,
        duration_minutes: 30,
        location: null,
        requires_confirmation: false,
        max_advance_days: 60,
        min_notice_hours: 0,
        buffer_before_minutes: 0,
        buffer_after_minutes: 0,
        max_bookings_per_day: null,
        slot_interval_minutes: null,
        availability: { timezone: 'UTC', weekly: WEEKDAYS_9_TO_5 },
        blackout_dates: [],
        webhook_url: null,
        webhook_secret: null,
        booking_url: `http://muster.test/assign/${u.slug}/intro-call`,
        locked: false,
        created_at: NOW,
        updated_at: NOW,
      });
    });

    test('echoes every field given, and a webhook URL gets a whsec_ signing secret', async () => {
      const payload = {
        name: 'Strategy Session',
        duration_minutes: 45,
        slug: 'strategy',
        description: 'Plan the quarter',
        location_type: 'phone',
        location: '+33 1 23 45 67 89',
        requires_confirmation: true,
        max_advance_days: 30,
        min_notice_hours: 2,
        buffer_before_minutes: 5,
        buffer_after_minutes: 10,
        max_bookings_per_day: 4,
        slot_interval_minutes: 15,
        availability: { timezone: 'Europe/Paris', weekly: [{ day: 'tue', start: '10:00', end: '24:00' }] },
        blackout_dates: ['2026-02-01'],
        webhook_url: 'https://hooks.example.com/muster',
      };
      const e = await create(as(alice), payload);
      for (const [key, value] of Object.entries(payload)) assert.deepEqual(e[key as keyof EventType], value, key);
      assert.match(e.webhook_secret ?? '', /^whsec_\S{8,}$/);
      assert.equal(e.booking_url, `http://muster.test/assign/${alice.slug}/strategy`);
      assert.equal(e.team_id, null);
      assert.equal(e.locked, false);
      const again = body<EventType>(await req(as(alice), 'GET', `/v1/event-types/${e.id}`));
      assert.deepEqual(again, e, 'GET answers what POST did, the secret included (shown to the owner)');
    });

    test("the default schedule is Mon-Fri 09:00-17:00 in the owner's timezone", async () => {
      const u = await userOn('free', 'Nora New York', { timezone: 'America/New_York' });
      const e = await create(as(u));
      assert.deepEqual(e.availability, { timezone: 'America/New_York', weekly: WEEKDAYS_9_TO_5 });
    });

    test('slugs: derived ones get -2, a taken explicit one is 409, and the same slug is fine in test mode', async () => {
      const a = await create(as(alice), { name: 'Coffee Chat' });
      const b = await create(as(alice), { name: 'Coffee Chat' });
      assert.deepEqual([a.slug, b.slug], ['coffee-chat', 'coffee-chat-2']);
      const taken = await req(as(alice), 'POST', '/v1/event-types', { name: 'Other', duration_minutes: 15, slug: 'coffee-chat' });
      assert.equal(taken.statusCode, 409);
      assert.equal(body<ErrorBody>(taken).code, 'conflict');
      const inTest = await create(aliceTest, { name: 'Other', slug: 'coffee-chat' });
      assert.equal(inTest.slug, 'coffee-chat');
      assert.equal(inTest.livemode, false);
      // Another owner may use the same slug.
      assert.equal((await create(as(bob), { name: 'Coffee Chat', slug: 'coffee-chat' })).slug, 'coffee-chat');
    });

    test('validates the body and names the field', async () => {
      const week = (w: object, timezone = 'UTC') => ({ availability: { timezone, weekly: [{ day: 'mon', start: '09:00', end: '17:00', ...w }] } });
      const cases: [object, string][] = [
        [{ name: undefined }, 'name'],
        [{ duration_minutes: undefined }, 'duration_minutes'],
        [{ duration_minutes: 4 }, 'duration_minutes'],
        [{ duration_minutes: 1441 }, 'duration_minutes'],
        [{ location_type: 'zoom' }, 'location_type'],
        [week({ day: 'monday' }), 'availability.weekly.0.day'],
        [week({ start: '25:00' }), 'availability.weekly.0.start'],
        [week({ start: '17:00', end: '09:00' }), 'availability.weekly.0.end'],
        [week({}, 'Mars/Olympus_Mons'), 'availability.timezone'],
        [{ blackout_dates: ['2026/01/07'] }, 'blackout_dates.0'],
        [{ webhook_url: 'ftp://hooks.example.com/x' }, 'webhook_url'],
        [{ webhook_url: 'hooks.example.com/x' }, 'webhook_url'],
      ];
      for (const [patch, field] of cases) {
        const payload = { name: 'Valid', duration_minutes: 30, ...patch };
        const res = await req(as(alice), 'POST', '/v1/event-types', payload);
        assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
        const err = body<ErrorBody>(res);
        assert.equal(err.code, 'validation_failed');
        assert.ok(
          err.details?.some((d) => d.field === field),
          `${JSON.stringify(payload)} names ${field}: ${res.body}`,
        );
      }
      // The bounds themselves and 24:00 are fine.
      await create(as(alice), { name: 'Five', duration_minutes: 5 });
      await create(as(alice), { name: 'Whole day', duration_minutes: 1440, availability: { timezone: 'UTC', weekly: [{ day: 'sun', start: '00:00', end: '24:00' }] } });
    });

    test('every route answers 401 without credentials', async () => {
      for (const [method, url] of [
        ['POST', '/v1/event-types'],
        ['GET', '/v1/event-types'],
        ['GET', '/v1/event-types/1'],
        ['PATCH', '/v1/event-types/1'],
        ['DELETE', '/v1/event-types/1'],
        ['POST', '/v1/orgs/some-org/teams/some-team/event-types'],
        ['GET', '/v1/availability?event_type_id=1&date=2026-01-07'],
      ] as const) {
        const res = await t.app.inject({ method, url, ...(method === 'POST' || method === 'PATCH' ? { payload: { name: 'x', duration_minutes: 30 } } : {}) });
        assert.equal(res.statusCode, 401, `${method} ${url}`);
        assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
      }
    });
  });

  describe('plan limits and locks', () => {
    test('free: 3 per mode, the 4th is 403 upgrade_required; test mode counts on its own', async () => {
      const u = await userOn('free', 'Fred Free');
      const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
      for (let i = 0; i < 3; i++) await create(as(u), { name: `Live ${i}` });
      const fourth = await req(as(u), 'POST', '/v1/event-types', { name: 'Live 3', duration_minutes: 30 });
      assert.equal(fourth.statusCode, 403);
      assert.deepEqual(body(fourth), { error: 'Upgrade required', code: 'upgrade_required', upgrade: true });
      for (let i = 0; i < 3; i++) await create(testKey, { name: `Test ${i}` });
      assert.equal((await req(testKey, 'POST', '/v1/event-types', { name: 'Test 3', duration_minutes: 30 })).statusCode, 403);
    });

    test('starter: 10, the 11th is refused', async () => {
      const u = await userOn('starter', 'Stella Starter');
      for (let i = 0; i < 10; i++) await create(as(u), { name: `Type ${i}` });
      const res = await req(as(u), 'POST', '/v1/event-types', { name: 'Type 10', duration_minutes: 30 });
      assert.equal(res.statusCode, 403);
      assert.equal(body<ErrorBody>(res).code, 'upgrade_required');
      assert.equal(body<ErrorBody>(res).upgrade, true);
    });

    test('team event types do not count toward the personal limit', async () => {
      const owner = await userOn('agency', 'Tess Teams');
      const org = body<{ slug: string }>(await req(as(owner), 'POST', '/v1/orgs', { name: 'Tess Org' }));
      const team = body<{ slug: string }>(await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams`, { name: 'Desk', routing: 'round_robin' }));
      for (let i = 0; i < 3; i++) await create(as(owner), { name: `Team ${i}` }, `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`);
      await setPlan(t.app, root.cookie, owner.id, 'free');
      // The org now has no room for teams, but this is about the personal count.
      for (let i = 0; i < 3; i++) await create(as(owner), { name: `Mine ${i}` });
    });

    describe('after a downgrade from agency with 5 to free', () => {
      let carol: TestUser;
      let types: EventType[];
      before(async () => {
        carol = await userOn('agency', 'Carol Agency');
        types = [];
        for (let i = 1; i <= 5; i++) types.push(await create(as(carol), { name: `Meeting ${i}`, slug: `m${i}` }));
        await setPlan(t.app, root.cookie, carol.id, 'free');
      });
      const lockedFlags = async () => body<{ event_types: EventType[] }>(await req(as(carol), 'GET', '/v1/event-types')).event_types.map((e) => [e.slug, e.locked]);

      test('the oldest 3 stay usable and the newest 2 answer locked: true', async () => {
        assert.deepEqual(await lockedFlags(), [
          ['m1', false],
          ['m2', false],
          ['m3', false],
          ['m4', true],
          ['m5', true],
        ]);
        assert.equal(body<EventType>(await req(as(carol), 'GET', `/v1/event-types/${types[3]!.id}`)).locked, true);
        assert.equal(body<EventType>(await req(as(carol), 'GET', `/v1/event-types/${types[0]!.id}`)).locked, false);
        const sixth = await req(as(carol), 'POST', '/v1/event-types', { name: 'Six', duration_minutes: 30 });
        assert.equal(sixth.statusCode, 403);
        assert.equal(body<ErrorBody>(sixth).code, 'upgrade_required');
      });

      test('a locked one refuses PATCH with 403 resource_locked; an unlocked one accepts it', async () => {
        const res = await req(as(carol), 'PATCH', `/v1/event-types/${types[4]!.id}`, { name: 'Renamed' });
        assert.equal(res.statusCode, 403);
        assert.deepEqual(body(res), { error: 'Upgrade required', code: 'resource_locked', upgrade: true });
        const ok = await req(as(carol), 'PATCH', `/v1/event-types/${types[0]!.id}`, { description: 'still mine' });
        assert.equal(ok.statusCode, 200, ok.body);
        assert.equal(body<EventType>(ok).description, 'still mine');
      });

      test('a locked one refuses bookings with 403 resource_locked, publicly and with a credential', async () => {
        const payload = { attendee_name: 'Guest', attendee_email: 'guest@example.com', start_time: '2026-01-07T10:00:00.000Z' };
        const pub = await t.app.inject({ method: 'POST', url: `/v1/book/${carol.slug}/m4`, payload });
        assert.equal(pub.statusCode, 403, pub.body);
        assert.deepEqual(body(pub), { error: 'Upgrade required', code: 'resource_locked', upgrade: true });
        const auth = await req(as(carol), 'POST', '/v1/bookings', { ...payload, event_type_id: types[3]!.id });
        assert.equal(auth.statusCode, 403, auth.body);
        assert.equal(body<ErrorBody>(auth).code, 'resource_locked');
        assert.equal((await t.app.inject({ method: 'POST', url: `/v1/book/${carol.slug}/m1`, payload })).statusCode, 201);
      });

      test('the public profile lists the live, unlocked event types only', async () => {
        const res = await t.app.inject({ url: `/v1/u/${carol.slug}` });
        assert.equal(res.statusCode, 200);
        const listed = body<{ event_types: Record<string, unknown>[] }>(res).event_types;
        assert.deepEqual(
          listed,
          types.slice(0, 3).map((e) => ({ id: e.id, name: e.name, slug: e.slug, duration_minutes: e.duration_minutes, location_type: e.location_type })),
        );
      });

      test('an upgrade unlocks at once; a downgrade locks again; a locked one may still be deleted', async () => {
        await setPlan(t.app, root.cookie, carol.id, 'starter');
        assert.ok((await lockedFlags()).every(([, locked]) => locked === false));
        assert.equal(body<{ event_types: unknown[] }>(await t.app.inject({ url: `/v1/u/${carol.slug}` })).event_types.length, 5);
        assert.equal((await req(as(carol), 'PATCH', `/v1/event-types/${types[4]!.id}`, { name: 'Meeting five' })).statusCode, 200);

        await setPlan(t.app, root.cookie, carol.id, 'free');
        assert.deepEqual((await lockedFlags()).map(([, l]) => l), [false, false, false, true, true]);
        const del = await req(as(carol), 'DELETE', `/v1/event-types/${types[4]!.id}`);
        assert.equal(del.statusCode, 200, del.body);
        assert.deepEqual(body(del), { id: types[4]!.id, deleted: true });
        assert.equal((await req(as(carol), 'GET', `/v1/event-types/${types[4]!.id}`)).statusCode, 404);
        assert.deepEqual(await lockedFlags(), [
          ['m1', false],
          ['m2', false],
          ['m3', false],
          ['m4', true],
        ]);
      });
    });
  });

  describe('read, update, delete', () => {
    test('GET /v1/event-types lists the caller’s event types of one mode, oldest first', async () => {
      const u = await userOn('starter', 'Lisa Lister');
      const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
      const a = await create(as(u), { name: 'First' });
      const b = await create(as(u), { name: 'Second' });
      const c = await create(testKey, { name: 'Test only' });
      await create(as(bob), { name: 'Not hers' });
      const live = body<{ event_types: EventType[] }>(await req(as(u), 'GET', '/v1/event-types')).event_types;
      assert.deepEqual(live.map((e) => e.id), [a.id, b.id]);
      assert.deepEqual(live[0], a);
      const inTest = body<{ event_types: EventType[] }>(await req(testKey, 'GET', '/v1/event-types')).event_types;
      assert.deepEqual(inTest.map((e) => [e.id, e.livemode]), [[c.id, false]]);
    });

    test("another user's event type and one of the other mode answer 404 on GET, PATCH and DELETE", async () => {
      const mine = await create(as(alice), { name: 'Private' });
      const mineTest = await create(aliceTest, { name: 'Private test' });
      for (const [headers, e] of [
        [as(bob), mine],
        [aliceTest, mine],
        [as(alice), mineTest],
      ] as const) {
        for (const [method, payload] of [
          ['GET', undefined],
          ['PATCH', { name: 'Hijack' }],
          ['DELETE', undefined],
        ] as const) {
          const res = await req(headers, method, `/v1/event-types/${e.id}`, payload);
          assert.equal(res.statusCode, 404, `${method} ${e.name}`);
          assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
        }
      }
      assert.equal(body<EventType>(await req(as(alice), 'GET', `/v1/event-types/${mine.id}`)).name, 'Private');
      assert.equal(body<EventType>(await req(aliceTest, 'GET', `/v1/event-types/${mineTest.id}`)).name, 'Private test');
      assert.equal((await req(as(alice), 'GET', '/v1/event-types/999999')).statusCode, 404);
    });

    test('PATCH changes the fields given, keeps the others, and validates like POST', async () => {
      const e = await create(as(alice), { name: 'Patchable', slug: 'patchable' });
      t.clock.advance(MINUTE);
      const res = await req(as(alice), 'PATCH', `/v1/event-types/${e.id}`, {
        duration_minutes: 60,
        requires_confirmation: true,
        max_bookings_per_day: 2,
        blackout_dates: ['2026-01-09'],
        availability: { timezone: 'Asia/Tokyo', weekly: [{ day: 'wed', start: '08:00', end: '12:00' }] },
      });
      assert.equal(res.statusCode, 200, res.body);
      const p = body<EventType>(res);
      assert.deepEqual(
        [p.name, p.slug, p.duration_minutes, p.requires_confirmation, p.max_bookings_per_day, p.blackout_dates, p.availability.timezone],
        ['Patchable', 'patchable', 60, true, 2, ['2026-01-09'], 'Asia/Tokyo'],
      );
      assert.equal(p.created_at, e.created_at);
      assert.equal(p.updated_at, new Date(Date.parse(NOW) + MINUTE).toISOString());
      t.clock.set(NOW);

      const bad = await req(as(alice), 'PATCH', `/v1/event-types/${e.id}`, { availability: { timezone: 'UTC', weekly: [{ day: 'mon', start: '12:00', end: '11:00' }] } });
      assert.equal(bad.statusCode, 422);
      assert.equal(body<ErrorBody>(bad).details?.[0]?.field, 'availability.weekly.0.end');
      assert.equal((await req(as(alice), 'PATCH', `/v1/event-types/${e.id}`, { duration_minutes: 4 })).statusCode, 422);

      await create(as(alice), { name: 'Occupied', slug: 'occupied' });
      const taken = await req(as(alice), 'PATCH', `/v1/event-types/${e.id}`, { slug: 'occupied' });
      assert.equal(taken.statusCode, 409);
      assert.equal(body<ErrorBody>(taken).code, 'conflict');
    });

    test('setting a webhook URL later gives the event type a signing secret', async () => {
      const e = await create(as(alice), { name: 'Hook later' });
      assert.equal(e.webhook_secret, null);
      const p = body<EventType>(await req(as(alice), 'PATCH', `/v1/event-types/${e.id}`, { webhook_url: 'https://hooks.example.com/later' }));
      assert.equal(p.webhook_url, 'https://hooks.example.com/later');
      assert.match(p.webhook_secret ?? '', /^whsec_/);
    });

    test('DELETE answers {id, deleted: true} and keeps the bookings, whose event_type_id becomes null', async () => {
      const u = await userOn('free', 'Desmond Delete');
      const e = await create(as(u), { name: 'Short lived', slug: 'short-lived' });
      const booked = await book(u, 'short-lived', '2026-01-07T10:00:00.000Z', 1);
      assert.equal(booked.event_type_id, e.id);
      const res = await req(as(u), 'DELETE', `/v1/event-types/${e.id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(body(res), { id: e.id, deleted: true });
      assert.equal((await req(as(u), 'GET', `/v1/event-types/${e.id}`)).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'GET', url: `/v1/slots/${u.slug}/short-lived?date=2026-01-07` })).statusCode, 404);
      const list = body<{ bookings: Booking[] }>(await req(as(u), 'GET', '/v1/bookings')).bookings;
      assert.deepEqual(list.map((b) => [b.id, b.event_type_id, b.status]), [[booked.id, null, 'confirmed']]);
    });
  });

  describe('team event types', () => {
    let owner: TestUser;
    let admin: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let org: { id: number; slug: string };
    let team: { id: number; slug: string };
    let base: string;
    before(async () => {
      owner = await userOn('agency', 'Tina Owner');
      admin = await signUp(t.app, { name: 'Adam Admin' });
      member = await signUp(t.app, { name: 'Mia Member' });
      outsider = await signUp(t.app, { name: 'Oscar Outsider' });
      const o = await req(as(owner), 'POST', '/v1/orgs', { name: 'Helpdesk Org' });
      assert.equal(o.statusCode, 201, o.body);
      org = body(o);
      for (const [u, role] of [
        [admin, 'admin'],
        [member, 'member'],
      ] as const) {
        const m = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/members`, { email: u.email, role });
        assert.equal(m.statusCode, 201, m.body);
      }
      const tm = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams`, { name: 'Support', routing: 'round_robin' });
      assert.equal(tm.statusCode, 201, tm.body);
      team = body(tm);
      for (const u of [admin, member]) {
        const m = await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams/${team.slug}/members`, { user_id: u.id });
        assert.equal(m.statusCode, 201, m.body);
      }
      base = `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`;
    });

    test('team admins create them; the booking link names org, team and slug', async () => {
      const e = await create(as(owner), { name: 'Support Call' }, base);
      assert.deepEqual(
        [e.team_id, e.org_id, e.livemode, e.locked, e.slug, e.booking_url],
        [team.id, org.id, true, false, 'support-call', `http://muster.test/book/${org.slug}/${team.slug}/support-call`],
      );
      const byAdmin = await create(as(admin), { name: 'Escalation' }, base);
      assert.equal(byAdmin.team_id, team.id);
    });

    test('a plain member gets 403, a non-member and an unknown team 404', async () => {
      const m = await req(as(member), 'POST', base, { name: 'Nope', duration_minutes: 30 });
      assert.equal(m.statusCode, 403);
      assert.deepEqual(body(m), { error: 'Forbidden', code: 'forbidden' });
      const o = await req(as(outsider), 'POST', base, { name: 'Nope', duration_minutes: 30 });
      assert.equal(o.statusCode, 404);
      assert.deepEqual(body(o), { error: 'Not found', code: 'not_found' });
      assert.equal((await req(as(owner), 'POST', `/v1/orgs/${org.slug}/teams/no-such-team/event-types`, { name: 'Nope', duration_minutes: 30 })).statusCode, 404);
    });

    test('team members list and read them; outsiders get 404; plain members may not change them', async () => {
      const e = await create(as(owner), { name: 'Onboarding' }, base);
      const listed = body<{ event_types: EventType[] }>(await req(as(member), 'GET', '/v1/event-types')).event_types;
      assert.ok(listed.some((x) => x.id === e.id));
      assert.equal(body<EventType>(await req(as(member), 'GET', `/v1/event-types/${e.id}`)).booking_url, e.booking_url);
      const outsiderList = body<{ event_types: EventType[] }>(await req(as(outsider), 'GET', '/v1/event-types')).event_types;
      assert.ok(!outsiderList.some((x) => x.id === e.id));
      assert.equal((await req(as(outsider), 'GET', `/v1/event-types/${e.id}`)).statusCode, 404);
      assert.equal((await req(as(member), 'PATCH', `/v1/event-types/${e.id}`, { name: 'Mine now' })).statusCode, 403);
      assert.equal((await req(as(admin), 'PATCH', `/v1/event-types/${e.id}`, { name: 'Onboarding 2' })).statusCode, 200);
    });

    test('the public slots route of a team event type answers its slots', async () => {
      await create(as(owner), { name: 'Team Slots', slug: 'team-slots' }, base);
      const res = await t.app.inject({ url: `/v1/slots/${org.slug}/${team.slug}/team-slots?date=2026-01-07` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(starts(body<Slots>(res)), halfHours('2026-01-07', '09:00', '17:00'));
      assert.equal((await t.app.inject({ url: `/v1/slots/${org.slug}/${team.slug}/nothing?date=2026-01-07` })).statusCode, 404);
    });
  });

  describe('availability', () => {
    let std: EventType;
    before(async () => {
      std = await create(as(alice), { name: 'Standard', slug: 'standard' });
    });

    test('the default schedule in UTC gives 16 half-hour slots on Wednesday 2026-01-07, in UTC', async () => {
      const s = await slotsOf(as(alice), std.id, '2026-01-07');
      assert.deepEqual(Object.keys(s).sort(), ['date', 'event_type_id', 'slots', 'timezone']);
      assert.deepEqual([s.date, s.event_type_id, s.timezone], ['2026-01-07', std.id, 'UTC']);
      assert.equal(s.slots.length, 16);
      assert.deepEqual(starts(s), halfHours('2026-01-07', '09:00', '17:00'));
      assert.deepEqual(s.slots[0], { start_time: '2026-01-07T09:00:00.000Z', end_time: '2026-01-07T09:30:00.000Z' });
      assert.deepEqual(s.slots[15], { start_time: '2026-01-07T16:30:00.000Z', end_time: '2026-01-07T17:00:00.000Z' });
    });

    test('the public slots route answers the same, without credentials', async () => {
      const res = await t.app.inject({ url: `/v1/slots/${alice.slug}/standard?date=2026-01-07` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), await slotsOf(as(alice), std.id, '2026-01-07'));
    });

    test("today's slots that start before now are gone; weekends have none", async () => {
      t.clock.set('2026-01-05T12:10:00.000Z');
      try {
        assert.deepEqual(starts(await slotsOf(as(alice), std.id, '2026-01-05')), halfHours('2026-01-05', '12:30', '17:00'));
      } finally {
        t.clock.set(NOW);
      }
      assert.deepEqual((await slotsOf(as(alice), std.id, '2026-01-10')).slots, []);
      assert.deepEqual((await slotsOf(as(alice), std.id, '2026-01-02')).slots, [], 'a past day');
    });

    test('date is a day in the requested timezone', async () => {
      // Wednesday in Tokyo runs from Tuesday 15:00Z to Wednesday 15:00Z.
      const s = await slotsOf(as(alice), std.id, '2026-01-07', 'Asia/Tokyo');
      assert.equal(s.timezone, 'Asia/Tokyo');
      assert.deepEqual(starts(s), [...halfHours('2026-01-06', '15:00', '17:00'), ...halfHours('2026-01-07', '09:00', '15:00')]);
    });

    test("the schedule is read in its own zone (Paris is UTC+1 in January)", async () => {
      const e = await create(as(alice), { name: 'Paris mornings', availability: { timezone: 'Europe/Paris', weekly: [{ day: 'wed', start: '09:00', end: '11:00' }] } });
      assert.deepEqual(starts(await slotsOf(as(alice), e.id, '2026-01-07')), halfHours('2026-01-07', '08:00', '10:00'));
    });

    test('422 for a missing field, an impossible date or an unknown zone; 404 for an unknown user or event', async () => {
      for (const q of ['date=2026-01-07', `event_type_id=${std.id}`, `event_type_id=${std.id}&date=2026-02-30`, `event_type_id=${std.id}&date=07-01-2026`, `event_type_id=${std.id}&date=2026-01-07&timezone=Mars/Base`]) {
        const res = await req(as(alice), 'GET', `/v1/availability?${q}`);
        assert.equal(res.statusCode, 422, `${q}: ${res.body}`);
        assert.equal(body<ErrorBody>(res).code, 'validation_failed');
      }
      for (const [q, field] of [
        ['', 'date'],
        ['?date=2026-02-30', 'date'],
        ['?date=2026-01-07&timezone=Mars/Base', 'timezone'],
      ] as const) {
        const res = await t.app.inject({ url: `/v1/slots/${alice.slug}/standard${q}` });
        assert.equal(res.statusCode, 422, `${q}: ${res.body}`);
        assert.ok(body<ErrorBody>(res).details?.some((d) => d.field === field), res.body);
      }
      assert.equal((await t.app.inject({ url: `/v1/slots/nobody-at-all/standard?date=2026-01-07` })).statusCode, 404);
      assert.equal((await t.app.inject({ url: `/v1/slots/${alice.slug}/no-such-event?date=2026-01-07` })).statusCode, 404);
      assert.equal((await req(as(alice), 'GET', '/v1/availability?event_type_id=999999&date=2026-01-07')).statusCode, 404);
      const bobs = await create(as(bob), { name: 'Bob only' });
      assert.equal((await req(as(alice), 'GET', `/v1/availability?event_type_id=${bobs.id}&date=2026-01-07`)).statusCode, 404);
    });

    test('a test-mode event type has availability through its own key and none publicly', async () => {
      const e = await create(aliceTest, { name: 'Sandbox only', slug: 'sandbox-only' });
      assert.equal((await slotsOf(aliceTest, e.id, '2026-01-07')).slots.length, 16);
      assert.equal((await req(as(alice), 'GET', `/v1/availability?event_type_id=${e.id}&date=2026-01-07`)).statusCode, 404);
      assert.equal((await t.app.inject({ url: `/v1/slots/${alice.slug}/sandbox-only?date=2026-01-07` })).statusCode, 404);
    });

    test('min_notice_hours removes the slots too close to now', async () => {
      const e = await create(as(alice), { name: 'Notice', min_notice_hours: 24 });
      // Now is Monday 12:00Z: Tuesday opens at 12:00Z.
      assert.deepEqual(starts(await slotsOf(as(alice), e.id, '2026-01-06')).slice(0, 2), ['2026-01-06T12:00:00.000Z', '2026-01-06T12:30:00.000Z']);
      assert.equal((await slotsOf(as(alice), e.id, '2026-01-06')).slots.length, 10);
      assert.deepEqual((await slotsOf(as(alice), e.id, '2026-01-05')).slots, []);
      assert.equal((await slotsOf(as(alice), e.id, '2026-01-07')).slots.length, 16);
    });

    test('max_advance_days removes the slots too far ahead', async () => {
      const e = await create(as(alice), { name: 'Soon only', max_advance_days: 3 });
      // The horizon is Thursday 12:00Z.
      assert.equal((await slotsOf(as(alice), e.id, '2026-01-07')).slots.length, 16);
      const thu = starts(await slotsOf(as(alice), e.id, '2026-01-08'));
      assert.ok(thu.includes('2026-01-08T11:30:00.000Z'));
      assert.ok(!thu.includes('2026-01-08T12:30:00.000Z'));
      assert.deepEqual((await slotsOf(as(alice), e.id, '2026-01-09')).slots, []);
      assert.equal((await slotsOf(as(alice), std.id, '2026-03-05')).slots.length, 16, 'the default horizon is 60 days');
      assert.deepEqual((await slotsOf(as(alice), std.id, '2026-03-09')).slots, []);
    });

    test('a blackout date has no slots', async () => {
      const e = await create(as(alice), { name: 'Holiday', blackout_dates: ['2026-01-07'] });
      assert.deepEqual((await slotsOf(as(alice), e.id, '2026-01-07')).slots, []);
      assert.equal((await slotsOf(as(alice), e.id, '2026-01-08')).slots.length, 16);
    });

    test('slot_interval_minutes sets the grid; the duration sets the length', async () => {
      const e = await create(as(alice), { name: 'Quarter grid', slot_interval_minutes: 15 });
      const s = await slotsOf(as(alice), e.id, '2026-01-07');
      assert.equal(s.slots.length, 31);
      assert.deepEqual(s.slots[1], { start_time: '2026-01-07T09:15:00.000Z', end_time: '2026-01-07T09:45:00.000Z' });
      assert.equal(s.slots[30]!.start_time, '2026-01-07T16:30:00.000Z');
    });

    test('buffers keep free time around a booking', async () => {
      const u = await userOn('free', 'Bea Buffer');
      const e = await create(as(u), { name: 'Buffered', slug: 'buffered', buffer_after_minutes: 30 });
      await book(u, 'buffered', '2026-01-07T10:00:00.000Z', 1);
      const left = starts(await slotsOf(as(u), e.id, '2026-01-07'));
      const gone = halfHours('2026-01-07', '09:00', '17:00').filter((s) => !left.includes(s));
      // 09:30 would run into the booking's start with its own 30 minutes after; 10:30 into the booking's buffer.
      assert.deepEqual(gone, ['2026-01-07T09:30:00.000Z', '2026-01-07T10:00:00.000Z', '2026-01-07T10:30:00.000Z']);
    });

    test('max_bookings_per_day closes a day once it is full', async () => {
      const u = await userOn('free', 'Max Perday');
      const e = await create(as(u), { name: 'Two a day', slug: 'two-a-day', max_bookings_per_day: 2 });
      await book(u, 'two-a-day', '2026-01-07T09:00:00.000Z', 1);
      assert.equal((await slotsOf(as(u), e.id, '2026-01-07')).slots.length, 15);
      await book(u, 'two-a-day', '2026-01-07T14:00:00.000Z', 2);
      assert.deepEqual((await slotsOf(as(u), e.id, '2026-01-07')).slots, []);
      assert.equal((await slotsOf(as(u), e.id, '2026-01-08')).slots.length, 16);
    });

    test("a booking of another of the host's event types takes the host's time", async () => {
      const u = await userOn('free', 'Hana Host');
      const a = await create(as(u), { name: 'Type A', slug: 'type-a' });
      await create(as(u), { name: 'Type B', slug: 'type-b' });
      await book(u, 'type-b', '2026-01-07T11:00:00.000Z', 1);
      assert.ok(!starts(await slotsOf(as(u), a.id, '2026-01-07')).includes('2026-01-07T11:00:00.000Z'));
    });
  });
});
