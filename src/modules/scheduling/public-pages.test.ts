import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';

interface PublicEventType {
  event_type_id: number;
  name: string;
  slug: string;
  description: string | null;
  duration_minutes: number;
  location_type: string;
  requires_confirmation: boolean;
  min_notice_hours: number;
  max_advance_days: number;
  host_name: string;
  team_name: string | null;
  org_name: string | null;
  booking_path: string;
  bookable_from: string;
  bookable_until: string;
}
interface Booking {
  id: string;
  status: string;
  start_time: string;
  cancel_url: string;
}
interface Slots {
  date: string;
  timezone: string;
  slots: { start_time: string; end_time: string }[];
}

// The clock of buildTestApp: Monday 2026-01-05 12:00 UTC.
const ALL_WEEK = { timezone: 'UTC', weekly: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '09:00', end: '17:00' })) };
const PUBLIC_KEYS = [
  'bookable_from',
  'bookable_until',
  'booking_path',
  'description',
  'duration_minutes',
  'event_type_id',
  'host_name',
  'location',
  'location_type',
  'max_advance_days',
  'min_notice_hours',
  'name',
  'org_name',
  'requires_confirmation',
  'slug',
  'team_name',
];
const tokenOf = (b: Booking) => /\/bookings\/manage\/([^?/]+)\?/.exec(b.cancel_url)![1]!;

