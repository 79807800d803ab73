// Busy time from iCalendar text: parsing and recurrence by ical.js (RRULE, RDATE, EXDATE,
// RECURRENCE-ID overrides, VTIMEZONE), wall-clock times turned into instants in their own zone.
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { isTimeZone } from '../../lib/timezone.js';

export interface Interval {
  start: number;
  end: number;
}

export interface ExpandOptions {
  /** The window to fill, epoch ms. */
  from: number;
  to: number;
  /** All-day events cover this zone's whole local days; floating times are read in it too. */
  hostZone: string;
}

const DAY = 86_400_000;
/** Occurrences walked per recurring event (a daily series since 1990 is about 13,000). */
const MAX_STEPS = 50_000;
/** Intervals per sync: far beyond any real calendar's window, small enough to store at once. */
export const MAX_INTERVALS = 20_000;

/** Events Muster wrote itself (`<booking id>@muster`, the invitation's UID) never count: the booking already does. */
export const isOwnEvent = (uid: string) => /^bk_[\w-]+@muster$/.test(uid);

type Item = ICAL.Event;

function blocks(item: Item): boolean {
  const c = item.component;
  const transp = String(c.getFirstPropertyValue('transp') ?? 'OPAQUE').toUpperCase();
  const status = String(c.getFirstPropertyValue('status') ?? '').toUpperCase();
  return transp !== 'TRANSPARENT' && status !== 'CANCELLED';
}

/** An instant for an iCalendar time: UTC and VTIMEZONE-defined zones by ical.js, IANA TZIDs without a definition by Luxon. */
function instant(t: ICAL.Time, tzid: string | undefined, hostZone: string): number {
  if (t.isDate) return DateTime.fromObject({ year: t.year, month: t.month, day: t.day }, { zone: hostZone }).toMillis();
  const zone = t.zone;
  if (zone && zone !== ICAL.Timezone.localTimezone && (zone === ICAL.Timezone.utcTimezone || zone.component)) return t.toUnixTime() * 1000;
  // Floating (no TZID), or a TZID the file does not define (Google and others name IANA zones).
  const z = tzid && isTimeZone(tzid) ? tzid : hostZone;
  return DateTime.fromObject({ year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second }, { zone: z }).toMillis();
}

const tzidOf = (item: Item, prop: 'dtstart' | 'dtend') => {
  const p = item.component.getFirstProperty(prop) ?? item.component.getFirstProperty('dtstart');
  const v = p?.getParameter('tzid');
  return typeof v === 'string' ? v : undefined;
};

function push(out: Interval[], item: Item, start: ICAL.Time, end: ICAL.Time, o: ExpandOptions): void {
  const s = instant(start, tzidOf(item, 'dtstart'), o.hostZone);
  let e = instant(end, tzidOf(item, 'dtend'), o.hostZone);
  if (e <= s) e = start.isDate ? s + DAY : s; // a zero-length timed event blocks nothing
  if (e > o.from && s < o.to) out.push({ start: Math.max(s, o.from), end: Math.min(e, o.to) });
  if (out.length > MAX_INTERVALS) throw new Error(`more than ${MAX_INTERVALS} busy intervals in the window`);
}

/** Every blocking occurrence of one event (a master with its overrides, or a lone override). */
function expandOne(master: ICAL.Component | undefined, overrides: ICAL.Component[], o: ExpandOptions, out: Interval[]): void {
  // Overrides stand on their own: a moved occurrence is where its override says, even when its
  // original time lies outside the window; a cancelled one blocks nothing.
  for (const c of overrides) {
    const item = new ICAL.Event(c);
    if (blocks(item)) push(out, item, item.startDate, item.endDate, o);
  }
  if (!master) return;
  const ev = new ICAL.Event(master, { strictExceptions: false, exceptions: overrides });
  if (!blocks(ev) || !ev.startDate) return;
  if (!ev.isRecurring()) return push(out, ev, ev.startDate, ev.endDate, o);
  const it = ev.iterator();
  for (let steps = 0, next = it.next(); next && steps < MAX_STEPS; next = it.next(), steps++) {
    // ical.js's own typing of the details does not resolve its Time type: name it here.
    const d = ev.getOccurrenceDetails(next) as { item: ICAL.Event; startDate: ICAL.Time; endDate: ICAL.Time };
    if (d.item !== ev) continue; // replaced by an override, counted above
    if (instant(d.startDate, tzidOf(ev, 'dtstart'), o.hostZone) >= o.to) break;
    push(out, ev, d.startDate, d.endDate, o);
  }
}

/** Sorted, merged, then cut into pieces of at most a day (the busy query's index range relies on it). */
export function normalise(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const i of sorted) {
    const last = merged[merged.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else merged.push({ ...i });
  }
  const out: Interval[] = [];
  for (const m of merged) for (let s = m.start; s < m.end; s += DAY) out.push({ start: s, end: Math.min(s + DAY, m.end) });
  return out;
}

/**
 * The busy intervals of one or more iCalendar texts inside `[from, to)`: OPAQUE events that are
 * not CANCELLED, recurrences expanded. Throws on text that is not iCalendar.
 */
export function busyIntervals(texts: string[], o: ExpandOptions): Interval[] {
  const out: Interval[] = [];
  for (const text of texts) {
    const root = new ICAL.Component(ICAL.parse(text) as unknown[]);
    if (root.name !== 'vcalendar') throw new Error('not an iCalendar (VCALENDAR) document');
    const byUid = new Map<string, { master?: ICAL.Component; overrides: ICAL.Component[] }>();
    for (const c of root.getAllSubcomponents('vevent')) {
      const uid = String(c.getFirstPropertyValue('uid') ?? '');
      if (isOwnEvent(uid)) continue;
      // Events without a UID are each their own event.
      const key = uid || `#${byUid.size}`;
      const g = byUid.get(key) ?? { overrides: [] };
      if (c.hasProperty('recurrence-id')) g.overrides.push(c);
      else g.master = c;
      byUid.set(key, g);
    }
    for (const g of byUid.values()) expandOne(g.master, g.overrides, o, out);
  }
  return normalise(out);
}
