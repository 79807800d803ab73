// The availability engine: pure, no I/O. Day ranges are built in the schedule's time zone with
// Luxon, so a daylight-saving day has 23 or 25 hours; the slot grid then steps in absolute time.
// Everything after the zone conversions is integer epoch ms: each host's busy time is sorted and
// merged once, and the candidate slots (sorted) are swept against it with one pointer per host,
// O(slots + intervals) per host instead of testing every slot against every interval.
import { DateTime } from 'luxon';

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export interface WeeklyWindow {
  day: Weekday;
  /** `HH:MM` local time in the schedule's zone; `end` may be `24:00`. */
  start: string;
  end: string;
}

export interface Schedule {
  timezone: string;
  weekly: WeeklyWindow[];
}

export interface Rules {
  durationMinutes: number;
  intervalMinutes: number;
  bufferBeforeMinutes: number;
  bufferAfterMinutes: number;
  minNoticeHours: number;
  maxAdvanceDays: number;
  /** Per host and per day of the schedule's zone; null for no limit. */
  maxBookingsPerDay: number | null;
  /** `YYYY-MM-DD` days of the schedule's zone with no slots. */
  blackoutDates: ReadonlySet<string>;
}

/** An existing booking of a host, in epoch ms, with its own buffers. */
export interface BusyBooking {
  start: number;
  end: number;
  bufferBeforeMinutes: number;
  bufferAfterMinutes: number;
  /** Counts toward this event type's per-day maximum. */
  sameEventType: boolean;
}

export interface Host {
  id: number;
  bookings: readonly BusyBooking[];
}

export interface Slot {
  start: number;
  end: number;
  /** Hosts free for the whole slot, in the order given. */
  hostIds: number[];
}

/** A half-open `[start, end)` range of epoch ms. */
export interface Interval {
  start: number;
  end: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

// Zone conversions are the costly part (Luxon asks Intl for offsets), and their answers depend only
// on the zone and the date, so they are remembered; cleared when full, so the memory stays bounded.
const CACHE_LIMIT = 20_000;
const zoneCache = new Map<string, number>();
function cached(key: string, compute: () => number): number {
  let v = zoneCache.get(key);
  if (v === undefined) {
    if (zoneCache.size >= CACHE_LIMIT) zoneCache.clear();
    v = compute();
    zoneCache.set(key, v);
  }
  return v;
}

/** Local midnight of `date` in `zone`, in epoch ms. */
function midnight(date: string, zone: string): number {
  return cached(`${zone}\n${date}`, () => DateTime.fromISO(date, { zone }).startOf('day').toMillis());
}

/** `YYYY-MM-DD` of the day after `date` (calendar arithmetic, no zone involved). */
function nextDate(date: string, days = 1): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

/** `[00:00, next 00:00)` of a calendar day in a zone, in epoch ms (23 or 25 hours on DST days). */
export function dayRange(date: string, zone: string): { start: number; end: number } {
  return { start: midnight(date, zone), end: midnight(nextDate(date), zone) };
}

export function isValidDate(date: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return false;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === date;
}

/** `HH:MM` of `date` in `zone` as epoch ms; 24:00 is the next midnight; a time inside a spring-forward gap moves forward (Luxon). */
function localTime(date: string, zone: string, hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  if (h === 24) return midnight(nextDate(date), zone);
  return cached(`${zone}\n${date}\n${hhmm}`, () => DateTime.fromISO(date, { zone }).set({ hour: h, minute: m, second: 0, millisecond: 0 }).toMillis());
}

interface ScheduleDay {
  date: string;
  start: number;
  end: number;
  windows: Interval[];
}

/** The days of the schedule's zone that overlap `[from, to)`, in order, with that day's windows. */
function scheduleDays(schedule: Schedule, from: number, to: number): ScheduleDay[] {
  const zone = schedule.timezone;
  const out: ScheduleDay[] = [];
  // Zone offsets lie within ±14 h of UTC: the local days overlapping the range lie among the UTC
  // dates of its ends, one either side.
  const last = nextDate(new Date(to).toISOString().slice(0, 10));
  for (let date = nextDate(new Date(from).toISOString().slice(0, 10), -1); date <= last; date = nextDate(date)) {
    const day = dayRange(date, zone);
    if (day.end <= from || day.start >= to) continue;
    const weekday = WEEKDAYS[(new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7];
    const windows: Interval[] = [];
    for (const w of schedule.weekly) {
      if (w.day !== weekday) continue;
      const start = localTime(date, zone, w.start);
      const end = localTime(date, zone, w.end);
      if (end > start) windows.push({ start, end });
    }
    out.push({ date, ...day, windows });
  }
  return out;
}

/**
 * Sorts intervals by start and merges those that overlap, touch or contain one another, so the
 * result is disjoint and increasing in both start and end. The input is not changed.
 */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const iv of sorted) {
    const last = out[out.length - 1];
    // Touching intervals merge too: for half-open ranges [a, b) and [b, c) overlap exactly what [a, c) overlaps.
    if (last && iv.start <= last.end) {
      if (iv.end > last.end) last.end = iv.end;
    } else {
      out.push({ start: iv.start, end: iv.end });
    }
  }
  return out;
}

