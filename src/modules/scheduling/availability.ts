// The availability engine: pure, no I/O. Day ranges are built in the schedule's time zone with
// Luxon, so a daylight-saving day has 23 or 25 hours; the slot grid then steps in absolute time.
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

const MINUTE = 60_000;

/** `[00:00, next 00:00)` of a calendar day in a zone, in epoch ms (23 or 25 hours on DST days). */
export function dayRange(date: string, zone: string): { start: number; end: number } {
  const start = DateTime.fromISO(date, { zone }).startOf('day');
  return { start: start.toMillis(), end: start.plus({ days: 1 }).toMillis() };
}

export function isValidDate(date: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) && DateTime.fromISO(date, { zone: 'UTC' }).isValid;
}

function localTime(day: DateTime, hhmm: string): DateTime {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  // 24:00 is the end of the day; a time inside a spring-forward gap moves forward (Luxon).
  return h === 24 ? day.plus({ days: 1 }).startOf('day') : day.set({ hour: h, minute: m, second: 0, millisecond: 0 });
}

/** The schedule's windows on the days of its zone that overlap `[from, to)`, with each day's date. */
function windowsBetween(schedule: Schedule, from: number, to: number) {
  const out: { day: string; start: number; end: number }[] = [];
  for (let day = DateTime.fromMillis(from, { zone: schedule.timezone }).startOf('day'); day.toMillis() < to; day = day.plus({ days: 1 })) {
    const weekday = WEEKDAYS[day.weekday - 1];
    for (const w of schedule.weekly) {
      if (w.day !== weekday) continue;
      const start = localTime(day, w.start).toMillis();
      const end = localTime(day, w.end).toMillis();
      if (end > start) out.push({ day: day.toISODate()!, start, end });
    }
  }
  return out;
}

function perDayCount(host: Host, day: string, zone: string): number {
  let n = 0;
  for (const b of host.bookings) if (b.sameEventType && DateTime.fromMillis(b.start, { zone }).toISODate() === day) n++;
  return n;
}

function isFree(host: Host, start: number, end: number, rules: Rules): boolean {
  // Buffers widen both sides: the new slot's own, and each existing booking's.
  const from = start - rules.bufferBeforeMinutes * MINUTE;
  const to = end + rules.bufferAfterMinutes * MINUTE;
  for (const b of host.bookings) {
    if (from < b.end + b.bufferAfterMinutes * MINUTE && b.start - b.bufferBeforeMinutes * MINUTE < to) return false;
  }
  return true;
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
  const latest = q.now + rules.maxAdvanceDays * 24 * 60 * MINUTE;
  const duration = rules.durationMinutes * MINUTE;
  const step = Math.max(1, rules.intervalMinutes) * MINUTE;
  const slots = new Map<number, Slot>();
  const fullDays = new Map<string, Set<number>>();

  for (const w of windowsBetween(schedule, span.start, span.end)) {
    if (rules.blackoutDates.has(w.day)) continue;
    let full = fullDays.get(w.day);
    if (!full) {
      full = new Set(rules.maxBookingsPerDay === null ? [] : hosts.filter((h) => perDayCount(h, w.day, schedule.timezone) >= rules.maxBookingsPerDay!).map((h) => h.id));
      fullDays.set(w.day, full);
    }
    for (let start = w.start; start + duration <= w.end; start += step) {
      if (start < span.start || start >= span.end || start < earliest || start > latest || slots.has(start)) continue;
      const end = start + duration;
      const hostIds = hosts.filter((h) => !full.has(h.id) && isFree(h, start, end, rules)).map((h) => h.id);
      if (hostIds.length > 0) slots.set(start, { start, end, hostIds });
    }
  }
  return [...slots.values()].sort((a, b) => a.start - b.start);
}
