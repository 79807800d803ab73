import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DateTime } from 'luxon';
import { addDays, monthStart, presetRange, rangeQuery, startOfDay, today } from '../web/src/app/views/report-dates.js';
import { duration, labelStride, ticks } from '../web/src/app/views/report-scale.js';

// The dashboard's Reports page (docs/web.md): the days it asks for and the numbers it draws.

test("a day starts where the server's report cuts it: the zone's local midnight, as luxon finds it, across daylight-saving changes", () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Santiago', 'Asia/Beirut'];
  // Around every change of 2026 in these zones (March, April, September, October, November), and a plain day.
  const days = ['2026-01-15', '2026-03-07', '2026-03-08', '2026-03-09', '2026-03-29', '2026-03-30', '2026-04-04', '2026-04-05', '2026-04-06', '2026-09-05', '2026-09-06', '2026-09-27', '2026-10-04', '2026-10-25', '2026-11-01', '2026-11-02'];
  for (const zone of zones) {
    for (const day of days) {
      const expected = DateTime.fromISO(day, { zone }).startOf('day').toMillis();
      assert.equal(new Date(startOfDay(day, zone)).toISOString(), new Date(expected).toISOString(), `${day} in ${zone}`);
    }
  }
});

test('the range asked for runs from the first day\'s midnight to the midnight after the last day, in the zone', () => {
  assert.deepEqual(rangeQuery('2026-01-05', '2026-01-07', 'UTC'), { from: '2026-01-05T00:00:00.000Z', to: '2026-01-08T00:00:00.000Z' });
  // Berlin on the spring-forward day: the last day has 23 hours.
  assert.deepEqual(rangeQuery('2026-03-29', '2026-03-29', 'Europe/Berlin'), { from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z' });
});

test("today is the zone's date: late evening in New York is already tomorrow in Berlin", () => {
  const at = Date.parse('2026-03-10T23:30:00Z');
  assert.equal(today('America/New_York', at), '2026-03-10');
  assert.equal(today('Europe/Berlin', at), '2026-03-11');
});

test('the presets: the last 7 and 30 days end today, this month so far, last month whole', () => {
  assert.deepEqual(presetRange('7d', '2026-03-03'), { from: '2026-02-25', to: '2026-03-03' });
  assert.deepEqual(presetRange('30d', '2026-03-03'), { from: '2026-02-02', to: '2026-03-03' });
  assert.deepEqual(presetRange('this_month', '2026-03-03'), { from: '2026-03-01', to: '2026-03-03' });
  assert.deepEqual(presetRange('last_month', '2026-03-03'), { from: '2026-02-01', to: '2026-02-28' });
  assert.deepEqual(presetRange('last_month', '2026-01-20'), { from: '2025-12-01', to: '2025-12-31' });
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(monthStart('2026-01-31', 1), '2026-02-01');
});

test('axis ticks are round and cover the largest value: counts, durations, percents', () => {
  assert.deepEqual(ticks({ max: 0, kind: 'count' }), [0, 1]);
  assert.deepEqual(ticks({ max: 3, kind: 'count' }), [0, 1, 2, 3]);
  assert.deepEqual(ticks({ max: 7, kind: 'count' }), [0, 2, 4, 6, 8]);
  assert.deepEqual(ticks({ max: 130, kind: 'count' }), [0, 50, 100, 150]);
  assert.deepEqual(ticks({ max: 7200, kind: 'duration' }), [0, 1800, 3600, 5400, 7200]);
  assert.deepEqual(ticks({ max: 100, kind: 'duration' }), [0, 60, 120]);
  assert.deepEqual(ticks({ max: 42, kind: 'percent' }), [0, 25, 50, 75, 100]);
});

test('x labels are thinned so they do not overlap; durations read in the unit that fits', () => {
  assert.equal(labelStride(7, 600, 52), 1);
  assert.equal(labelStride(31, 300, 52), 6);
  assert.deepEqual([duration(45), duration(150), duration(1800), duration(5400), duration(36_000 * 2), duration(200_000), duration(null)], ['45 s', '2.5 min', '30 min', '1.5 h', '20 h', '2.3 d', '–']);
});
