// Busy time from iCalendar text: parsing and recurrence by ical.js (RRULE, RDATE, EXDATE,
// RECURRENCE-ID overrides, VTIMEZONE), wall-clock times turned into instants in their own zone.
// A calendar is untrusted input: every expansion is capped (LIMITS), and the whole of it runs in a
// worker thread with a memory limit and a deadline (expand-pool.ts).
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
/** Farther than any UTC offset (±26 h) plus a day: wall-clock times this far outside the window cannot touch it. */
const MARGIN = 3 * DAY;

/**
 * What one sync may cost. Far beyond real calendars (a daily series since 1990 is about 13,000
 * occurrences; an Outlook zone rule since 1601 about 430 changes a rule), small enough that the
 * worst calendar takes a few seconds of the worker's time (ical.js walks about 10-20 us an occurrence). A calendar over any of them is refused as a whole
 * with a `CalendarLimitError`, which the sync records and does not retry on its own.
 */
export const LIMITS = {
  /** VEVENT components in one sync (every text of the connection together). */
  events: 50_000,
  /** Occurrences walked for one recurring event, from its start to the window's end. */
  stepsPerEvent: 25_000,
  /** Occurrences walked in one sync, all events together. */
  steps: 100_000,
  /** RDATE values of one event, and EXDATE values of one event. */
  rdates: 1_000,
  exdates: 5_000,
  /** Time-zone offset changes computed in one sync (VTIMEZONE STANDARD/DAYLIGHT rules and RDATEs). */
  zoneChanges: 20_000,
  /** Busy intervals in the window. */
  intervals: 20_000,
} as const;

/** A calendar that would cost more than a sync may spend: not read again until its owner changes it. */
export class CalendarLimitError extends Error {
  constructor(readonly detail: string) {
    super(`the calendar is over a safety limit: ${detail}`);
    this.name = 'CalendarLimitError';
  }
}

/** What the running expansion has spent (expansion is synchronous: one at a time per thread). */
interface Budget {
  steps: number;
  zoneChanges: number;
  /** The last year any time-zone rule is expanded to. */
  lastYear: number;
}
let budget: Budget | undefined;

// ical.js expands a VTIMEZONE's rules from their DTSTART (1601 in Outlook's feeds) up to the year
// asked for plus five, one change per occurrence, with no bound: `RRULE:FREQ=SECONDLY` from 1601
// is billions of changes (the server ran out of memory, issue #31). Its one expansion step is
// wrapped so every change is counted against the budget and no rule runs past the years the
// window needs. Covered by expand.test.ts (hostile zones) on every ical.js upgrade.
type ExpandComponent = (this: ICAL.Timezone, c: ICAL.Component, year: number, changes: unknown[]) => unknown;
const zoneProto = ICAL.Timezone.prototype as unknown as { _expandComponent: ExpandComponent };
const expandZoneRule = zoneProto._expandComponent;
if (typeof expandZoneRule !== 'function') throw new Error('ical.js changed: Timezone#_expandComponent is gone (see calendars/expand.ts)');
zoneProto._expandComponent = function (this: ICAL.Timezone, c: ICAL.Component, year: number, changes: unknown[]) {
  const b = budget;
  if (!b) return expandZoneRule.call(this, c, year, changes);
  const zone = this.tzid;
  const counted = {
    push(change: unknown) {
      if (++b.zoneChanges > LIMITS.zoneChanges) throw new CalendarLimitError(`time zone "${zone}" changes its offset more than ${LIMITS.zoneChanges} times`);
      return changes.push(change);
    },
  };
  return expandZoneRule.call(this, c, Math.min(year, b.lastYear), counted as unknown as unknown[]);
};

/** Events Muster wrote itself (`<booking id>@muster`, the invitation's UID) never count: the booking already does. */
export const isOwnEvent = (uid: string) => /^bk_[\w-]+@muster$/.test(uid);

type Item = ICAL.Event;

function blocks(item: Item): boolean {
  const c = item.component;
  const transp = String(c.getFirstPropertyValue('transp') ?? 'OPAQUE').toUpperCase();
  const status = String(c.getFirstPropertyValue('status') ?? '').toUpperCase();
  return transp !== 'TRANSPARENT' && status !== 'CANCELLED';
}

