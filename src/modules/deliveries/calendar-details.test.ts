import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { ALL_WEEK } from '../../../test/peers.js';
import { invitationIcs, type Invitation } from './ics.js';

// Issue 14, item 13: invitations, feeds and emails that say what is true, in the reader's zone.
interface EmailPayload {
  subject: string;
  text: string;
  ics?: Invitation;
}

const START = '2026-01-06T15:00:00.000Z'; // 16:00 in Berlin, 10:00 in New York

function vevent(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text) as unknown[]);
  return cal.getFirstSubcomponent('vevent')!;
}

describe('calendar and email details', () => {
  let t: TestApp;
  let host: TestUser;
  let booking: { id: string; cancel_url: string; status: string };
  const emails = async (topic: string) => {
    const rows = await t.ctx.db.selectFrom('outbox').select(['payload', 'recipient']).where('topic', '=', topic).orderBy('id').execute();
    return rows.map((r) => ({ to: r.recipient, ...(JSON.parse(r.payload) as EmailPayload) }));
  };

  before(async () => {
    t = await buildTestApp();
    host = await signUp(t.app, { name: 'Hana Host', timezone: 'America/New_York' });
    const et = await t.app.inject({
      method: 'POST',
      url: '/v1/event-types',
      headers: { cookie: host.cookie },
      payload: { name: 'Site visit', duration_minutes: 30, availability: ALL_WEEK, requires_confirmation: true, location_type: 'in_person' },
    });
    assert.equal(et.statusCode, 201, et.body);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${host.slug}/${body<{ slug: string }>(et).slug}`,
      payload: { attendee_name: 'Anna Attendee', attendee_email: 'anna@example.com', start_time: START, timezone: 'Europe/Berlin', notes: 'Gate 4' },
    });
    assert.equal(res.statusCode, 201, res.body);
    booking = body(res);
    assert.equal(booking.status, 'pending');
  });
  after(() => t.close());

  test("a pending booking's invitation is TENTATIVE, names the attendee, and carries location, description and the manage link", async () => {
    const [mail] = await emails('booking.created');
    const text = invitationIcs(mail!.ics!);
    assert.ok(text.endsWith('END:VCALENDAR\r\n'), 'CRLF after END:VCALENDAR');
    assert.ok(!/[^\r]\n/.test(text), 'every line ends with CRLF');
    const e = vevent(text);
    assert.equal(e.getFirstPropertyValue('status'), 'TENTATIVE');
    const attendee = e.getFirstProperty('attendee')!;
    assert.equal(attendee.getParameter('cn'), 'Anna Attendee');
    assert.equal(attendee.getParameter('partstat'), 'ACCEPTED');
    assert.equal(e.getFirstPropertyValue('location'), 'In person');
    const manage = booking.cancel_url.split('?')[0]!;
    assert.equal(String(e.getFirstPropertyValue('url')), manage);
    assert.match(String(e.getFirstPropertyValue('description')), /Gate 4/);
    assert.ok(String(e.getFirstPropertyValue('description')).includes(manage));
    const hostMail = (await emails('booking.created.host'))[0]!;
    const hostEvent = vevent(invitationIcs(hostMail.ics!));
    assert.equal(hostEvent.getFirstPropertyValue('status'), 'TENTATIVE');
    assert.equal(hostEvent.getFirstPropertyValue('url'), null, "the host's copy does not carry the attendee's link");
  });

  test('emails show the time in the reader’s zone, with the zone named', async () => {
    const [attendee] = await emails('booking.created');
    assert.match(attendee!.subject, /Tue, 6 Jan 2026, 16:00–16:30 \(Europe\/Berlin\)/);
    assert.ok(!attendee!.text.includes('UTC'), attendee!.text);
    const [toHost] = await emails('booking.created.host');
    assert.match(toHost!.subject, /Tue, 6 Jan 2026, 10:00–10:30 \(America\/New_York\)/);
    assert.match(toHost!.text, /10:00–10:30 \(America\/New_York\)/);
  });

  test('once confirmed, the invitation says CONFIRMED with a higher SEQUENCE', async () => {
    t.clock.advance(60_000);
    const [toHost] = await emails('booking.created.host');
    const confirm = new URL(/Confirm: (\S+)/.exec(toHost!.text)![1]!).pathname;
    const res = await t.app.inject({ method: 'POST', url: confirm, headers: { accept: 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    const [mail] = await emails('booking.confirmed');
    const e = vevent(invitationIcs(mail!.ics!));
    assert.equal(e.getFirstPropertyValue('status'), 'CONFIRMED');
    assert.ok(Number(e.getFirstPropertyValue('sequence')) > 0);
  });

  test("the private feed's DTSTAMP is the booking's last change: two fetches are the same text", async () => {
    const { url } = body<{ url: string }>(await t.app.inject({ url: '/v1/calendar', headers: { cookie: host.cookie } }));
    const path = new URL(url).pathname;
    const first = await t.app.inject({ url: path });
    t.clock.advance(3_600_000);
    const second = await t.app.inject({ url: path });
    assert.equal(first.statusCode, 200);
    assert.equal(second.body, first.body);
    assert.ok(first.body.endsWith('END:VCALENDAR\r\n'));
    const row = await t.ctx.db.selectFrom('bookings').select('updated_at').where('id', '=', booking.id).executeTakeFirstOrThrow();
    const stamp = vevent(first.body).getFirstPropertyValue('dtstamp') as ICAL.Time;
    assert.equal(stamp.toJSDate().getTime(), Math.floor(Date.parse(row.updated_at) / 1000) * 1000);
  });

  test("the attendee's cancel reason reaches the host's email and GET /v1/bookings", async () => {
    const token = /\/bookings\/manage\/([^?/]+)/.exec(booking.cancel_url)![1]!;
    const res = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token}/cancel`, payload: { reason: 'Flight moved to Friday' } });
    assert.equal(res.statusCode, 200, res.body);
    const [toHost] = await emails('booking.cancelled.host');
    assert.match(toHost!.text, /Reason: Flight moved to Friday/);
    const list = body<{ bookings: { id: string; cancel_reason: string | null }[] }>(await t.app.inject({ url: '/v1/bookings', headers: { cookie: host.cookie } }));
    assert.equal(list.bookings.find((b) => b.id === booking.id)?.cancel_reason, 'Flight moved to Friday');
    const [toAttendee] = await emails('booking.cancelled');
    assert.equal(vevent(invitationIcs(toAttendee!.ics!)).getFirstPropertyValue('status'), 'CANCELLED');
  });
});
