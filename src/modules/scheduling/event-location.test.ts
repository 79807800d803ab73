import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { ALL_WEEK } from '../../../test/peers.js';
import { invitationIcs, type Invitation } from '../deliveries/ics.js';

// Issue 20: the event type's meeting place (an address or a video link) on the booking page, in
// the emails and in the invitation.
interface EmailPayload {
  subject: string;
  text: string;
  ics?: Invitation;
}
const START = '2026-01-06T15:00:00.000Z';
const PLACE = 'https://meet.example.com/abc-defg-hij';

describe('event type location', () => {
  let t: TestApp;
  let host: TestUser;
  let etId: number;
  let slug: string;
  const emails = async (topic: string) => {
    const rows = await t.ctx.db.selectFrom('outbox').select(['payload']).where('topic', '=', topic).orderBy('id').execute();
    return rows.map((r) => JSON.parse(r.payload) as EmailPayload);
  };

  before(async () => {
    t = await buildTestApp();
    host = await signUp(t.app, { name: 'Lou Location' });
    const et = await t.app.inject({
      method: 'POST',
      url: '/v1/event-types',
      headers: { cookie: host.cookie },
      payload: { name: 'Video call', duration_minutes: 30, availability: ALL_WEEK, location_type: 'video', location: `  ${PLACE} ` },
    });
    assert.equal(et.statusCode, 201, et.body);
    ({ id: etId, slug } = body<{ id: number; slug: string }>(et));
  });
  after(() => t.close());

  test('is stored trimmed, answered, changed and cleared; too long is 422', async () => {
    const got = body<{ location: string | null }>(await t.app.inject({ method: 'GET', url: `/v1/event-types/${etId}`, headers: { cookie: host.cookie } }));
    assert.equal(got.location, PLACE);
    const long = await t.app.inject({ method: 'PATCH', url: `/v1/event-types/${etId}`, headers: { cookie: host.cookie }, payload: { location: 'x'.repeat(501) } });
    assert.equal(long.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(long).details[0]?.field, 'location');
    const blank = await t.app.inject({ method: 'PATCH', url: `/v1/event-types/${etId}`, headers: { cookie: host.cookie }, payload: { location: '   ' } });
    assert.equal(body<{ location: string | null }>(blank).location, null, 'blank is none');
    const back = await t.app.inject({ method: 'PATCH', url: `/v1/event-types/${etId}`, headers: { cookie: host.cookie }, payload: { location: PLACE } });
    assert.equal(body<{ location: string | null }>(back).location, PLACE);
  });

  test('the public booking page data carries it', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/book/${host.slug}/${slug}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body<{ location: string | null }>(res).location, PLACE);
  });

  test('emails say where and the invitation has it as LOCATION', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${host.slug}/${slug}`,
      payload: { attendee_name: 'Vic Visitor', attendee_email: 'vic@example.com', start_time: START, timezone: 'Europe/Berlin' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const [toAttendee] = await emails('booking.created');
    assert.ok(toAttendee!.text.includes(`Where: ${PLACE}`), toAttendee!.text);
    const [toHost] = await emails('booking.created.host');
    assert.ok(toHost!.text.includes(`Where: ${PLACE}`), toHost!.text);
    const cal = new ICAL.Component(ICAL.parse(invitationIcs(toAttendee!.ics!)) as unknown[]);
    assert.equal(cal.getFirstSubcomponent('vevent')!.getFirstPropertyValue('location'), PLACE);
  });
});