/**
 * For each range (sorted by `start`, so the pointer only moves forward), whether it misses every
 * interval of `merged` (the output of mergeIntervals). One pass: O(ranges + intervals).
 */
export function sweepFree(merged: readonly Interval[], ranges: readonly Interval[]): boolean[] {
  const free: boolean[] = [];
  let j = 0;
  for (const r of ranges) {
    while (j < merged.length && merged[j]!.end <= r.start) j++;
    free.push(j === merged.length || merged[j]!.start >= r.end);
  }
  return free;
}

/** A host's busy time, each booking widened by its own buffers, merged. */
function busyOf(host: Host): Interval[] {
  return mergeIntervals(host.bookings.map((b) => ({ start: b.start - b.bufferBeforeMinutes * MINUTE, end: b.end + b.bufferAfterMinutes * MINUTE })));
}

function countIn(host: Host, day: ScheduleDay): number {
  let n = 0;
  for (const b of host.bookings) if (b.sameEventType && b.start >= day.start && b.start < day.end) n++;
  return n;
}

/**
 * The slots of one day (`date` in `timezone`): windows of the schedule, on a grid of
 * `intervalMinutes` from each window's start, each slot fully inside its window, not on a
 * blackout day, at least `minNoticeHours` from now and at most `maxAdvanceDays` ahead, with at
 * least one host free for the whole slot (buffers included) and under the per-day maximum.
 */
export function computeSlots(schedule: Schedule, rules: Rules, hosts: readonly Host[], q: { date: string; timezone: string; now: number }): Slot[] {
  const span = dayRange(q.date, q.timezone);
  const earliest = q.now + rules.minNoticeHours * 60 * MINUTE;
  const latest = q.now + rules.maxAdvanceDays * DAY;
  const duration = rules.durationMinutes * MINUTE;
  const step = Math.max(1, rules.intervalMinutes) * MINUTE;

  // The candidate starts, each with the schedule day it belongs to, sorted and without repeats.
  const days = scheduleDays(schedule, span.start, span.end).filter((d) => !rules.blackoutDates.has(d.date));
  const candidates: { start: number; day: number }[] = [];
  const seen = new Set<number>();
  days.forEach((d, i) => {
    for (const w of d.windows) {
      for (let start = w.start; start + duration <= w.end; start += step) {
        if (start < span.start || start >= span.end || start < earliest || start > latest || seen.has(start)) continue;
        seen.add(start);
        candidates.push({ start, day: i });
      }
    }
  });
  if (candidates.length === 0) return [];
  candidates.sort((a, b) => a.start - b.start);

  // What each slot must keep clear: itself widened by the new booking's buffers.
  const ranges = candidates.map((c) => ({ start: c.start - rules.bufferBeforeMinutes * MINUTE, end: c.start + duration + rules.bufferAfterMinutes * MINUTE }));
  const free: number[][] = candidates.map(() => []);
  for (const host of hosts) {
    const full = rules.maxBookingsPerDay === null ? null : days.map((d) => countIn(host, d) >= rules.maxBookingsPerDay!);
    const open = sweepFree(busyOf(host), ranges);
    for (let i = 0; i < candidates.length; i++) if (open[i] && !full?.[candidates[i]!.day]) free[i]!.push(host.id);
  }
  const slots: Slot[] = [];
  for (let i = 0; i < candidates.length; i++) {
    if (free[i]!.length > 0) slots.push({ start: candidates[i]!.start, end: candidates[i]!.start + duration, hostIds: free[i]! });
  }
  return slots;
}
