import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { computeSlots, dayRange, isValidDate } from './availability.js';
import type { BusyBooking, Host, Rules, Schedule, Slot, Weekday, WeeklyWindow } from './availability.js';

// Explicit inputs only: epoch ms from ISO strings, slots asserted as ISO strings.
const MIN = 60_000;
const HOUR = 60 * MIN;
const t = (iso: string): number => {
  const ms = Date.parse(iso);
  assert.ok(Number.isFinite(ms), `bad ISO in test: ${iso}`);
  return ms;
};
const iso = (ms: number): string => new Date(ms).toISOString();
const starts = (slots: Slot[]): string[] => slots.map((s) => iso(s.start));
/** `count` ISO instants from `first`, `stepMinutes` apart in absolute time. */
const grid = (first: string, count: number, stepMinutes: number): string[] =>
  Array.from({ length: count }, (_, i) => iso(t(first) + i * stepMinutes * MIN));

const NOW = t('2026-01-01T00:00:00.000Z');

function rules(over: Partial<Rules> = {}): Rules {
  return {
    durationMinutes: 30,
    intervalMinutes: 30,
    bufferBeforeMinutes: 0,
    bufferAfterMinutes: 0,
    minNoticeHours: 0,
    maxAdvanceDays: 3650,
    maxBookingsPerDay: null,
    blackoutDates: new Set<string>(),
    ...over,
  };
}

function windows(days: Weekday[], start: string, end: string): WeeklyWindow[] {
  return days.map((day) => ({ day, start, end }));
}
const WEEKDAYS_MF: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];
const ALL_DAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

function booking(start: string, end: string, over: Partial<BusyBooking> = {}): BusyBooking {
  return { start: t(start), end: t(end), bufferBeforeMinutes: 0, bufferAfterMinutes: 0, sameEventType: true, ...over };
}
const host = (id: number, bookings: BusyBooking[] = []): Host => ({ id, bookings });
const FREE = [host(1)];

const paris: Schedule = { timezone: 'Europe/Paris', weekly: windows(WEEKDAYS_MF, '09:00', '17:00') };
const london: Schedule = { timezone: 'Europe/London', weekly: windows(WEEKDAYS_MF, '09:00', '17:00') };
/** A UTC schedule keeps the arithmetic of buffer/notice cases obvious: Wednesday 09:00-12:00Z. */
const utcWed: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '12:00' }] };
const UTC_WED = '2026-01-14'; // a Wednesday
const utcQuery = { date: UTC_WED, timezone: 'UTC', now: NOW };
const utcWedAll = grid('2026-01-14T09:00:00.000Z', 6, 30); // 09:00..11:30Z

/** The slots of the UTC Wednesday that are missing compared to a free host. */
function blocked(slots: Slot[]): string[] {
  const have = new Set(starts(slots));
  return utcWedAll.filter((s) => !have.has(s));
}

describe('isValidDate', () => {
  test('accepts a real calendar date', () => {
    assert.equal(isValidDate('2026-02-28'), true);
    assert.equal(isValidDate('2028-02-29'), true, 'leap day');
  });
  test('refuses impossible dates, wrong shapes and the empty string', () => {
    for (const bad of ['2026-02-30', '2026-02-29', '2026-13-01', '2026-1-1', '', '2026-01-01T00:00', ' 2026-01-01']) {
      assert.equal(isValidDate(bad), false, JSON.stringify(bad));
    }
  });
});

