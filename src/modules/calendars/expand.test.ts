import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hostWeekIcs, vcalendar, vevent } from '../../../test/calendar-fixtures.js';
import { busyIntervals, normalise } from './expand.js';

const window = { from: Date.parse('2026-03-01T00:00:00Z'), to: Date.parse('2026-05-01T00:00:00Z') };
const show = (xs: { start: number; end: number }[]) => xs.map((x) => `${new Date(x.start).toISOString()}/${new Date(x.end).toISOString()}`);

describe('busy intervals from iCalendar (ical.js)', () => {
  for (const tzid of ['W. Europe Standard Time', 'Europe/Berlin'] as const) {
    test(`weekly in Berlin across DST, EXDATE, moved and cancelled occurrences, all-day, transparent (TZID ${tzid})`, () => {
      const busy = show(busyIntervals([hostWeekIcs(tzid)], { ...window, hostZone: 'America/New_York' }));
      assert.deepEqual(busy, [
        '2026-03-16T09:00:00.000Z/2026-03-16T10:00:00.000Z', // 10:00 CET
        // 23 March: EXDATE. 17 March: TRANSPARENT. 18 March: Muster's own event.
        '2026-03-20T04:00:00.000Z/2026-03-21T04:00:00.000Z', // all-day = the host's New York day (EDT)
        '2026-03-30T08:00:00.000Z/2026-03-30T09:00:00.000Z', // 10:00 CEST, after the change
        '2026-04-07T12:00:00.000Z/2026-04-07T13:00:00.000Z', // 6 April moved to Tuesday 14:00
        // 13 April: CANCELLED occurrence.
        '2026-04-20T08:00:00.000Z/2026-04-20T09:00:00.000Z',
      ]);
    });
  }

  test('the window clips occurrences and a long event is cut into day-long pieces', () => {
    const ics = vcalendar(vevent({ UID: 'trip', DTSTART: '20260310T120000Z', DTEND: '20260312T180000Z' }), vevent({ UID: 'daily', DTSTART: '20260101T080000Z', DTEND: '20260101T090000Z', RRULE: 'FREQ=DAILY' }));
    const busy = show(busyIntervals([ics], { from: Date.parse('2026-03-11T00:00:00Z'), to: Date.parse('2026-03-13T00:00:00Z'), hostZone: 'UTC' }));
    assert.deepEqual(busy, [
      '2026-03-11T00:00:00.000Z/2026-03-12T00:00:00.000Z',
      '2026-03-12T00:00:00.000Z/2026-03-12T18:00:00.000Z',
    ]);
  });

  test('floating times are read in the host zone; an all-day event without DTEND is one day', () => {
    const ics = vcalendar(vevent({ UID: 'f', DTSTART: '20260310T090000', DTEND: '20260310T100000' }), vevent({ UID: 'd', 'DTSTART;VALUE=DATE': '20260312' }));
    assert.deepEqual(show(busyIntervals([ics], { ...window, hostZone: 'Asia/Tokyo' })), [
      '2026-03-10T00:00:00.000Z/2026-03-10T01:00:00.000Z',
      '2026-03-11T15:00:00.000Z/2026-03-12T15:00:00.000Z',
    ]);
  });

  test('text that is not iCalendar throws (the sync turns it into an error status)', () => {
    assert.throws(() => busyIntervals(['<html>Sign in</html>'], { ...window, hostZone: 'UTC' }));
    assert.throws(() => busyIntervals(['BEGIN:VCARD\r\nEND:VCARD'], { ...window, hostZone: 'UTC' }));
  });

  test('normalise merges overlaps and touching intervals', () => {
    assert.deepEqual(normalise([{ start: 5, end: 9 }, { start: 0, end: 5 }, { start: 20, end: 30 }, { start: 8, end: 12 }]), [{ start: 0, end: 12 }, { start: 20, end: 30 }]);
  });
});
