// The calendar periods of a report in its zone (luxon, the IANA rules ICU carries): the offsets in
// force over the range, for the SQL that buckets incidents by local day, and every period's key,
// so a period with no incidents still has its row.
import { DateTime, IANAZone } from 'luxon';
import type { OffsetSpan } from './incident-report.repository.js';

const DAY = 86_400_000;

/** The zone's offsets from `from` to `to` (ms), each from the instant it took effect (to the millisecond). */
export function offsetsOver(zone: string, from: number, to: number): OffsetSpan[] {
  const z = IANAZone.create(zone);
  const at = (ms: number) => z.offset(ms);
  const spans: OffsetSpan[] = [{ from: new Date(from).toISOString(), minutes: at(from) }];
  // Zones change offset at most a few times a year and never twice within a day: a day's step
  // finds each change, a binary search finds its minute.
  for (let lo = from; lo < to; lo += DAY) {
    let hi = Math.min(lo + DAY, to);
    if (at(hi) === at(lo)) continue;
    let a = lo;
    while (hi - a > 1) {
      const mid = Math.floor((a + hi) / 2);
      if (at(mid) === at(lo)) a = mid;
      else hi = mid;
    }
    spans.push({ from: new Date(hi).toISOString(), minutes: at(hi) });
  }
  return spans;
}

/** Every day, week (its Monday) or month ('YYYY-MM') of the range in the zone, as the SQL keys them. */
export function periodKeys(unit: 'day' | 'week' | 'month', zone: string, from: number, to: number): string[] {
  const luxonUnit = unit === 'day' ? 'day' : unit === 'week' ? 'week' : 'month';
  const keys: string[] = [];
  let p = DateTime.fromMillis(from, { zone }).startOf(luxonUnit);
  while (p.toMillis() < to) {
    keys.push(unit === 'month' ? p.toFormat('yyyy-MM') : p.toISODate()!);
    p = p.plus({ [luxonUnit === 'day' ? 'days' : luxonUnit === 'week' ? 'weeks' : 'months']: 1 });
  }
  return keys;
}
