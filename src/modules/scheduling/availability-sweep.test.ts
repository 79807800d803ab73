// The merged-interval sweep of the availability engine (issue #18's benchmark): busy time is merged
// once per host and the sorted slots are swept with one pointer. These tests pin the edges a sweep
// gets wrong (touching, overlapping and contained intervals, slots that end where busy time starts,
// DST days), and compare the engine with the plain definition (every slot against every interval)
// on seeded random inputs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DateTime } from 'luxon';
import { computeSlots, mergeIntervals, sweepFree, WEEKDAYS } from './availability.js';
import type { BusyBooking, Host, Interval, Rules, Schedule, Slot, Weekday } from './availability.js';

const MIN = 60_000;
const t = (iso: string): number => {
  const ms = Date.parse(iso);
  assert.ok(Number.isFinite(ms), `bad ISO in test: ${iso}`);
  return ms;
};
const iso = (ms: number): string => new Date(ms).toISOString();
const iv = (start: number, end: number): Interval => ({ start, end });
const starts = (slots: Slot[]): string[] => slots.map((s) => iso(s.start).slice(11, 16));
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
/** A calendar interval: no buffers of its own, never counted toward the per-day maximum. */
const busy = (start: string, end: string, over: Partial<BusyBooking> = {}): BusyBooking => ({
  start: t(start),
  end: t(end),
  bufferBeforeMinutes: 0,
  bufferAfterMinutes: 0,
  sameEventType: false,
  ...over,
});
const host = (id: number, bookings: BusyBooking[] = []): Host => ({ id, bookings });
/** Wednesday 2026-01-14, 09:00-12:00 UTC: slots 09:00 .. 11:30. */
const utcWed: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '09:00', end: '12:00' }] };
const onWed = { date: '2026-01-14', timezone: 'UTC', now: NOW };
const W = (hhmm: string) => `2026-01-14T${hhmm}:00.000Z`;

describe('mergeIntervals', () => {
  test('touching intervals become one', () => {
    assert.deepEqual(mergeIntervals([iv(1, 2), iv(2, 3), iv(3, 5)]), [iv(1, 5)]);
  });
  test('overlapping intervals become one, whatever their order', () => {
    assert.deepEqual(mergeIntervals([iv(4, 9), iv(1, 5), iv(8, 12)]), [iv(1, 12)]);
  });
  test('a contained interval does not shorten the one around it', () => {
    assert.deepEqual(mergeIntervals([iv(1, 10), iv(2, 3), iv(4, 6)]), [iv(1, 10)]);
    assert.deepEqual(mergeIntervals([iv(2, 3), iv(1, 10)]), [iv(1, 10)]);
  });
  test('disjoint intervals stay apart and come out sorted', () => {
    assert.deepEqual(mergeIntervals([iv(7, 8), iv(1, 2), iv(4, 5)]), [iv(1, 2), iv(4, 5), iv(7, 8)]);
  });
  test('equal starts keep the longest end; a zero-length interval inside another disappears', () => {
    assert.deepEqual(mergeIntervals([iv(1, 3), iv(1, 6), iv(1, 2), iv(4, 4)]), [iv(1, 6)]);
  });
  test('the input is left as it was', () => {
    const input = [iv(3, 4), iv(1, 3)];
    mergeIntervals(input);
    assert.deepEqual(input, [iv(3, 4), iv(1, 3)]);
  });
  test('nothing in, nothing out', () => {
    assert.deepEqual(mergeIntervals([]), []);
  });
});

