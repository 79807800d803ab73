// The calendar reader's hard bounds (issue #31): a worker thread with a heap limit and a deadline,
// replaced after either, so the next calendar is read as usual; the server's event loop stays free.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { hostWeekIcs, longHistoryIcs } from '../../../test/calendar-fixtures.js';
import { CalendarExpander } from './expand-pool.js';
import { CalendarLimitError } from './expand.js';

const window = { from: Date.parse('2026-03-01T00:00:00Z'), to: Date.parse('2026-05-01T00:00:00Z'), hostZone: 'America/New_York' };
const log = pino({ level: 'silent' });
/** About 4 MB of iCalendar: ical.js needs far more than 16 MB and a good while to parse it. */
const big = longHistoryIcs(20_000);

describe('the calendar reader (worker thread)', () => {
  const expanders: CalendarExpander[] = [];
  const make = (timeoutMs: number, memoryMb: number) => {
    const e = new CalendarExpander({ timeoutMs, memoryMb }, log);
    expanders.push(e);
    return e;
  };
  after(() => Promise.all(expanders.map((e) => e.close())));

  test('reads a calendar as busyIntervals does, one after another on one worker', async () => {
    const e = make(20_000, 128);
    const [a, b] = await Promise.all([e.expand([hostWeekIcs('W. Europe Standard Time')], window), e.expand([hostWeekIcs('Europe/Berlin')], window)]);
    assert.equal(a.length, 5);
    assert.deepEqual(a, b);
  });

  test('past its deadline a calendar is refused as over a limit, and the next one gets a fresh worker', async () => {
    const limits = { timeoutMs: 200, memoryMb: 256 };
    const e = new CalendarExpander(limits, log);
    expanders.push(e);
    await assert.rejects(e.expand([big], window), (err: unknown) => err instanceof CalendarLimitError && /reading it takes longer than 200 ms/.test(err.message));
    // The fresh worker's read is not a race with the clock: on a loaded machine (CI runs the SQLite suite at
    // a lower priority beside the PostgreSQL one) even a small calendar's first read can take 200 ms.
    limits.timeoutMs = 60_000;
    assert.equal((await e.expand([hostWeekIcs('Europe/Berlin')], window)).length, 5);
  });

  test('past its heap a calendar is refused as over a limit, and the next one gets a fresh worker', async () => {
    const e = make(60_000, 16);
    await assert.rejects(e.expand([big], window), (err: unknown) => err instanceof CalendarLimitError && /reading it needs more than 16 MB/.test(err.message));
    assert.equal((await e.expand([hostWeekIcs('Europe/Berlin')], window)).length, 5);
  });

  test('text that is not iCalendar is an ordinary error, not a limit', async () => {
    const e = make(20_000, 64);
    await assert.rejects(e.expand(['<html>Sign in</html>'], window), (err: unknown) => err instanceof Error && !(err instanceof CalendarLimitError));
  });

  test('closing fails what still waits', async () => {
    const e = make(20_000, 64);
    const waiting = assert.rejects(e.expand([big], window), /the calendar reader has stopped/);
    await e.close();
    await waiting;
    await assert.rejects(e.expand([big], window), /the calendar reader has stopped/);
  });
});
