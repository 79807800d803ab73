import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { insertConnection, replaceBusy } from '../calendars/calendars.repository.js';

// Calendar intervals carry no buffers, so availability reads them only where a slot of the day, with
// the event type's buffers, could meet them (a narrower range than bookings'). These intervals lie
// just outside the requested day and must still be found at both ends.
describe("calendar busy time read only as far as the day's slots reach", () => {
  let t: TestApp;
  let host: TestUser;
  const always = { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) };
  before(async () => {
    t = await buildTestApp(); // the clock stands at 2026-01-05T12:00Z
    host = await signUp(t.app, { name: 'Edge Host' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/event-types',
      headers: { cookie: host.cookie },
      payload: { name: 'Visit', duration_minutes: 60, buffer_before_minutes: 30, buffer_after_minutes: 45, availability: always },
    });
    assert.equal(res.statusCode, 201, res.body);
    const now = '2026-01-05T12:00:00.000Z';
    const c = await insertConnection(t.ctx.db, { user_id: host.id, livemode: 1, kind: 'ics', name: 'Work', url: 'https://calendar.example/x.ics', status: 'ok', calendars: {}, busy_count: 2, created_at: now, updated_at: now });
    await replaceBusy(t.ctx.db, c.id, host.id, 1, [
      // Ends 20 minutes before 2026-01-07 begins: inside the 00:00 slot's 30-minute before-buffer.
      { start: Date.parse('2026-01-06T23:00:00Z'), end: Date.parse('2026-01-06T23:40:00Z') },
      // Starts 30 minutes after the day: inside the 23:00 slot's 45-minute after-buffer.
      { start: Date.parse('2026-01-08T00:30:00Z'), end: Date.parse('2026-01-08T01:00:00Z') },
      // An hour and a half after 2026-01-09 ends in Kolkata (18:30Z): only the after-buffer of its 18:00Z slot reaches it.
      { start: Date.parse('2026-01-09T19:30:00Z'), end: Date.parse('2026-01-09T20:00:00Z') },
    ]);
  });
  after(() => t.close());

  test('an interval before the day blocks its first slot through the before-buffer, one after it the last slot through the after-buffer', async () => {
    const res = await t.app.inject({ url: `/v1/slots/${host.slug}/visit?date=2026-01-07` });
    assert.equal(res.statusCode, 200, res.body);
    const starts = body<{ slots: { start_time: string }[] }>(res).slots.map((s) => s.start_time.slice(11, 16));
    // Hourly slots 01:00 .. 22:00: 00:00 and 23:00 are taken by the neighbouring days' intervals.
    assert.deepEqual(starts, Array.from({ length: 22 }, (_, i) => `${String(i + 1).padStart(2, '0')}:00`));
  });

  test('a day asked in another zone: a slot ending after that day reaches an interval through its after-buffer', async () => {
    const res = await t.app.inject({ url: `/v1/slots/${host.slug}/visit?date=2026-01-09&timezone=Asia/Kolkata` });
    assert.equal(res.statusCode, 200, res.body);
    const starts = body<{ slots: { start_time: string }[] }>(res).slots.map((s) => s.start_time);
    assert.equal(starts[0], '2026-01-08T19:00:00.000Z');
    assert.equal(starts.at(-1), '2026-01-09T17:00:00.000Z', 'the 18:00Z slot (to 19:00Z, buffer to 19:45Z) is taken');
    assert.equal(starts.length, 23);
  });

  test('a booking at 23:00 is refused for the same reason', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/visit`, payload: { attendee_name: 'A', attendee_email: 'a@example.com', start_time: '2026-01-07T23:00:00.000Z' } });
    assert.equal(res.statusCode, 409, res.body);
  });
});