describe('sweepFree', () => {
  const merged = [iv(10, 20), iv(30, 40)];
  test('a range ending where busy time starts, or starting where it ends, is free', () => {
    assert.deepEqual(sweepFree(merged, [iv(5, 10), iv(20, 30), iv(40, 50)]), [true, true, true]);
  });
  test('one millisecond of overlap at either edge is not free', () => {
    assert.deepEqual(sweepFree(merged, [iv(5, 11), iv(19, 25), iv(29, 31), iv(39, 45)]), [false, false, false, false]);
  });
  test('a range inside busy time, and one containing busy time, are not free', () => {
    assert.deepEqual(sweepFree(merged, [iv(12, 15), iv(25, 45)]), [false, false]);
  });
  test('ranges after a long interval: the pointer moves past it once and still sees the next one', () => {
    const long = [iv(0, 100), iv(150, 160)];
    assert.deepEqual(sweepFree(long, [iv(50, 60), iv(90, 110), iv(100, 110), iv(140, 150), iv(145, 155), iv(160, 170)]), [false, false, true, true, false, true]);
  });
  test('no busy time: everything is free', () => {
    assert.deepEqual(sweepFree([], [iv(1, 2), iv(3, 4)]), [true, true]);
  });
  test('zero-length busy points block only the ranges strictly around them', () => {
    // Merged input may hold a point where a calendar event starts and ends at once.
    assert.deepEqual(sweepFree([iv(10, 10)], [iv(0, 10), iv(5, 15), iv(10, 20)]), [true, false, true]);
  });
});

describe('computeSlots with calendar intervals: edges', () => {
  test('touching intervals 10:00-10:30 and 10:30-11:00 block exactly 10:00 and 10:30', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy(W('10:30'), W('11:00')), busy(W('10:00'), W('10:30'))])], onWed);
    assert.deepEqual(starts(slots), ['09:00', '09:30', '11:00', '11:30']);
  });
  test('overlapping intervals 09:45-10:15 and 10:05-10:40 block 09:30 to 10:30', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy(W('09:45'), W('10:15')), busy(W('10:05'), W('10:40'))])], onWed);
    assert.deepEqual(starts(slots), ['09:00', '11:00', '11:30']);
  });
  test('a short interval inside a long one (09:00-11:00 around 09:10-09:20) does not free the rest', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy(W('09:10'), W('09:20')), busy(W('09:00'), W('11:00'))])], onWed);
    assert.deepEqual(starts(slots), ['11:00', '11:30']);
  });
  test('a slot may end where busy time starts and start where it ends', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy(W('10:00'), W('10:30'))])], onWed);
    assert.deepEqual(starts(slots), ['09:00', '09:30', '10:30', '11:00', '11:30']);
  });
  test('one minute past an edge takes the slot on that side', () => {
    const slots = computeSlots(utcWed, rules(), [host(1, [busy(W('09:59'), W('10:31'))])], onWed);
    assert.deepEqual(starts(slots), ['09:00', '11:00', '11:30']);
  });
  test("the new booking's buffers reach exactly to the edge, and one minute more", () => {
    const b = [busy(W('10:00'), W('10:30'))];
    // 09:30 with 30 min after reaches 10:30; 09:00 with 31 min after reaches 10:01. 10:30 with 30 min before starts at 10:00.
    assert.deepEqual(starts(computeSlots(utcWed, rules({ bufferAfterMinutes: 30 }), [host(1, b)], onWed)), ['09:00', '10:30', '11:00', '11:30']);
    assert.deepEqual(starts(computeSlots(utcWed, rules({ bufferAfterMinutes: 31 }), [host(1, b)], onWed)), ['10:30', '11:00', '11:30']);
    assert.deepEqual(starts(computeSlots(utcWed, rules({ bufferBeforeMinutes: 30 }), [host(1, b)], onWed)), ['09:00', '09:30', '11:00', '11:30']);
    assert.deepEqual(starts(computeSlots(utcWed, rules({ bufferBeforeMinutes: 31 }), [host(1, b)], onWed)), ['09:00', '09:30', '11:30']);
  });
  test("a booking's own buffers merge with a touching calendar interval", () => {
    // Booking 10:00-10:30 with 30 min after (busy to 11:00), calendar 11:00-11:30: one block 10:00-11:30.
    const b = [busy(W('10:00'), W('10:30'), { bufferAfterMinutes: 30, sameEventType: true }), busy(W('11:00'), W('11:30'))];
    assert.deepEqual(starts(computeSlots(utcWed, rules(), [host(1, b)], onWed)), ['09:00', '09:30', '11:30']);
  });
  test('intervals far outside the day change nothing, and busy time given unsorted is read right', () => {
    const b = [busy(W('11:30'), W('12:00')), busy('2026-01-10T09:00:00.000Z', '2026-01-10T17:00:00.000Z'), busy('2026-01-16T09:00:00.000Z', '2026-01-16T12:00:00.000Z'), busy(W('09:00'), W('09:30'))];
    assert.deepEqual(starts(computeSlots(utcWed, rules(), [host(1, b)], onWed)), ['09:30', '10:00', '10:30', '11:00']);
  });
  test('each host is swept on its own: hostIds per slot, in the order given', () => {
    const hosts = [host(3, [busy(W('09:00'), W('10:00'))]), host(1, [busy(W('10:00'), W('11:00'))]), host(2, [busy(W('09:30'), W('11:30'))])];
    const slots = computeSlots(utcWed, rules(), hosts, onWed);
    assert.deepEqual(
      slots.map((s) => [starts([s])[0], s.hostIds]),
      [
        ['09:00', [1, 2]],
        ['09:30', [1]],
        ['10:00', [3]],
        ['10:30', [3]],
        ['11:00', [3, 1]],
        ['11:30', [3, 1, 2]],
      ],
    );
  });
  test('overlapping weekly windows give each start once, in order', () => {
    const s: Schedule = { timezone: 'UTC', weekly: [{ day: 'wed', start: '10:00', end: '12:00' }, { day: 'wed', start: '09:00', end: '11:00' }] };
    const slots = computeSlots(s, rules(), [host(1, [busy(W('10:30'), W('11:00'))])], onWed);
    assert.deepEqual(starts(slots), ['09:00', '09:30', '10:00', '11:00', '11:30']);
  });
});

