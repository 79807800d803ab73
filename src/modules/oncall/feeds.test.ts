// Shifts in calendars: each schedule's private ICS feed, the user's own feed, and the CalDAV
// calendar a person chose for write-back (Radicale, a real CalDAV server).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';
import { makeCalendar, startRadicale, type Radicale } from '../../../test/radicale.js';
import { processDue, type Senders } from '../deliveries/worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { syncShiftCalendars } from './index.js';

interface Event {
  uid: string;
  summary: string;
  start: string;
  end: string;
}

/** Reads an iCalendar text from stdin with python's `icalendar`: the number of events, the first's summary and start. */
const PY_READ = [
  'import sys, icalendar',
  "events = icalendar.Calendar.from_ical(sys.stdin.buffer.read()).walk('VEVENT')",
  'print(len(events))',
  "print(str(events[0]['SUMMARY']))",
  "print(events[0].decoded('DTSTART').isoformat())",
].join('\n');

/** The events of an iCalendar text, read by ical.js (a strict RFC 5545 parser), in order. */
function events(ics: string): Event[] {
  const comp = new ICAL.Component(ICAL.parse(ics) as unknown[]);
  return comp.getAllSubcomponents('vevent').map((v) => {
    const e = new ICAL.Event(v);
    return { uid: e.uid, summary: e.summary, start: e.startDate.toJSDate().toISOString(), end: e.endDate.toJSDate().toISOString() };
  });
}

