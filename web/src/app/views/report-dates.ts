// The Reports page's dates: calendar days (YYYY-MM-DD) in the report's zone and the instants the API
// takes for them. The API cuts periods at local midnight in `tz` (docs/reports.md); the page asks
// for whole local days, so `from` is the first day's midnight and `to` the midnight after the last
// day, both in that zone. Intl alone (no date library in the dashboard bundle): the zone's offset
// at an instant is read from formatToParts, and a local midnight found by correcting a guess.

export type Day = string;

const DAY_MS = 86_400_000;

const parse = (day: Day): [number, number, number] => {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return [y, m, d];
};
const fromUtc = (ms: number): Day => new Date(ms).toISOString().slice(0, 10);

/** `day` plus `n` calendar days (negative: earlier). */
export function addDays(day: Day, n: number): Day {
  const [y, m, d] = parse(day);
  return fromUtc(Date.UTC(y, m - 1, d) + n * DAY_MS);
}

/** The first day of `day`'s month, `months` months later (negative: earlier). */
export function monthStart(day: Day, months = 0): Day {
  const [y, m] = parse(day);
  return fromUtc(Date.UTC(y, m - 1 + months, 1));
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function partsFormatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's wall clock at `ms`, read as if it were UTC (ms). */
function wallClock(zone: string, ms: number): number {
  const p: Record<string, number> = {};
  for (const part of partsFormatter(zone).formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day, p.hour! % 24, p.minute, p.second);
}

/** The zone's offset from UTC at `ms`, in minutes (Berlin in winter: 60). */
export function offsetMinutes(zone: string, ms: number): number {
  return Math.round((wallClock(zone, Math.floor(ms / 1000) * 1000) - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * The instant `day` starts in `zone`. Where midnight does not exist (a zone that springs forward at
 * 00:00), the first instant of the day, as luxon's startOf('day') answers on the server.
 */
export function startOfDay(day: Day, zone: string): number {
  const [y, m, d] = parse(day);
  const wall = Date.UTC(y, m - 1, d);
  // Two corrections reach the answer for any offset change; the loop stops as soon as one holds.
  let t = wall - offsetMinutes(zone, wall) * 60_000;
  for (let i = 0; i < 3; i++) {
    const next = wall - offsetMinutes(zone, t) * 60_000;
    if (next === t) break;
    t = next;
  }
  // A skipped midnight: the wall clock at t is not 00:00 of `day`; the day then starts at the change.
  // Search the minute the wall clock reaches `day` (dates as YYYY-MM-DD compare as strings).
  if (fromUtc(wallClock(zone, t)) < day) {
    let lo = t;
    let hi = t + DAY_MS;
    while (hi - lo > 60_000) {
      const mid = lo + Math.max(1, Math.floor((hi - lo) / 120_000)) * 60_000;
      if (fromUtc(wallClock(zone, mid)) >= day) hi = mid;
      else lo = mid;
    }
    t = hi;
  }
  return t;
}

/** Today's date in `zone` (at `now`). */
export function today(zone: string, now = Date.now()): Day {
  return fromUtc(wallClock(zone, now));
}

export type Preset = '7d' | '30d' | 'this_month' | 'last_month';
export const PRESETS: { id: Preset; label: string }[] = [
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: 'this_month', label: 'This month' },
  { id: 'last_month', label: 'Last month' },
];

/** A preset's first and last day (both included): the days so far, never days still to come. */
export function presetRange(preset: Preset, todayIs: Day): { from: Day; to: Day } {
  switch (preset) {
    case '7d':
      return { from: addDays(todayIs, -6), to: todayIs };
    case '30d':
      return { from: addDays(todayIs, -29), to: todayIs };
    case 'this_month':
      return { from: monthStart(todayIs), to: todayIs };
    case 'last_month':
      return { from: monthStart(todayIs, -1), to: addDays(monthStart(todayIs), -1) };
  }
}

/** The API's `from` and `to` for the days `from`..`to` (both included) in `zone`, as ISO instants. */
export function rangeQuery(from: Day, to: Day, zone: string): { from: string; to: string } {
  return { from: new Date(startOfDay(from, zone)).toISOString(), to: new Date(startOfDay(addDays(to, 1), zone)).toISOString() };
}

export const isDay = (s: string | null | undefined): s is Day => !!s && /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));