describe('computeSlots: the per-day maximum counts by exact local-day bounds', () => {
  const ny: Schedule = { timezone: 'America/New_York', weekly: WEEKDAYS.map((day) => ({ day, start: '09:00', end: '17:00' })) };
  const q = (date: string) => ({ date, timezone: 'America/New_York', now: NOW });
  test('a same-type booking at exactly local midnight counts for the day it starts, not the day before', () => {
    // 2026-06-11T04:00Z is 00:00 EDT on June 11.
    const hosts = [host(1, [busy('2026-06-11T04:00:00.000Z', '2026-06-11T04:30:00.000Z', { sameEventType: true })])];
    const r = rules({ maxBookingsPerDay: 1 });
    assert.equal(computeSlots(ny, r, hosts, q('2026-06-10')).length, 16);
    assert.deepEqual(computeSlots(ny, r, hosts, q('2026-06-11')), []);
  });
  test('calendar intervals block time but never fill a day', () => {
    const hosts = [host(1, [busy('2026-06-10T13:00:00.000Z', '2026-06-10T13:30:00.000Z'), busy('2026-06-10T14:00:00.000Z', '2026-06-10T14:30:00.000Z')])];
    assert.equal(computeSlots(ny, rules({ maxBookingsPerDay: 1 }), hosts, q('2026-06-10')).length, 14);
  });
});

