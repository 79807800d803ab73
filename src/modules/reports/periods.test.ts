// Property tests of the report's zone arithmetic against a brute force: luxon asked about every
// instant directly. The SQL buckets an incident by the offset in force at its instant (offsetsOver);
// that must give the local day luxon gives, in every zone, across every change in the range.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { offsetsOver, periodKeys } from './periods.js';

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham', 'Africa/Casablanca', 'America/Santiago'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FROM = Date.parse('2025-01-01T00:00:00Z');
const TO = Date.parse('2028-01-01T00:00:00Z');

/** The local date of `t` as the SQL computes it: the last offset span that began at or before `t`, added to UTC. */
function bySpans(spans: { from: string; minutes: number }[], t: number): string {
  let minutes = spans[0]!.minutes;
  for (const s of spans) if (Date.parse(s.from) <= t) minutes = s.minutes;
  return new Date(t + minutes * 60_000).toISOString().slice(0, 10);
}

describe('report periods against luxon, instant by instant', () => {
  test('offsetsOver gives every instant of the range its local date', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: FROM, max: TO }), fc.integer({ min: HOUR, max: 400 * DAY }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 20, maxLength: 60 }), (zone, from, span, picks) => {
        const to = from + span;
        const spans = offsetsOver(zone, from, to);
        for (const p of picks) {
          const t = Math.min(to - 1, from + Math.floor(p * span));
          assert.equal(bySpans(spans, t), DateTime.fromMillis(t, { zone }).toISODate(), `${zone} at ${new Date(t).toISOString()}`);
        }
        // And right at each change: the millisecond before and the one it begins.
        for (const s of spans.slice(1)) {
          const t = Date.parse(s.from);
          assert.equal(bySpans(spans, t), DateTime.fromMillis(t, { zone }).toISODate());
          assert.equal(bySpans(spans, t - 1), DateTime.fromMillis(t - 1, { zone }).toISODate());
        }
      }),
      { numRuns: 150 },
    );
  });

  test('periodKeys lists exactly the local days, weeks and months the range touches', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: FROM, max: TO }), fc.integer({ min: HOUR, max: 120 * DAY }), fc.constantFrom('day' as const, 'week' as const, 'month' as const), (zone, from, span, unit) => {
        const to = from + span;
        const seen = new Set<string>();
        // Brute force: every hour of the range (a local day lasts 23 hours at least, so none is missed), and its last instant.
        for (let t = from; t < to; t += HOUR) seen.add(keyOf(DateTime.fromMillis(t, { zone }), unit));
        seen.add(keyOf(DateTime.fromMillis(to - 1, { zone }), unit));
        assert.deepEqual(periodKeys(unit, zone, from, to), [...seen].sort());
      }),
      { numRuns: 60 },
    );
  });
});

function keyOf(d: DateTime, unit: 'day' | 'week' | 'month'): string {
  if (unit === 'month') return d.toFormat('yyyy-MM');
  return (unit === 'week' ? d.startOf('week') : d).toISODate()!;
}
