import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';

// The busy-time query reads bookings by a bounded range of start times (for speed); a booking
// that starts before the requested day but runs into it must still be found and block it.
describe('busy time of bookings that start before the requested day', () => {
  let t: TestApp;
  let host: TestUser;
  const always = { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) };
  before(async () => {
    t = await buildTestApp(); // the clock stands at 2026-01-05T12:00Z
    host = await signUp(t.app, { name: 'Long Host' });
    for (const [name, duration_minutes] of [['Day shift', 1440], ['Visit', 60]] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: host.cookie }, payload: { name, duration_minutes, availability: always } });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(() => t.close());

  const visitSlots = async (date: string, timezone: string) =>
    body<{ slots: { start_time: string }[] }>(await t.app.inject({ url: `/v1/slots/${host.slug}/visit?date=${date}&timezone=${timezone}` })).slots.map((s) => s.start_time);

  test('a day-long booking blocks every hour it covers, also of a day asked for in another zone', async () => {
    const booked = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${host.slug}/day-shift`,
      payload: { attendee_name: 'Crew', attendee_email: 'crew@example.com', start_time: '2026-01-07T00:00:00.000Z' },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    assert.deepEqual(await visitSlots('2026-01-07', 'UTC'), [], 'the whole UTC day is taken');

    // 2026-01-08 in Tokyo is 2026-01-07T15:00Z..2026-01-08T15:00Z: it starts nine hours into the
    // booking, which began 15 hours before that day did.
    const tokyo = await visitSlots('2026-01-08', 'Asia/Tokyo');
    assert.equal(tokyo[0], '2026-01-08T00:00:00.000Z', 'nothing before the booking ends');
    assert.equal(tokyo.length, 15);
  });
});