describe('computeSlots with calendar intervals: DST days (Europe/Berlin)', () => {
  const berlin: Schedule = { timezone: 'Europe/Berlin', weekly: WEEKDAYS.map((day) => ({ day, start: '00:00', end: '24:00' })) };
  const hourly = rules({ durationMinutes: 60, intervalMinutes: 60 });
  const hours = (slots: Slot[]) => slots.map((s) => DateTime.fromMillis(s.start, { zone: 'Europe/Berlin' }).toFormat('HH:mm ZZ'));

  test('spring forward (29 March 2026, 23 hours): an interval across the gap blocks the slots it touches', () => {
    // 00:30Z-01:30Z = 01:30 CET to 03:30 CEST: the 01:00 CET slot and the 03:00 CEST slot (02:00 does not exist).
    const q = { date: '2026-03-29', timezone: 'Europe/Berlin', now: NOW };
    const free = computeSlots(berlin, hourly, [host(1)], q);
    assert.equal(free.length, 23);
    const slots = computeSlots(berlin, hourly, [host(1, [busy('2026-03-29T00:30:00.000Z', '2026-03-29T01:30:00.000Z')])], q);
    assert.equal(slots.length, 21);
    assert.deepEqual(hours(slots).slice(0, 3), ['00:00 +01:00', '04:00 +02:00', '05:00 +02:00']);
  });

  test('fall back (25 October 2026, 25 hours): busy in the first 02:00-03:00 leaves the repeated hour free', () => {
    // 00:00Z-01:00Z is 02:00-03:00 CEST; 01:00Z-02:00Z is the second 02:00-03:00, in CET.
    const q = { date: '2026-10-25', timezone: 'Europe/Berlin', now: NOW };
    const slots = computeSlots(berlin, hourly, [host(1, [busy('2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z')])], q);
    assert.equal(slots.length, 24);
    assert.deepEqual(hours(slots).slice(0, 4), ['00:00 +02:00', '01:00 +02:00', '02:00 +01:00', '03:00 +01:00']);
  });

  test('a weekly 10:00 event across the DST change blocks 10:00 local on both sides of it', () => {
    const office: Schedule = { timezone: 'Europe/Berlin', weekly: [{ day: 'wed', start: '09:00', end: '12:00' }] };
    // Wednesday 10:00 Berlin: 09:00Z in winter (25 March), 08:00Z in summer (1 April).
    const events = [busy('2026-03-25T09:00:00.000Z', '2026-03-25T10:00:00.000Z'), busy('2026-04-01T08:00:00.000Z', '2026-04-01T09:00:00.000Z')];
    const local = (date: string) =>
      computeSlots(office, hourly, [host(1, events)], { date, timezone: 'Europe/Berlin', now: NOW }).map((s) => DateTime.fromMillis(s.start, { zone: 'Europe/Berlin' }).toFormat('HH:mm'));
    assert.deepEqual(local('2026-03-25'), ['09:00', '11:00']);
    assert.deepEqual(local('2026-04-01'), ['09:00', '11:00']);
  });
});

// The definition, written the plain way (the engine before the sweep): every slot tested against
// every busy interval, every zone conversion done by Luxon on the spot.
function reference(schedule: Schedule, r: Rules, hosts: readonly Host[], q: { date: string; timezone: string; now: number }): Slot[] {
  const zone = schedule.timezone;
  const spanStart = DateTime.fromISO(q.date, { zone: q.timezone }).startOf('day');
  const span = { start: spanStart.toMillis(), end: spanStart.plus({ days: 1 }).toMillis() };
  const local = (day: DateTime, hhmm: string) => {
    const [h, m] = hhmm.split(':').map(Number) as [number, number];
    return (h === 24 ? day.plus({ days: 1 }).startOf('day') : day.set({ hour: h, minute: m, second: 0, millisecond: 0 })).toMillis();
  };
  const out = new Map<number, Slot>();
  for (let day = DateTime.fromMillis(span.start, { zone }).startOf('day'); day.toMillis() < span.end; day = day.plus({ days: 1 })) {
    const date = day.toISODate()!;
    if (r.blackoutDates.has(date)) continue;
    const count = (h: Host) => h.bookings.filter((b) => b.sameEventType && DateTime.fromMillis(b.start, { zone }).toISODate() === date).length;
    for (const w of schedule.weekly.filter((x) => x.day === WEEKDAYS[day.weekday - 1])) {
      const [ws, we] = [local(day, w.start), local(day, w.end)];
      for (let s = ws; s + r.durationMinutes * MIN <= we; s += r.intervalMinutes * MIN) {
        if (s < span.start || s >= span.end || s < q.now + r.minNoticeHours * 60 * MIN || s > q.now + r.maxAdvanceDays * 1440 * MIN || out.has(s)) continue;
        const e = s + r.durationMinutes * MIN;
        const from = s - r.bufferBeforeMinutes * MIN;
        const to = e + r.bufferAfterMinutes * MIN;
        const hostIds = hosts
          .filter((h) => r.maxBookingsPerDay === null || count(h) < r.maxBookingsPerDay)
          .filter((h) => h.bookings.every((b) => !(from < b.end + b.bufferAfterMinutes * MIN && b.start - b.bufferBeforeMinutes * MIN < to)))
          .map((h) => h.id);
        if (hostIds.length) out.set(s, { start: s, end: e, hostIds });
      }
    }
  }
  return [...out.values()].sort((a, b) => a.start - b.start);
}