describe('shift feeds and calendar write-back', () => {
  let w: DispatchWorld;
  let dav: Radicale;
  let senders: Senders;
  let base: string;
  before(async () => {
    dav = await startRadicale();
    // Dozens of writes reach Radicale at once (one batch of the outbox): a loaded machine needs time.
    w = await dispatchWorld({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', CALENDAR_TIMEOUT_MS: '30000' });
    senders = createSenders(w.t.ctx);
    w.t.clock.set('2026-03-02T12:00:00.000Z');
    await signInAgain(w); // sessions last 14 days: the ones made at the world's start have ended
    base = `/v1/orgs/${w.orgSlug}/schedules`;
    await w.ok(w.as(w.admin), 'POST', base, {
      name: 'Water network',
      time_zone: 'Europe/London',
      layers: [{ id: 'days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }],
    });
  });
  after(async () => {
    await w?.close();
    await dav?.close();
  });

  /** Sends every calendar write queued, and checks that each reached Radicale. */
  async function deliverAll() {
    while ((await processDue(w.t.ctx, senders)) > 0);
    const rows = await w.t.ctx.db.selectFrom('outbox').select(['status', 'last_error']).where('kind', '=', 'calendar').execute();
    assert.deepEqual(rows.filter((r) => r.status !== 'sent'), [], 'every calendar write was sent');
  }

  const fetchFeed = async (url: string) => {
    const res = await w.call({}, 'GET', new URL(url).pathname);
    return res;
  };

  test('a schedule’s feed: one event per final shift, 30 days back to 90 ahead, strict iCalendar', async () => {
    const { url } = await w.ok<{ url: string }>(w.as(w.ann), 'GET', `${base}/water-network/feed`);
    assert.match(url, /^http:\/\/muster\.test\/calendar\/schedules\/.+\.ics$/);
    const res = await fetchFeed(url);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/calendar/);
    assert.ok(res.body.split('\n').slice(0, -1).every((line) => line.endsWith('\r')), 'every line ends with CRLF');
    assert.match(res.body, /^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\nPRODID:/);
    assert.match(res.body, /TRANSP:TRANSPARENT/, 'shifts are free time in the reader’s calendar');
    const list = events(res.body);
    // The schedule began now: from 12:00 today to 90 days ahead, a shift a day.
    assert.deepEqual(list.slice(0, 3).map((e) => [e.summary, e.start, e.end]), [
      ['On call: Ann Responder', '2026-03-02T12:00:00.000Z', '2026-03-03T09:00:00.000Z'],
      ['On call: Ben Responder', '2026-03-03T09:00:00.000Z', '2026-03-04T09:00:00.000Z'],
      ['On call: Ann Responder', '2026-03-04T09:00:00.000Z', '2026-03-05T09:00:00.000Z'],
    ]);
    assert.equal(list.length, 91);
    assert.equal(list[list.length - 1]!.end, '2026-05-31T12:00:00.000Z');
    // After the clocks change (29 March) the handoff is still 09:00 in London: 08:00Z.
    assert.ok(list.some((e) => e.start === '2026-03-30T08:00:00.000Z'));
    assert.equal(new Set(list.map((e) => e.uid)).size, list.length, 'a UID per shift');
    assert.equal((await fetchFeed(url)).body, res.body, 'the same feed twice is the same text');

    // python `icalendar` (Debian's python3-icalendar) reads it too, as calendar tools built on it do.
    const py = spawnSync('/usr/bin/python3', ['-c', PY_READ], { input: res.body, encoding: 'utf8' });
    assert.equal(py.status, 0, `python icalendar: ${py.stderr || py.error?.message} (apt-get install -y python3-icalendar)`);
    assert.deepEqual(py.stdout.trim().split('\n'), ['91', 'On call: Ann Responder', '2026-03-02T12:00:00+00:00']);

    const rotated = await w.ok<{ url: string }>(w.as(w.admin), 'POST', `${base}/water-network/feed/rotate`, undefined, 200);
    assert.notEqual(rotated.url, url);
    assert.equal((await fetchFeed(url)).statusCode, 404, 'the old link stops working');
    assert.equal((await fetchFeed(rotated.url)).statusCode, 200);
    assert.equal((await w.call({}, 'GET', '/calendar/schedules/1-1.forged.ics')).statusCode, 404);
  });

  test('the user’s own feed carries their shifts as "On call: <schedule>", beside their bookings', async () => {
    const { url } = await w.ok<{ url: string }>(w.as(w.ann), 'GET', '/v1/calendar');
    const res = await fetchFeed(url);
    assert.equal(res.statusCode, 200);
    const list = events(res.body).filter((e) => e.summary.startsWith('On call:'));
    assert.ok(list.every((e) => e.summary === 'On call: Water network'));
    assert.deepEqual(list.slice(0, 2).map((e) => [e.start, e.end]), [['2026-03-02T12:00:00.000Z', '2026-03-03T09:00:00.000Z'], ['2026-03-04T09:00:00.000Z', '2026-03-05T09:00:00.000Z']]);
    assert.equal(list.length, 46, "every other day of the 90: Ann's turns only");
  });

  test('CalDAV write-back: shifts are PUT into the chosen calendar, updated and deleted as the schedule changes', async () => {
    await makeCalendar(dav, '/ada/oncall/', 'On call');
    const conn = await w.ok<{ id: number }>(w.as(w.ann), 'POST', '/v1/calendars', { kind: 'caldav', url: `${dav.origin}/ada/`, username: dav.username, password: dav.password });
    await w.ok(w.as(w.ann), 'PATCH', `/v1/calendars/${conn.id}`, { busy_calendars: [], write_calendar: `${dav.origin}/ada/oncall/` }, 200);
    const queued = await syncShiftCalendars(w.t.ctx);
    // Her turns (every other day) that end within the next 90 days from today's midnight.
    assert.equal(queued, 45);
    await deliverAll();
    const stored = async (start: string) => dav.request('GET', `/ada/oncall/shift-1-${w.ann.id}-${Date.parse(start)}.ics`);
    const first = await stored('2026-03-04T09:00:00.000Z');
    assert.equal(first.status, 200);
    assert.match(first.body, /SUMMARY:On call: Water network/);
    assert.match(first.body, /DTSTART:20260304T090000Z/);
    assert.doesNotMatch(first.body, /METHOD:/);
    assert.match(first.body, /TRANSP:TRANSPARENT/, 'on call is free time: it blocks no booking');
    assert.equal(await syncShiftCalendars(w.t.ctx), 0, 'nothing changed: nothing written');

    // From Wednesday noon Ben has every turn: Ann's current shift ends then, her later ones go.
    w.t.clock.set('2026-03-04T12:00:00.000Z');
    await w.ok(w.as(w.admin), 'PATCH', `${base}/water-network`, { layers: [{ id: 'days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ben.id] }] }, 200);
    assert.equal(await syncShiftCalendars(w.t.ctx), 44, 'one shortened, 43 deleted');
    await deliverAll();
    assert.match((await stored('2026-03-04T09:00:00.000Z')).body, /DTEND:20260304T120000Z/);
    assert.equal((await stored('2026-03-06T09:00:00.000Z')).status, 404);
    assert.equal((await stored('2026-03-02T12:00:00.000Z')).status, 200, 'Monday’s shift stays as it was');
    assert.equal(await syncShiftCalendars(w.t.ctx), 0);
  });
});