describe('dayRange', () => {
  test('an ordinary day is 24 hours from local midnight', () => {
    const r = dayRange('2026-01-14', 'Europe/Paris');
    assert.equal(iso(r.start), '2026-01-13T23:00:00.000Z');
    assert.equal(r.end - r.start, 24 * HOUR);
  });

  const dstDays: [string, string, string, number][] = [
    ['America/New_York', '2026-03-08', '2026-03-08T05:00:00.000Z', 23], // spring forward
    ['America/New_York', '2026-11-01', '2026-11-01T04:00:00.000Z', 25], // fall back
    ['Australia/Sydney', '2026-10-04', '2026-10-03T14:00:00.000Z', 23], // spring forward (southern)
    ['Australia/Sydney', '2026-04-05', '2026-04-04T13:00:00.000Z', 25], // fall back (southern)
  ];
  for (const [zone, date, start, hours] of dstDays) {
    test(`${date} in ${zone} has ${hours} hours`, () => {
      const r = dayRange(date, zone);
      assert.equal(iso(r.start), start);
      assert.equal(r.end - r.start, hours * HOUR);
    });
  }
});

describe('computeSlots: weekly windows in the schedule zone', () => {
  test('winter Wednesday in Paris (UTC+1): 16 slots 08:00Z..15:30Z', () => {
    const slots = computeSlots(paris, rules(), FREE, { date: '2026-01-14', timezone: 'Europe/Paris', now: NOW });
    assert.deepEqual(starts(slots), grid('2026-01-14T08:00:00.000Z', 16, 30));
    assert.ok(slots.every((s) => s.end - s.start === 30 * MIN));
    assert.ok(slots.every((s) => s.hostIds.length === 1 && s.hostIds[0] === 1));
  });

  test('summer Wednesday in Paris (UTC+2): 16 slots 07:00Z..14:30Z', () => {
    const slots = computeSlots(paris, rules(), FREE, { date: '2026-06-10', timezone: 'Europe/Paris', now: NOW });
    assert.deepEqual(starts(slots), grid('2026-06-10T07:00:00.000Z', 16, 30));
  });

  test('Saturday has no window and no slots', () => {
    assert.deepEqual(computeSlots(paris, rules(), FREE, { date: '2026-01-17', timezone: 'Europe/Paris', now: NOW }), []);
  });

  test('an end of 24:00 reaches local midnight', () => {
    const s: Schedule = { timezone: 'Europe/Paris', weekly: [{ day: 'wed', start: '23:00', end: '24:00' }] };
    const slots = computeSlots(s, rules(), FREE, { date: '2026-01-14', timezone: 'Europe/Paris', now: NOW });
    assert.deepEqual(starts(slots), ['2026-01-14T22:00:00.000Z', '2026-01-14T22:30:00.000Z']);
    assert.equal(iso(slots[1]!.end), '2026-01-14T23:00:00.000Z');
  });

  test('a window shorter than one duration gives none', () => {
    const s: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '09:20' }] };
    assert.deepEqual(computeSlots(s, rules(), FREE, utcQuery), []);
  });

  test('two windows on one day both count', () => {
    const s: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '10:00' }, { day: 'wed', start: '14:00', end: '15:00' }] };
    assert.deepEqual(starts(computeSlots(s, rules(), FREE, utcQuery)), [
      '2026-01-14T09:00:00.000Z',
      '2026-01-14T09:30:00.000Z',
      '2026-01-14T14:00:00.000Z',
      '2026-01-14T14:30:00.000Z',
    ]);
  });

  test('windows listed out of order or overlapping still give sorted, unique slots', () => {
    const s: Schedule = {
      timezone: 'UTC',
      weekly: [{ day: 'wed', start: '14:00', end: '15:00' }, { day: 'wed', start: '09:00', end: '10:00' }, { day: 'wed', start: '09:30', end: '10:30' }],
    };
    assert.deepEqual(starts(computeSlots(s, rules(), FREE, utcQuery)), [
      '2026-01-14T09:00:00.000Z',
      '2026-01-14T09:30:00.000Z',
      '2026-01-14T10:00:00.000Z',
      '2026-01-14T14:00:00.000Z',
      '2026-01-14T14:30:00.000Z',
    ]);
  });

  test('slots lie fully inside their window: 45 min in 09:00-10:00 on a 30-min grid gives only 09:00', () => {
    const s: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '10:00' }] };
    const slots = computeSlots(s, rules({ durationMinutes: 45, intervalMinutes: 30 }), FREE, utcQuery);
    assert.deepEqual(starts(slots), ['2026-01-14T09:00:00.000Z']);
    assert.equal(iso(slots[0]!.end), '2026-01-14T09:45:00.000Z');
  });

  test('interval different from duration: 20-min grid, 30-min slots in 09:00-10:00 gives 09:00 and 09:20', () => {
    const s: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '10:00' }] };
    const slots = computeSlots(s, rules({ durationMinutes: 30, intervalMinutes: 20 }), FREE, utcQuery);
    assert.deepEqual(starts(slots), ['2026-01-14T09:00:00.000Z', '2026-01-14T09:20:00.000Z']);
    assert.deepEqual(slots.map((x) => iso(x.end)), ['2026-01-14T09:30:00.000Z', '2026-01-14T09:50:00.000Z']);
  });
});