/** A small seeded generator (mulberry32): the same cases on every run. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

describe('computeSlots equals the plain definition on seeded random teams', () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Pacific/Honolulu'];
  // DST days of those zones and ordinary days.
  const dates = ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01', '2026-06-10', '2026-01-14'];
  const clock = (rnd: ReturnType<typeof random>) => `${String(rnd.int(0, 23)).padStart(2, '0')}:${rnd.pick(['00', '15', '30', '45'])}`;

  test('600 cases: zones, DST days, buffers, windows, per-day maximum, 1-6 hosts with up to 80 intervals each', () => {
    const rnd = random(18);
    for (let c = 0; c < 600; c++) {
      const weekly: { day: Weekday; start: string; end: string }[] = [];
      for (const day of WEEKDAYS) {
        for (let k = rnd.int(0, 2); k > 0; k--) {
          const [a, b] = [clock(rnd), rnd.next() < 0.2 ? '24:00' : clock(rnd)].sort();
          weekly.push({ day, start: a!, end: b! });
        }
      }
      const schedule: Schedule = { timezone: rnd.pick(zones), weekly };
      const q = { date: rnd.pick(dates), timezone: rnd.pick(zones), now: NOW };
      const base = t(`${q.date}T00:00:00.000Z`);
      const r = rules({
        durationMinutes: rnd.pick([15, 30, 45, 60, 90]),
        intervalMinutes: rnd.pick([10, 15, 30, 60]),
        bufferBeforeMinutes: rnd.pick([0, 0, 5, 15, 30]),
        bufferAfterMinutes: rnd.pick([0, 0, 10, 15, 60]),
        maxBookingsPerDay: rnd.pick([null, null, 1, 2, 3]),
        blackoutDates: new Set(rnd.next() < 0.2 ? [q.date] : []),
      });
      const hosts = Array.from({ length: rnd.int(1, 6) }, (_, h) =>
        host(
          h + 1,
          Array.from({ length: rnd.int(0, 80) }, () => {
            const start = base + rnd.int(-36 * 4, 60 * 4) * 15 * MIN + rnd.pick([0, 0, 0, 1, -1]) * MIN;
            return {
              start,
              end: start + rnd.pick([0, 15, 30, 60, 120, 480]) * MIN,
              bufferBeforeMinutes: rnd.pick([0, 0, 10]),
              bufferAfterMinutes: rnd.pick([0, 0, 15]),
              sameEventType: rnd.next() < 0.3,
            };
          }),
        ),
      );
      const want = reference(schedule, r, hosts, q);
      const got = computeSlots(schedule, r, hosts, q);
      assert.deepEqual(got, want, `case ${c}: ${JSON.stringify({ schedule, q, r: { ...r, blackoutDates: [...r.blackoutDates] } })}`);
    }
  });
});
