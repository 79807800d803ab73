import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { ALL_WEEK } from '../../../test/peers.js';

// Issue 20: the visitor's language is recorded on the booking (the body's `language`, else the
// request's Accept-Language) and the emails to the visitor follow it for text and dates.
interface EmailPayload {
  subject: string;
  text: string;
}
interface BookingAnswer {
  id: string;
  language: string | null;
  cancel_url: string;
}

describe('booking language', () => {
  let t: TestApp;
  let host: TestUser;
  let slug: string;
  let day = 6;
  /** A fresh slot each time (all week, all day), so the bookings never collide. */
  const nextStart = () => `2026-01-${String(day++).padStart(2, '0')}T15:00:00.000Z`;
  const emailsTo = async (to: string, topic: string) => {
    const rows = await t.ctx.db.selectFrom('outbox').select(['payload']).where('recipient', '=', to).where('topic', '=', topic).orderBy('id').execute();
    return rows.map((r) => JSON.parse(r.payload) as EmailPayload);
  };
  const book = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/book/${host.slug}/${slug}`,
      headers,
      payload: { attendee_name: 'Vera Visitor', start_time: nextStart(), timezone: 'Europe/Berlin', ...payload },
    });
  const token = (b: BookingAnswer) => b.cancel_url.split('/manage/')[1]!.split('?')[0]!;

  before(async () => {
    t = await buildTestApp();
    host = await signUp(t.app, { name: 'Hanna Host' });
    const et = await t.app.inject({
      method: 'POST',
      url: '/v1/event-types',
      headers: { cookie: host.cookie },
      payload: { name: 'Erstgespräch', duration_minutes: 30, availability: ALL_WEEK, location_type: 'in_person', location: 'Hauptstraße 1, Berlin' },
    });
    assert.equal(et.statusCode, 201, et.body);
    ({ slug } = body<{ slug: string }>(et));
  });
  after(() => t.close());

  test('a booking made in German gets a German confirmation with a German date; moving and cancelling it stay German', async () => {
    const res = await book({ attendee_email: 'de@example.com', language: 'de' });
    assert.equal(res.statusCode, 201, res.body);
    const b = body<BookingAnswer>(res);
    assert.equal(b.language, 'de');

    const [confirmation] = await emailsTo('de@example.com', 'booking.created');
    assert.equal(confirmation!.subject, 'Bestätigt: Erstgespräch am Di., 6. Jan. 2026, 16:00–16:30 (Europe/Berlin)');
    assert.equal(
      confirmation!.text,
      `Ihre Buchung von Erstgespräch mit Hanna Host am Di., 6. Jan. 2026, 16:00–16:30 (Europe/Berlin) ist bestätigt.\n\nOrt: Hauptstraße 1, Berlin\n\nMöchten Sie etwas ändern?\nVerschieben: ${b.cancel_url.replace('action=cancel', 'action=reschedule')}\nAbsagen: ${b.cancel_url}`,
    );
    // The host reads English in their own zone (UTC by default).
    const [toHost] = await emailsTo(host.email, 'booking.created.host');
    assert.match(toHost!.subject, /^New booking: Erstgespräch on Tue, 6 Jan 2026, 15:00–15:30 \(UTC\)$/);

    const moved = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token(b)}/reschedule`, payload: { start_time: '2026-01-20T09:00:00.000Z' } });
    assert.equal(moved.statusCode, 200, moved.body);
    const [rescheduled] = await emailsTo('de@example.com', 'booking.rescheduled');
    assert.equal(rescheduled!.subject, 'Verschoben: Erstgespräch, jetzt am Di., 20. Jan. 2026, 10:00–10:30 (Europe/Berlin)');
    assert.match(rescheduled!.text, /^Erstgespräch findet jetzt am Di\., 20\. Jan\. 2026, 10:00–10:30 \(Europe\/Berlin\) statt\./);

    const cancelled = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${token(b)}/cancel`, payload: { reason: 'Krank' } });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const [cancellation] = await emailsTo('de@example.com', 'booking.cancelled');
    assert.equal(cancellation!.subject, 'Abgesagt: Erstgespräch am Di., 20. Jan. 2026, 10:00–10:30 (Europe/Berlin)');
    assert.equal(cancellation!.text, 'Erstgespräch am Di., 20. Jan. 2026, 10:00–10:30 (Europe/Berlin) ist abgesagt.\nGrund: Krank');
  });

  test('without a language or an Accept-Language the booking records none and the emails are English', async () => {
    const res = await book({ attendee_email: 'en@example.com' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(body<BookingAnswer>(res).language, null);
    const [confirmation] = await emailsTo('en@example.com', 'booking.created');
    assert.equal(confirmation!.subject, 'Confirmed: Erstgespräch on Wed, 7 Jan 2026, 16:00–16:30 (Europe/Berlin)');
    assert.match(confirmation!.text, /^Your booking of Erstgespräch with Hanna Host on Wed, 7 Jan 2026, 16:00–16:30 \(Europe\/Berlin\) is confirmed\.\n\nWhere: Hauptstraße 1, Berlin\n\nNeed to change it\?\n/);
  });

  test('Accept-Language decides when the body names no language; the body wins over it', async () => {
    const fromHeader = await book({ attendee_email: 'header@example.com' }, { 'accept-language': '*, fr;q=0.4, de-ch;q=0.9, en;q=0.8' });
    assert.equal(fromHeader.statusCode, 201, fromHeader.body);
    assert.equal(body<BookingAnswer>(fromHeader).language, 'de-CH');
    const [german] = await emailsTo('header@example.com', 'booking.created');
    assert.match(german!.subject, /^Bestätigt: Erstgespräch am Do\., 8\. Jan\. 2026, 16:00–16:30 \(Europe\/Berlin\)$/);

    const bodyWins = await book({ attendee_email: 'body@example.com', language: 'en-US' }, { 'accept-language': 'de-DE' });
    assert.equal(body<BookingAnswer>(bodyWins).language, 'en-US');
    const [english] = await emailsTo('body@example.com', 'booking.created');
    assert.equal(english!.subject, 'Confirmed: Erstgespräch on Fri, Jan 9, 2026, 4:00 PM–4:30 PM (Europe/Berlin)');

    // A language without a text table: English text, the date in that language.
    const french = await book({ attendee_email: 'fr@example.com', language: 'fr' });
    assert.equal(body<BookingAnswer>(french).language, 'fr');
    const [fr] = await emailsTo('fr@example.com', 'booking.created');
    assert.equal(fr!.subject, 'Confirmed: Erstgespräch on sam. 10 janv. 2026, 16:00–16:30 (Europe/Berlin)');

    // A malformed header is ignored, never an error.
    const junk = await book({ attendee_email: 'junk@example.com' }, { 'accept-language': ';;;, 12-x, en-a' });
    assert.equal(junk.statusCode, 201, junk.body);
    assert.equal(body<BookingAnswer>(junk).language, null);
  });

  test('a malformed language is 422 naming the field, and books nothing', async () => {
    for (const language of ['not a tag', 'e', 'en_US', 'en-a', 'de-' + 'x'.repeat(40), '']) {
      const res = await book({ attendee_email: 'bad@example.com', language });
      assert.equal(res.statusCode, 422, `${language}: ${res.body}`);
      assert.equal(body<{ details: { field: string }[] }>(res).details[0]?.field, 'language', `${language}: ${res.body}`);
    }
    assert.equal((await emailsTo('bad@example.com', 'booking.created')).length, 0);
  });
});
