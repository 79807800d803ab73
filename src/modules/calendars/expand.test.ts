import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BERLIN_VTIMEZONE, hostileZoneIcs, hostWeekIcs, manyRdatesIcs, vcalendar, vevent } from '../../../test/calendar-fixtures.js';
import { busyIntervals, CalendarLimitError, LIMITS, normalise } from './expand.js';

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

  describe('limits (issue #31): a hostile calendar is refused as a whole, after bounded work', () => {
    const refused = (ics: string, reason: RegExp) =>
      assert.throws(
        () => busyIntervals([ics], { ...window, hostZone: 'UTC' }),
        (err: unknown) => err instanceof CalendarLimitError && reason.test(err.message),
      );

    test('a time zone whose rules repeat every second from 1601, or every minute from year 0001', () => {
      refused(hostileZoneIcs('16010101T000000', 'SECONDLY'), /time zone "Probe Standard Time" changes its offset more than 20000 times/);
      refused(hostileZoneIcs('00010101T000000', 'MINUTELY'), /time zone "Probe Standard Time" changes its offset more than/);
    });

    test('RDATE and EXDATE lists beyond any real calendar', () => {
      refused(manyRdatesIcs(LIMITS.rdates + 1), /event "rdates@example.com" has more than 1000 RDATE values/);
      const exdates = Array.from({ length: LIMITS.exdates + 1 }, (_, i) => `EXDATE:${new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString().replace(/[-:]|\.\d{3}/g, '')}`);
      refused(vcalendar(vevent({ UID: 'ex', DTSTART: '20260101T000000Z', DTEND: '20260101T003000Z', RRULE: 'FREQ=HOURLY' }).slice(0, -1).concat(exdates, ['END:VEVENT'])), /more than 5000 EXDATE values/);
      // At the limit, still read.
      assert.ok(busyIntervals([manyRdatesIcs(LIMITS.rdates)], { ...window, hostZone: 'UTC' }).length > 0);
    });

    test('an event that repeats more often than the step limits allow before the window ends', () => {
      refused(vcalendar(vevent({ UID: 'minutely', DTSTART: '20250101T000000Z', DTEND: '20250101T000030Z', RRULE: 'FREQ=MINUTELY' })), /event "minutely" repeats more than 25000 times/);
      // Five series of 21,600 minutes (15 days) each, all before the window: each under its own limit, 108,000 in all.
      const before = Array.from({ length: 5 }, (_, i) => vevent({ UID: `b${i}`, DTSTART: '20260213T000000Z', DTEND: '20260213T000010Z', RRULE: 'FREQ=MINUTELY;UNTIL=20260227T235900Z' }));
      refused(vcalendar(...before), /its events repeat more than 100000 times in all/);
    });

    test('more busy intervals than a sync stores', () => {
      // 14 hourly half-hour series at different minutes: 14 x 1,464 occurrences in the two months.
      const many = Array.from({ length: 14 }, (_, i) => vevent({ UID: `m${i}`, DTSTART: `20260301T00${String(i * 2).padStart(2, '0')}00Z`, DTEND: `20260301T00${String(i * 2 + 1).padStart(2, '0')}00Z`, RRULE: 'FREQ=HOURLY' }));
      refused(vcalendar(...many), /more than 20000 busy intervals/);
    });

    test('an old series and an Outlook zone from 1601 stay well inside the limits, and far-off events cost no zone expansion', () => {
      const z = ';TZID=W. Europe Standard Time';
      const ics = vcalendar(
        BERLIN_VTIMEZONE,
        vevent({ UID: 'since-1990', [`DTSTART${z}`]: '19900105T090000', [`DTEND${z}`]: '19900105T093000', RRULE: 'FREQ=DAILY' }),
        vevent({ UID: 'far', [`DTSTART${z}`]: '99990101T090000', [`DTEND${z}`]: '99990101T100000' }),
      );
      const busy = busyIntervals([ics], { from: Date.parse('2026-03-28T00:00:00Z'), to: Date.parse('2026-03-31T00:00:00Z'), hostZone: 'UTC' });
      // 09:00 CET, then 09:00 CEST after 29 March.
      assert.deepEqual(show(busy), ['2026-03-28T08:00:00.000Z/2026-03-28T08:30:00.000Z', '2026-03-29T07:00:00.000Z/2026-03-29T07:30:00.000Z', '2026-03-30T07:00:00.000Z/2026-03-30T07:30:00.000Z']);
    });
  });
});