describe('computeSlots: DST days', () => {
  const allDay = (zone: string): Schedule => ({ timezone: zone, weekly: windows(ALL_DAYS, '00:00', '24:00') });
  const hourly = rules({ durationMinutes: 60, intervalMinutes: 60 });
  const cases: [string, string, number][] = [
    ['America/New_York', '2026-03-08', 23],
    ['America/New_York', '2026-11-01', 25],
    ['Australia/Sydney', '2026-10-04', 23],
    ['Australia/Sydney', '2026-04-05', 25],
  ];
  for (const [zone, date, n] of cases) {
    test(`00:00-24:00 hourly on ${date} in ${zone}: ${n} slots, one hour apart, no duplicates`, () => {
      const slots = computeSlots(allDay(zone), hourly, FREE, { date, timezone: zone, now: NOW });
      const day = dayRange(date, zone);
      assert.equal(slots.length, n);
      assert.equal(slots[0]!.start, day.start);
      assert.equal(slots.at(-1)!.end, day.end);
      for (let i = 1; i < slots.length; i++) assert.equal(slots[i]!.start - slots[i - 1]!.start, HOUR, `gap before slot ${i}`);
      assert.equal(new Set(slots.map((s) => s.start)).size, n, 'no duplicated start');
      assert.deepEqual(starts(slots), grid(iso(day.start), n, 60));
    });
  }

  test('01:00-04:00 on the New York fall-back day: absolute grid from the window start (first 01:00 EDT to 04:00 EST)', () => {
    // Observed: the ambiguous 01:00 resolves to the first occurrence (EDT, 05:00Z) and 04:00 is EST (09:00Z),
    // so the window is 4 absolute hours and gives 4 hourly slots: 01:00 EDT, 01:00 EST, 02:00 EST, 03:00 EST.
    const s: Schedule = { timezone: 'America/New_York', weekly: [{ day: 'sun', start: '01:00', end: '04:00' }] };
    const slots = computeSlots(s, rules({ durationMinutes: 60, intervalMinutes: 60 }), FREE, { date: '2026-11-01', timezone: 'America/New_York', now: NOW });
    assert.deepEqual(starts(slots), grid('2026-11-01T05:00:00.000Z', 4, 60));
    assert.equal(iso(slots.at(-1)!.end), '2026-11-01T09:00:00.000Z');
  });

  test('a window start inside the spring-forward gap moves forward (02:30 -> 03:30 EDT)', () => {
    // Observed behaviour, documented: 02:30 does not exist on 2026-03-08 in New York.
    const s: Schedule = { timezone: 'America/New_York', weekly: [{ day: 'sun', start: '02:30', end: '04:00' }] };
    const slots = computeSlots(s, rules(), FREE, { date: '2026-03-08', timezone: 'America/New_York', now: NOW });
    assert.deepEqual(starts(slots), ['2026-03-08T07:30:00.000Z']);
  });
});