describe('public page reads', () => {
  let t: TestApp;
  let root: TestUser;
  let host: TestUser;
  let owner: TestUser;
  let org: { slug: string };
  let team: { slug: string };
  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const get = (url: string, headers: Headers = {}) => t.app.inject({ method: 'GET', url, headers });
  async function create(headers: Headers, payload: object, url = '/v1/event-types') {
    const res = await t.app.inject({ method: 'POST', url, headers, payload: { duration_minutes: 30, availability: ALL_WEEK, ...payload } });
    assert.equal(res.statusCode, 201, res.body);
    return body<{ id: number; slug: string }>(res);
  }

  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    owner = await signUp(t.app, { name: 'Olga Owner' });
    await setPlan(t.app, root.cookie, owner.id, 'agency');
    await create(as(host), {
      name: 'Intro call',
      slug: 'intro',
      description: 'A first talk.',
      location_type: 'video',
      requires_confirmation: true,
      min_notice_hours: 2,
      max_advance_days: 30,
      webhook_url: 'https://hooks.example.com/secret-hook',
    });
    // Test mode: never public.
    await create({ 'x-api-key': (await createKey(t.app, host.cookie, 'test')).key }, { name: 'Sandbox', slug: 'sandbox' });
    org = body(await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: as(owner), payload: { name: 'Acme Support' } }));
    team = body(await t.app.inject({ method: 'POST', url: `/v1/orgs/${org.slug}/teams`, headers: as(owner), payload: { name: 'Front Desk', routing: 'round_robin' } }));
    // The owner, who made the team, is its member already (issue 33).
    const m = await t.app.inject({ method: 'GET', url: `/v1/orgs/${org.slug}/teams/${team.slug}/members`, headers: as(owner) });
    assert.deepEqual(body<{ members: { user_id: number; active: boolean }[] }>(m).members.map((x) => [x.user_id, x.active]), [[owner.id, true]]);
    await create(as(owner), { name: 'Support call', slug: 'support' }, `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`);
  });
  after(() => t.close());

  test('a personal event type: its public facts and nothing private', async () => {
    const res = await get(`/v1/book/${host.slug}/intro`);
    assert.equal(res.statusCode, 200, res.body);
    const e = body<PublicEventType>(res);
    assert.deepEqual(Object.keys(e).sort(), PUBLIC_KEYS);
    assert.deepEqual(
      { ...e, event_type_id: 0 },
      {
        event_type_id: 0,
        name: 'Intro call',
        slug: 'intro',
        description: 'A first talk.',
        duration_minutes: 30,
        location_type: 'video',
        location: null,
        requires_confirmation: true,
        min_notice_hours: 2,
        max_advance_days: 30,
        host_name: 'Hanna Host',
        team_name: null,
        org_name: null,
        booking_path: `/book/${host.slug}/intro`,
        bookable_from: '2026-01-05T14:00:00.000Z',
        bookable_until: '2026-02-04T12:00:00.000Z',
      },
    );
    for (const secret of ['secret-hook', host.email, 'whsec_', 'availability']) assert.ok(!res.body.includes(secret), `no ${secret} in ${res.body}`);
    // Case-insensitive like the booking POST.
    assert.equal((await get(`/v1/book/${host.slug.toUpperCase()}/INTRO`)).statusCode, 200);
  });

  test('a team event type: the team and org names, the canonical /book path', async () => {
    const res = await get(`/v1/book/${org.slug}/${team.slug}/support`);
    assert.equal(res.statusCode, 200, res.body);
    const e = body<PublicEventType>(res);
    assert.deepEqual(Object.keys(e).sort(), PUBLIC_KEYS);
    assert.deepEqual([e.name, e.host_name, e.team_name, e.org_name, e.booking_path], ['Support call', 'Front Desk', 'Front Desk', 'Acme Support', `/book/${org.slug}/${team.slug}/support`]);
    assert.ok(!res.body.includes(owner.email));
  });

  test('unknown users, teams, slugs and test-mode event types are 404', async () => {
    for (const url of [
      `/v1/book/nobody-here/intro`,
      `/v1/book/${host.slug}/nothing`,
      `/v1/book/${host.slug}/sandbox`,
      `/v1/book/${org.slug}/no-team/support`,
      `/v1/book/no-org/${team.slug}/support`,
      `/v1/book/${org.slug}/${team.slug}/nothing`,
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
    }
  });

  test('a locked event type (over the plan after a downgrade) is 404, like a missing one', async () => {
    const carol = await signUp(t.app, { name: 'Carol' });
    await setPlan(t.app, root.cookie, carol.id, 'agency');
    for (let i = 1; i <= 4; i++) await create(as(carol), { name: `Meeting ${i}`, slug: `m${i}` });
    assert.equal((await get(`/v1/book/${carol.slug}/m4`)).statusCode, 200);
    await setPlan(t.app, root.cookie, carol.id, 'free');
    assert.equal((await get(`/v1/book/${carol.slug}/m3`)).statusCode, 200);
    assert.equal((await get(`/v1/book/${carol.slug}/m4`)).statusCode, 404);
  });

  describe('the management page reads', () => {
    let booking: Booking;
    before(async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/book/${org.slug}/${team.slug}/support`,
        payload: { attendee_name: 'Ada', attendee_email: 'ada@example.com', start_time: '2026-01-06T10:00:00.000Z' },
      });
      assert.equal(res.statusCode, 201, res.body);
      booking = body<Booking>(res);
    });

    test('the event of a booking names its host and page', async () => {
      const res = await get(`/v1/bookings/manage/${tokenOf(booking)}/event`);
      assert.equal(res.statusCode, 200, res.body);
      const e = body<PublicEventType>(res);
      assert.deepEqual([e.name, e.host_name, e.team_name, e.booking_path], ['Support call', 'Olga Owner', 'Front Desk', `/book/${org.slug}/${team.slug}/support`]);
      assert.ok(!res.body.includes(owner.email));
    });

    test('slots to move to: the booking does not block its neighbours and its own start is left out', async () => {
      const res = await get(`/v1/bookings/manage/${tokenOf(booking)}/slots?date=2026-01-06&timezone=Europe/Berlin`);
      assert.equal(res.statusCode, 200, res.body);
      const s = body<Slots>(res);
      const starts = s.slots.map((x) => x.start_time);
      assert.equal(s.timezone, 'Europe/Berlin');
      assert.ok(!starts.includes('2026-01-06T10:00:00.000Z'), 'its own start is not offered');
      assert.ok(starts.includes('2026-01-06T09:30:00.000Z') && starts.includes('2026-01-06T10:30:00.000Z'), starts.join(' '));
      // The public slots of the same day do count it as busy.
      const pub = body<Slots>(await get(`/v1/slots/${org.slug}/${team.slug}/support?date=2026-01-06&timezone=Europe/Berlin`));
      assert.ok(!pub.slots.some((x) => x.start_time === '2026-01-06T10:00:00.000Z'));
      assert.equal((await get(`/v1/bookings/manage/${tokenOf(booking)}/slots?date=2026-02-30`)).statusCode, 422);
      assert.equal((await get(`/v1/bookings/manage/${tokenOf(booking)}/slots?date=2026-01-06&timezone=Mars/Base`)).statusCode, 422);
    });

    test('a forged token is 404; a cancelled booking has no slots to move to', async () => {
      const token = tokenOf(booking);
      const forged = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.slice(-1);
      assert.equal((await get(`/v1/bookings/manage/${forged}/event`)).statusCode, 404);
      assert.equal((await get(`/v1/bookings/manage/${forged}/slots?date=2026-01-06`)).statusCode, 404);
      const c = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token}/cancel`, payload: {} });
      assert.equal(c.statusCode, 200, c.body);
      assert.deepEqual(body<Slots>(await get(`/v1/bookings/manage/${token}/slots?date=2026-01-06`)).slots, []);
    });
  });
});
