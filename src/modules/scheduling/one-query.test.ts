import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { setPlan, signUp, type TestUser } from '../../../test/factories.js';
import { insertConnection, replaceBusy } from '../calendars/calendars.repository.js';

// The field notes' lesson from Cal.com: per-host queries made team schedules take 20 s. The busy
// time of all hosts of a team must come from one query on bookings, whatever the team's size.
describe('team availability reads all bookings in one query', () => {
  let t: TestApp;
  let root: TestUser;
  const queries: string[] = [];
  const always = { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) };

  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => queries.push(sql) });
    root = await signUp(t.app, { name: 'Root' });
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
    await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: { cookie: root.cookie }, payload: { name: 'Crew', slug: 'crew' } });
  });
  after(() => t.close());

  /** A team of `size` members with one booking each on the day, and its public slots URL. */
  async function team(slug: string, size: number): Promise<string> {
    const as = { cookie: root.cookie };
    await t.app.inject({ method: 'POST', url: '/v1/orgs/crew/teams', headers: as, payload: { name: slug, slug } });
    // The creator joined it (issue 33); the team's hosts here are the `size` members below.
    await t.app.inject({ method: 'DELETE', url: `/v1/orgs/crew/teams/${slug}/members/${root.id}`, headers: as });
    for (let i = 0; i < size; i++) {
      const m = await signUp(t.app, { name: `${slug} ${i}` });
      await t.app.inject({ method: 'POST', url: '/v1/orgs/crew/members', headers: as, payload: { email: m.email } });
      await t.app.inject({ method: 'POST', url: `/v1/orgs/crew/teams/${slug}/members`, headers: as, payload: { user_id: m.id } });
    }
    const et = await t.app.inject({ method: 'POST', url: `/v1/orgs/crew/teams/${slug}/event-types`, headers: as, payload: { name: 'Visit', slug: 'visit', duration_minutes: 60, availability: always } });
    assert.equal(et.statusCode, 201, et.body);
    for (let i = 0; i < size; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/v1/book/crew/${slug}/visit`,
        payload: { attendee_name: 'A', attendee_email: 'a@example.com', start_time: `2026-01-08T${String(i).padStart(2, '0')}:00:00.000Z` },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    return `/v1/slots/crew/${slug}/visit?date=2026-01-08`;
  }

  async function bookingQueries(url: string): Promise<number> {
    queries.length = 0;
    const res = await t.app.inject({ url });
    assert.equal(res.statusCode, 200);
    assert.ok(body<{ slots: unknown[] }>(res).slots.length > 0);
    return queries.filter((q) => /from "bookings"/.test(q)).length;
  }

  test('listing event types reads each owner once, not once per event type', async () => {
    const owner = await signUp(t.app, { name: 'Lister' });
    await setPlan(t.app, root.cookie, owner.id, 'starter');
    for (const name of ['One', 'Two', 'Three']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: owner.cookie }, payload: { name, duration_minutes: 30 } });
      assert.equal(res.statusCode, 201, res.body);
    }
    queries.length = 0;
    const list = await t.app.inject({ url: '/v1/event-types', headers: { cookie: owner.cookie } });
    assert.equal(body<{ event_types: unknown[] }>(list).event_types.length, 3);
    assert.equal(queries.filter((q) => /from "users"/.test(q)).length, 1);
  });

  test('one host and five hosts cost the same single query on bookings', async () => {
    const small = await bookingQueries(await team('solo', 1));
    const large = await bookingQueries(await team('five', 5));
    assert.equal(small, 1);
    assert.equal(large, 1);
  });

  test("hosts' external calendar time is read in that same one query, and routing passes over a host busy there", async () => {
    const url = await team('cal', 3);
    const members = await t.ctx.db
      .selectFrom('team_members')
      .innerJoin('teams', 'teams.id', 'team_members.team_id')
      .select('team_members.user_id')
      .where('teams.slug', '=', 'cal')
      .orderBy('team_members.id')
      .execute();
    const now = '2026-01-05T12:00:00.000Z';
    // The first two members are busy at 10:00 in their own calendars (and 500 more intervals each).
    for (const { user_id } of members.slice(0, 2)) {
      const c = await insertConnection(t.ctx.db, { user_id, livemode: 1, kind: 'ics', name: 'Work', url: 'https://calendar.example/x.ics', status: 'ok', calendars: {}, busy_count: 501, created_at: now, updated_at: now });
      const busy = [{ start: Date.parse('2026-01-08T10:00:00Z'), end: Date.parse('2026-01-08T11:00:00Z') }];
      for (let i = 0; i < 500; i++) busy.push({ start: Date.parse('2026-02-01T00:00:00Z') + i * 3_600_000, end: Date.parse('2026-02-01T00:30:00Z') + i * 3_600_000 });
      await replaceBusy(t.ctx.db, c.id, user_id, 1, busy);
    }
    queries.length = 0;
    const res = await t.app.inject({ url });
    assert.equal(res.statusCode, 200);
    const reading = queries.filter((q) => /from "bookings"|from "calendar_busy"/.test(q));
    assert.equal(reading.length, 1, reading.join('\n'));
    assert.match(reading[0]!, /from "calendar_busy"/);
    const booked = await t.app.inject({ method: 'POST', url: '/v1/book/crew/cal/visit', payload: { attendee_name: 'B', attendee_email: 'b@example.com', start_time: '2026-01-08T10:00:00.000Z' } });
    assert.equal(booked.statusCode, 201, booked.body);
    assert.equal(body<{ host_id: number }>(booked).host_id, members[2]!.user_id);
    const again = await t.app.inject({ method: 'POST', url: '/v1/book/crew/cal/visit', payload: { attendee_name: 'C', attendee_email: 'c@example.com', start_time: '2026-01-08T10:00:00.000Z' } });
    assert.equal(again.statusCode, 409, 'the two others are busy in their calendars');
  });
});