describe('computeSlots: a date requested in another zone than the schedule', () => {
  test('2026-06-10 in Asia/Tokyo spans London afternoon of June 9 and morning of June 10', () => {
    const slots = computeSlots(london, rules(), FREE, { date: '2026-06-10', timezone: 'Asia/Tokyo', now: NOW });
    const day = dayRange('2026-06-10', 'Asia/Tokyo');
    assert.equal(iso(day.start), '2026-06-09T15:00:00.000Z');
    assert.equal(iso(day.end), '2026-06-10T15:00:00.000Z');
    assert.deepEqual(starts(slots), [
      ...grid('2026-06-09T15:00:00.000Z', 2, 30), // London June 9 afternoon, until 16:00Z
      ...grid('2026-06-10T08:00:00.000Z', 14, 30), // London June 10 from 08:00Z, up to the Tokyo midnight
    ]);
    assert.equal(iso(slots[0]!.start), '2026-06-09T15:00:00.000Z');
    assert.equal(iso(slots[1]!.end), '2026-06-09T16:00:00.000Z');
    assert.equal(iso(slots.at(-1)!.start), '2026-06-10T14:30:00.000Z');
  });

  test('2026-06-10 in Pacific/Honolulu spans London June 10 from 10:00Z and June 11 until 10:00Z', () => {
    const slots = computeSlots(london, rules(), FREE, { date: '2026-06-10', timezone: 'Pacific/Honolulu', now: NOW });
    const day = dayRange('2026-06-10', 'Pacific/Honolulu');
    assert.equal(iso(day.start), '2026-06-10T10:00:00.000Z');
    assert.equal(iso(day.end), '2026-06-11T10:00:00.000Z');
    assert.equal(iso(slots[0]!.start), '2026-06-10T10:00:00.000Z');
    assert.equal(iso(slots.at(-1)!.start), '2026-06-11T09:30:00.000Z');
    assert.deepEqual(starts(slots), [...grid('2026-06-10T10:00:00.000Z', 12, 30), ...grid('2026-06-11T08:00:00.000Z', 4, 30)]);
  });
});