/** The wall-clock time read as if it were UTC: within ±26 h of the instant, and free to compute (no zone rules). */
const wallClock = (t: ICAL.Time) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

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
  // Years considered: a time far outside the window is never converted (no zone rule expanded for it).
  if (wallClock(start) >= o.to + MARGIN || wallClock(end) <= o.from - MARGIN) return;
  const s = instant(start, tzidOf(item, 'dtstart'), o.hostZone);
  let e = instant(end, tzidOf(item, 'dtend'), o.hostZone);
  if (e <= s) e = start.isDate ? s + DAY : s; // a zero-length timed event blocks nothing
  if (e > o.from && s < o.to) out.push({ start: Math.max(s, o.from), end: Math.min(e, o.to) });
  if (out.length > LIMITS.intervals) throw new CalendarLimitError(`more than ${LIMITS.intervals} busy intervals in the window`);
}

/** Refuses an event whose RDATE or EXDATE lists are beyond any real calendar's (each costs a sort step and a zone conversion). */
function checkDateLists(c: ICAL.Component, uid: string): void {
  for (const [prop, max] of [['rdate', LIMITS.rdates], ['exdate', LIMITS.exdates]] as const) {
    let n = 0;
    for (const p of c.getAllProperties(prop)) n += p.getValues().length;
    if (n > max) throw new CalendarLimitError(`event "${uid.slice(0, 100)}" has more than ${max} ${prop.toUpperCase()} values`);
  }
}

/** Every blocking occurrence of one event (a master with its overrides, or a lone override). */
function expandOne(uid: string, master: ICAL.Component | undefined, overrides: ICAL.Component[], o: ExpandOptions, out: Interval[], b: Budget): void {
  // Overrides stand on their own: a moved occurrence is where its override says, even when its
  // original time lies outside the window; a cancelled one blocks nothing.
  for (const c of overrides) {
    const item = new ICAL.Event(c);
    if (blocks(item)) push(out, item, item.startDate, item.endDate, o);
  }
  if (!master) return;
  checkDateLists(master, uid);
  const ev = new ICAL.Event(master, { strictExceptions: false, exceptions: overrides });
  if (!blocks(ev) || !ev.startDate) return;
  if (!ev.isRecurring()) return push(out, ev, ev.startDate, ev.endDate, o);
  const span = Math.max(0, wallClock(ev.endDate) - wallClock(ev.startDate));
  const it = ev.iterator();
  let steps = 0;
  for (let next = it.next(); next; next = it.next()) {
    if (++steps > LIMITS.stepsPerEvent) throw new CalendarLimitError(`event "${uid.slice(0, 100)}" repeats more than ${LIMITS.stepsPerEvent} times before the window ends`);
    if (++b.steps > LIMITS.steps) throw new CalendarLimitError(`its events repeat more than ${LIMITS.steps} times in all before the window ends`);
    const wall = wallClock(next);
    if (wall >= o.to + MARGIN) break;
    // Occurrences that end well before the window are only counted: no override lookup, no zone conversion.
    if (wall + span <= o.from - MARGIN) continue;
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
 * not CANCELLED, recurrences expanded. Throws on text that is not iCalendar, and a
 * `CalendarLimitError` on a calendar over LIMITS. Run it through `expandOffThread` for untrusted
 * text: the limits bound the work ical.js is asked to do, the worker bounds the rest.
 */
export function busyIntervals(texts: string[], o: ExpandOptions): Interval[] {
  const b: Budget = { steps: 0, zoneChanges: 0, lastYear: new Date(o.to + MARGIN).getUTCFullYear() + 1 };
  const outer = budget;
  budget = b;
  try {
    const out: Interval[] = [];
    let events = 0;
    for (const text of texts) {
      const root = new ICAL.Component(ICAL.parse(text) as unknown[]);
      if (root.name !== 'vcalendar') throw new Error('not an iCalendar (VCALENDAR) document');
      const vevents = root.getAllSubcomponents('vevent');
      events += vevents.length;
      if (events > LIMITS.events) throw new CalendarLimitError(`more than ${LIMITS.events} events`);
      const byUid = new Map<string, { master?: ICAL.Component; overrides: ICAL.Component[] }>();
      for (const c of vevents) {
        const uid = String(c.getFirstPropertyValue('uid') ?? '');
        if (isOwnEvent(uid)) continue;
        // Events without a UID are each their own event.
        const key = uid || `#${byUid.size}`;
        const g = byUid.get(key) ?? { overrides: [] };
        if (c.hasProperty('recurrence-id')) g.overrides.push(c);
        else g.master = c;
        byUid.set(key, g);
      }
      for (const [uid, g] of byUid) expandOne(uid, g.master, g.overrides, o, out, b);
    }
    return normalise(out);
  } finally {
    budget = outer;
  }
}
