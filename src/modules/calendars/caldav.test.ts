import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { BERLIN_VTIMEZONE, vcalendar, vevent } from '../../../test/calendar-fixtures.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createEventType, listDeliveries } from '../../../test/peers.js';
import { makeCalendar, startRadicale, type Radicale } from '../../../test/radicale.js';
import { processDue, type Senders } from '../deliveries/worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

interface Cal {
  id: number;
  status: string;
  error: string | null;
  busy_count: number;
  calendars: { url: string; name: string; busy: boolean; write: boolean }[];
}

const Z = ';TZID=W. Europe Standard Time';

// Radicale (a real CalDAV server) holds the host's calendars; Muster discovers them from the
// server's root URL, reads busy time, and writes, moves and deletes its bookings there.
describe('CalDAV against Radicale: discovery, busy time, writes, updates and deletes', () => {
  let t: TestApp;
  let dav: Radicale;
  let senders: Senders;
  let host: TestUser;
  let key: Headers;
  let cal: Cal;
  const url = (name: string) => `${dav.origin}/ada/${name}/`;

  before(async () => {
    dav = await startRadicale();
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', CALENDAR_TIMEOUT_MS: '3000' });
    t.clock.set('2026-03-10T12:00:00.000Z');
    senders = createSenders(t.ctx);
    host = await signUp(t.app, { name: 'Ada Host', timezone: 'Europe/Berlin' });
    key = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    await createEventType(t.app, key, { name: 'Visit', slug: 'visit', duration_minutes: 60, slot_interval_minutes: 30 });
    await makeCalendar(dav, '/ada/work/', 'Work');
    await makeCalendar(dav, '/ada/personal/', 'Personal');
    await makeCalendar(dav, '/ada/muster/', 'Bookings');
    const put = async (p: string, ics: string) => assert.equal((await dav.request('PUT', p, ics, { 'content-type': 'text/calendar' })).status, 201);
    await put(
      '/ada/work/weekly.ics',
      vcalendar(
        BERLIN_VTIMEZONE,
        vevent({ UID: 'weekly@example.com', [`DTSTART${Z}`]: '20260316T100000', [`DTEND${Z}`]: '20260316T110000', RRULE: 'FREQ=WEEKLY;BYDAY=MO;COUNT=6', [`EXDATE${Z}`]: '20260323T100000' }),
        vevent({ UID: 'weekly@example.com', [`RECURRENCE-ID${Z}`]: '20260406T100000', [`DTSTART${Z}`]: '20260407T140000', [`DTEND${Z}`]: '20260407T150000' }),
        vevent({ UID: 'weekly@example.com', [`RECURRENCE-ID${Z}`]: '20260413T100000', STATUS: 'CANCELLED', [`DTSTART${Z}`]: '20260413T100000', [`DTEND${Z}`]: '20260413T110000' }),
      ),
    );
    await put('/ada/work/free.ics', vcalendar(vevent({ UID: 'free@example.com', TRANSP: 'TRANSPARENT', DTSTART: '20260317T120000Z', DTEND: '20260317T130000Z' })));
    await put('/ada/personal/dentist.ics', vcalendar(vevent({ UID: 'dentist@example.com', DTSTART: '20260317T150000Z', DTEND: '20260317T160000Z' })));
  });
  after(async () => {
    await t?.close();
    await dav?.close();
  });

  const slots = async (day: string) => {
    const res = await t.app.inject({ url: `/v1/slots/${host.slug}/visit?date=${day}` });
    assert.equal(res.statusCode, 200, res.body);
    return body<{ slots: { start_time: string }[] }>(res).slots.map((s) => s.start_time.slice(11, 16));
  };
  const sync = async () => body<Cal>(await t.app.inject({ method: 'POST', url: `/v1/calendars/${cal.id}/sync`, headers: key }));
  const written = (id: string) => dav.request('GET', `/ada/muster/${id}.ics`);

  test('discovery from the server root finds every calendar; all count as busy until the host picks', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: key, payload: { kind: 'caldav', url: dav.origin, username: dav.username, password: dav.password } });
    assert.equal(res.statusCode, 201, res.body);
    cal = body<Cal>(res);
    assert.equal(cal.status, 'ok', cal.error ?? '');
    assert.deepEqual(cal.calendars.map((c) => [c.name, c.busy, c.write]).sort(), [['Bookings', true, false], ['Personal', true, false], ['Work', true, false]]);
    assert.equal(cal.busy_count, 5);
    assert.ok(!res.body.includes(dav.password), 'the password is never returned');
    const stored = await t.ctx.db.selectFrom('calendar_connections').select('secret').where('id', '=', cal.id).executeTakeFirstOrThrow();
    assert.ok(stored.secret && !stored.secret.includes(dav.password), 'and is stored encrypted');
  });

  test('busy time from CalDAV: Berlin weekly across DST, EXDATE, moved, cancelled, transparent', async () => {
    assert.ok(!(await slots('2026-03-16')).includes('09:00'));
    assert.ok(!(await slots('2026-03-30')).includes('08:00'));
    assert.ok((await slots('2026-03-30')).includes('09:00'));
    assert.ok((await slots('2026-03-23')).includes('09:00'));
    assert.ok(!(await slots('2026-04-07')).includes('12:00'));
    assert.ok((await slots('2026-04-13')).includes('08:00'));
    assert.ok((await slots('2026-03-17')).includes('12:00'));
    assert.ok(!(await slots('2026-03-17')).includes('15:00'), 'the personal calendar counts');
  });

  test('picking busy calendars and a write calendar; an unpicked calendar frees its time', async () => {
    const res = await t.app.inject({ method: 'PATCH', url: `/v1/calendars/${cal.id}`, headers: key, payload: { busy_calendars: [url('work'), url('muster')], write_calendar: url('muster') } });
    assert.equal(res.statusCode, 200, res.body);
    cal = body<Cal>(res);
    assert.deepEqual(cal.calendars.map((c) => [c.name, c.busy, c.write]).sort(), [['Bookings', true, true], ['Personal', false, false], ['Work', true, false]]);
    assert.equal(cal.busy_count, 4);
    assert.ok((await slots('2026-03-17')).includes('15:00'));
    const bad = await t.app.inject({ method: 'PATCH', url: `/v1/calendars/${cal.id}`, headers: key, payload: { busy_calendars: [`${dav.origin}/ada/nope/`] } });
    assert.equal(bad.statusCode, 422);
  });

  test('a booking is PUT with the invitation UID, moved on reschedule, deleted on cancel; never a self-conflict', async () => {
    const booked = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${host.slug}/visit`,
      payload: { attendee_name: 'Ben Lovelace', attendee_email: 'ben@example.com', start_time: '2026-03-17T15:00:00.000Z', notes: 'Gate code 4711; ring twice' },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const id = body<{ id: string }>(booked).id;
    await processDue(t.ctx, senders);
    const first = await written(id);
    assert.equal(first.status, 200);
    assert.match(first.body, new RegExp(`UID:${id}@muster`));
    assert.match(first.body, /DTSTART:20260317T150000Z/);
    assert.doesNotMatch(first.body, /METHOD:/);
    // What Radicale stores, read back as a calendar client would: titled from the host's side, and
    // the DESCRIPTION names who booked, their address and notes, and the booking's management page.
    const event = new ICAL.Component(ICAL.parse(first.body) as unknown[]).getFirstSubcomponent('vevent')!;
    assert.equal(event.getFirstPropertyValue('summary'), 'Visit with Ben Lovelace');
    const description = String(event.getFirstPropertyValue('description'));
    assert.match(description, /Ben Lovelace <ben@example\.com>/);
    assert.match(description, /Notes: Gate code 4711; ring twice/);
    const manage = /(http:\/\/muster\.test\/bookings\/manage\/\S+)/.exec(description)?.[1];
    assert.ok(manage, description);
    assert.equal(event.getFirstPropertyValue('url'), manage);
    const page = await t.app.inject({ url: `/v1/bookings/manage/${manage.split('/').pop()}` });
    assert.equal(page.statusCode, 200, 'the link in the description manages this booking');
    assert.equal(body<{ id: string }>(page).id, id);
    const delivery = (await listDeliveries(t.app, key)).find((d) => d.kind === 'calendar');
    assert.equal(delivery?.status, 'sent');
    assert.equal(delivery?.recipient, `${url('muster')}${id}.ics`);

    // The bookings calendar counts as busy, yet Muster's own event there adds nothing.
    const after = await sync();
    assert.equal(after.busy_count, 4);
    const moved = await t.app.inject({ method: 'POST', url: `/v1/bookings/${id}/reschedule`, headers: key, payload: { start_time: '2026-03-17T15:30:00.000Z' } });
    assert.equal(moved.statusCode, 200, moved.body);
    await processDue(t.ctx, senders);
    assert.match((await written(id)).body, /DTSTART:20260317T153000Z/);

    const cancelled = await t.app.inject({ method: 'DELETE', url: `/v1/bookings/${id}`, headers: key, payload: {} });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    await processDue(t.ctx, senders);
    assert.equal((await written(id)).status, 404);
    assert.deepEqual(
      (await listDeliveries(t.app, key)).filter((d) => d.kind === 'calendar').map((d) => [d.topic, d.status]),
      [['booking.cancelled', 'sent'], ['booking.rescheduled', 'sent'], ['booking.created', 'sent']],
    );
  });

  test('wrong credentials are an error status with the reason', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: key, payload: { kind: 'caldav', url: dav.origin, username: dav.username, password: 'wrong' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(body<Cal>(res).status, 'error');
    assert.match(body<Cal>(res).error ?? '', /refused the credentials/);
    await t.app.inject({ method: 'DELETE', url: `/v1/calendars/${body<Cal>(res).id}`, headers: key });
  });

  test('with the server down, bookings go on, the write waits for a retry, and busy time stays', async () => {
    await dav.close();
    const c = await sync();
    assert.equal(c.status, 'error');
    assert.equal(c.busy_count, 4);
    assert.ok(!(await slots('2026-03-16')).includes('09:00'));
    const booked = await t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/visit`, payload: { attendee_name: 'Cy', attendee_email: 'cy@example.com', start_time: '2026-03-18T10:00:00.000Z' } });
    assert.equal(booked.statusCode, 201, booked.body);
    await processDue(t.ctx, senders);
    const d = (await listDeliveries(t.app, key)).find((x) => x.kind === 'calendar' && x.topic === 'booking.created' && x.recipient.includes(body<{ id: string }>(booked).id));
    assert.equal(d?.status, 'pending', 'failed once, to be retried');
    assert.equal(d?.attempts, 1);
  });
});