describe('computeSlots: buffers on both sides', () => {
  // Existing booking 10:00-10:30Z; without any buffer only the 10:00 slot is taken.
  const at10 = (over: Partial<BusyBooking> = {}) => [host(1, [booking('2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z', over)])];

  test('no buffers: the booking blocks only its own slot', () => {
    assert.deepEqual(blocked(computeSlots(utcWed, rules(), at10(), utcQuery)), ['2026-01-14T10:00:00.000Z']);
  });

  test("existing booking's after-buffer 15 blocks the 10:30 slot and not 11:00", () => {
    const slots = computeSlots(utcWed, rules(), at10({ bufferAfterMinutes: 15 }), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z']);
  });

  test("existing booking's before-buffer 15 blocks the 09:30 slot and not 09:00", () => {
    const slots = computeSlots(utcWed, rules(), at10({ bufferBeforeMinutes: 15 }), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T09:30:00.000Z', '2026-01-14T10:00:00.000Z']);
  });

  test("new event's before-buffer 15 blocks the 10:30 slot (needs 10:15 free) and not 11:00 or 09:30", () => {
    const slots = computeSlots(utcWed, rules({ bufferBeforeMinutes: 15 }), at10(), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z']);
  });

  test("new event's after-buffer 15 blocks the 09:30 slot (needs 10:15 free) and not 09:00 or 10:30", () => {
    const slots = computeSlots(utcWed, rules({ bufferAfterMinutes: 15 }), at10(), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T09:30:00.000Z', '2026-01-14T10:00:00.000Z']);
  });

  test('buffers that exactly touch do not block (existing after 30 leaves 11:00; new after 30 leaves 09:00)', () => {
    assert.deepEqual(blocked(computeSlots(utcWed, rules(), at10({ bufferAfterMinutes: 30 }), utcQuery)), ['2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z']);
    assert.deepEqual(blocked(computeSlots(utcWed, rules({ bufferAfterMinutes: 30 }), at10(), utcQuery)), ['2026-01-14T09:30:00.000Z', '2026-01-14T10:00:00.000Z']);
  });

  test("combined: existing after 20 plus new before 15 add up (35 min after 10:30 blocks 11:00)", () => {
    const slots = computeSlots(utcWed, rules({ bufferBeforeMinutes: 15 }), at10({ bufferAfterMinutes: 20 }), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z', '2026-01-14T11:00:00.000Z']);
  });

  test('combined: existing before 20 plus new after 15 add up (35 min before 10:00 blocks 09:00)', () => {
    const slots = computeSlots(utcWed, rules({ bufferAfterMinutes: 15 }), at10({ bufferBeforeMinutes: 20 }), utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T09:00:00.000Z', '2026-01-14T09:30:00.000Z', '2026-01-14T10:00:00.000Z']);
  });

  test('the slot grid does not move for buffers', () => {
    const slots = computeSlots(utcWed, rules({ bufferBeforeMinutes: 10 }), at10({ bufferAfterMinutes: 15 }), utcQuery);
    // 10:30 needs 10:20 free but the booking is busy until 10:45; the next slot stays on the grid at 11:00, not 10:55.
    assert.deepEqual(starts(slots), ['2026-01-14T09:00:00.000Z', '2026-01-14T09:30:00.000Z', '2026-01-14T11:00:00.000Z', '2026-01-14T11:30:00.000Z']);
  });
});

describe('computeSlots: notice, advance, blackout', () => {
  test('minimum notice: slots before now + notice vanish, the boundary slot is kept', () => {
    const now = t('2026-01-14T08:00:00.000Z');
    const slots = computeSlots(utcWed, rules({ minNoticeHours: 2 }), FREE, { ...utcQuery, now });
    assert.deepEqual(starts(slots), grid('2026-01-14T10:00:00.000Z', 4, 30));
  });

  test('minimum notice one millisecond past a slot removes that slot', () => {
    const now = t('2026-01-14T08:00:00.001Z');
    const slots = computeSlots(utcWed, rules({ minNoticeHours: 2 }), FREE, { ...utcQuery, now });
    assert.deepEqual(starts(slots), grid('2026-01-14T10:30:00.000Z', 3, 30));
  });

  test('maximum advance: a slot starting after now + days vanishes, the boundary slot is kept', () => {
    const now = t('2026-01-12T10:00:00.000Z');
    const slots = computeSlots(utcWed, rules({ maxAdvanceDays: 2 }), FREE, { ...utcQuery, now });
    assert.deepEqual(starts(slots), grid('2026-01-14T09:00:00.000Z', 3, 30)); // 09:00, 09:30, 10:00 (= now + 2 days)
  });

  test('blackout date of the schedule zone has no slots; the next day is untouched', () => {
    const r = rules({ blackoutDates: new Set(['2026-01-14']) });
    assert.deepEqual(computeSlots(paris, r, FREE, { date: '2026-01-14', timezone: 'Europe/Paris', now: NOW }), []);
    assert.deepEqual(starts(computeSlots(paris, r, FREE, { date: '2026-01-15', timezone: 'Europe/Paris', now: NOW })), grid('2026-01-15T08:00:00.000Z', 16, 30));
    assert.deepEqual(starts(computeSlots(paris, r, FREE, { date: '2026-01-13', timezone: 'Europe/Paris', now: NOW })), grid('2026-01-13T08:00:00.000Z', 16, 30));
  });

  test("blackout is a day of the schedule's zone even when the request is in another zone", () => {
    // Tokyo June 10 = London June 9 afternoon + June 10 morning; blacking out London's June 9 leaves only June 10.
    const slots = computeSlots(london, rules({ blackoutDates: new Set(['2026-06-09']) }), FREE, { date: '2026-06-10', timezone: 'Asia/Tokyo', now: NOW });
    assert.deepEqual(starts(slots), grid('2026-06-10T08:00:00.000Z', 14, 30));
  });
});

describe('computeSlots: maximum bookings per day', () => {
  // Schedule in New York (EDT, UTC-4 in June): 09:00-17:00 local = 13:00Z-21:00Z, 16 slots.
  const ny: Schedule = { timezone: 'America/New_York', weekly: windows(WEEKDAYS_MF, '09:00', '17:00') };
  const q = (date: string) => ({ date, timezone: 'America/New_York', now: NOW });
  const full16 = (date: string) => grid(`${date}T13:00:00.000Z`, 16, 30);
  // Same-type bookings on NY June 10: one at 10:00 local, one at 23:30 local (= June 11 03:30Z).
  const morning = booking('2026-06-10T14:00:00.000Z', '2026-06-10T14:30:00.000Z');
  const lateNight = booking('2026-06-11T03:30:00.000Z', '2026-06-11T04:00:00.000Z');

  test('two same-type bookings on the local day (one at 23:30 local, next day in UTC) fill the day at max 2', () => {
    const hosts = [host(1, [morning, lateNight])];
    const r = rules({ maxBookingsPerDay: 2 });
    assert.deepEqual(computeSlots(ny, r, hosts, q('2026-06-10')), []);
    assert.deepEqual(starts(computeSlots(ny, r, hosts, q('2026-06-11'))), full16('2026-06-11'), 'the UTC day of the late booking is unaffected');
    assert.deepEqual(starts(computeSlots(ny, r, hosts, q('2026-06-09'))), full16('2026-06-09'));
  });

  test('below the maximum the day stays open (only the booked time is blocked)', () => {
    const slots = computeSlots(ny, rules({ maxBookingsPerDay: 3 }), [host(1, [morning, lateNight])], q('2026-06-10'));
    assert.deepEqual(starts(slots), full16('2026-06-10').filter((s) => s !== '2026-06-10T14:00:00.000Z'));
  });

  test('a booking of another event type does not count but still blocks its time', () => {
    const other = booking('2026-06-10T16:00:00.000Z', '2026-06-10T16:30:00.000Z', { sameEventType: false });
    const slots = computeSlots(ny, rules({ maxBookingsPerDay: 2 }), [host(1, [morning, other])], q('2026-06-10'));
    assert.deepEqual(starts(slots), full16('2026-06-10').filter((s) => s !== '2026-06-10T14:00:00.000Z' && s !== '2026-06-10T16:00:00.000Z'));
  });

  test('a same-type booking just after local midnight counts for the next local day, not this one', () => {
    // 00:30 EDT June 11 = 04:30Z June 11; with the morning booking of June 10 that is one per day each.
    const after = booking('2026-06-11T04:30:00.000Z', '2026-06-11T05:00:00.000Z');
    const r = rules({ maxBookingsPerDay: 2 });
    assert.equal(computeSlots(ny, r, [host(1, [morning, after])], q('2026-06-10')).length, 15);
    assert.equal(computeSlots(ny, r, [host(1, [morning, after])], q('2026-06-11')).length, 16);
  });
});

describe('computeSlots: team', () => {
  const busy10 = booking('2026-01-14T10:00:00.000Z', '2026-01-14T11:00:00.000Z');

  test('one host busy 10:00-11:00: 10:00 and 10:30 are offered with only the free host', () => {
    const slots = computeSlots(utcWed, rules(), [host(1), host(2, [busy10])], utcQuery);
    assert.deepEqual(starts(slots), utcWedAll);
    assert.deepEqual(
      slots.map((s) => [iso(s.start), s.hostIds]),
      [
        ['2026-01-14T09:00:00.000Z', [1, 2]],
        ['2026-01-14T09:30:00.000Z', [1, 2]],
        ['2026-01-14T10:00:00.000Z', [1]],
        ['2026-01-14T10:30:00.000Z', [1]],
        ['2026-01-14T11:00:00.000Z', [1, 2]],
        ['2026-01-14T11:30:00.000Z', [1, 2]],
      ],
    );
  });

  test('when both hosts are busy the slot is gone', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy10]), host(2, [busy10])], utcQuery);
    assert.deepEqual(blocked(slots), ['2026-01-14T10:00:00.000Z', '2026-01-14T10:30:00.000Z']);
  });

  test('hostIds preserve the order of the hosts given', () => {
    const slots = computeSlots(utcWed, rules(), [host(7), host(3), host(5)], utcQuery);
    assert.ok(slots.length === 6 && slots.every((s) => JSON.stringify(s.hostIds) === '[7,3,5]'));
  });

  test('per-day max applies per host', () => {
    const two = [booking('2026-01-14T07:00:00.000Z', '2026-01-14T07:30:00.000Z'), booking('2026-01-14T13:00:00.000Z', '2026-01-14T13:30:00.000Z')];
    const r = rules({ maxBookingsPerDay: 2 });
    const oneFull = computeSlots(utcWed, r, [host(1, two), host(2)], utcQuery);
    assert.deepEqual(starts(oneFull), utcWedAll);
    assert.ok(oneFull.every((s) => JSON.stringify(s.hostIds) === '[2]'));
    assert.deepEqual(computeSlots(utcWed, r, [host(1, two), host(2, two)], utcQuery), []);
  });
});

describe('computeSlots: rules combined', () => {
  // London schedule, Tokyo request of 2026-06-10 (= 06-09T15:00Z..06-10T15:00Z), 30-min slots,
  // new before-buffer 20, notice 3 h from now 06-09T12:00Z (earliest 15:00Z, kept), advance 1 day (latest 06-10T12:00Z, kept), max 2 per day.
  // Host 1: one other-type booking 06-10 09:00-09:30Z with after-buffer 15 (busy to 09:45, +20 blocks the 10:00 slot).
  // Host 2: two same-type bookings on London June 10 (06-09T23:30Z = 00:30 BST June 10, and 06-10T07:00Z): full on June 10 only.
  const hosts = [
    host(1, [booking('2026-06-10T09:00:00.000Z', '2026-06-10T09:30:00.000Z', { bufferAfterMinutes: 15, sameEventType: false })]),
    host(2, [booking('2026-06-09T23:30:00.000Z', '2026-06-10T00:00:00.000Z'), booking('2026-06-10T07:00:00.000Z', '2026-06-10T07:30:00.000Z')]),
  ];
  const base = { bufferBeforeMinutes: 20, minNoticeHours: 3, maxAdvanceDays: 1, maxBookingsPerDay: 2 };
  const q = { date: '2026-06-10', timezone: 'Asia/Tokyo', now: t('2026-06-09T12:00:00.000Z') };

  test('zones, notice, advance, buffers, per-day max and team together', () => {
    const slots = computeSlots(london, rules(base), hosts, q);
    assert.deepEqual(
      slots.map((s) => [iso(s.start), s.hostIds]),
      [
        ['2026-06-09T15:00:00.000Z', [1, 2]],
        ['2026-06-09T15:30:00.000Z', [1, 2]],
        ['2026-06-10T08:00:00.000Z', [1]],
        ['2026-06-10T08:30:00.000Z', [1]],
        ['2026-06-10T10:30:00.000Z', [1]],
        ['2026-06-10T11:00:00.000Z', [1]],
        ['2026-06-10T11:30:00.000Z', [1]],
        ['2026-06-10T12:00:00.000Z', [1]],
      ],
    );
  });

  test('plus a blackout of London June 9: only the June 10 part remains', () => {
    const slots = computeSlots(london, rules({ ...base, blackoutDates: new Set(['2026-06-09']) }), hosts, q);
    assert.deepEqual(starts(slots), ['2026-06-10T08:00:00.000Z', '2026-06-10T08:30:00.000Z', ...grid('2026-06-10T10:30:00.000Z', 4, 30)]);
  });
});
