// Shifts written into the CalDAV calendar a person chose for write-back (as bookings are): a job
// (`oncall-calendars`) makes each such calendar hold the person's shifts of the next 90 days, one
// event per shift, through modules/calendars/objects.ts (the outbox writes, retries and deletes).
// Shifts change without a write of their own (a turn comes round, a member leaves), so a periodic
// sync rather than a write per change; an edit shows in the calendar within one job interval.
import ical, { ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import type { AppContext } from '../../context.js';
import { DAY, iso } from '../../lib/clock.js';
import { syncCalendarObjects, usersWithWriteCalendar, type CalendarObject } from '../calendars/index.js';
import { membershipsOf } from '../orgs/index.js';
import { FEED_AHEAD, shiftUid } from './feeds.js';
import { shiftsOfUser } from './oncall.service.js';

const SOURCE = 'oncall';

/**
 * One shift as a stored calendar object (RFC 4791: one VEVENT, no METHOD), free time
 * (TRANSPARENT): on call is not busy, so the shift blocks no booking when the calendar is also
 * read for busy time. DTSTAMP is the schedule's creation, so an unchanged shift is the same text
 * and is not written again.
 */
function shiftIcs(uid: string, start: number, end: number, summary: string, description: string, stamp: string): string {
  const cal = ical({ prodId: { company: 'Muster', product: 'Muster', language: 'EN' } });
  cal.createEvent({ id: uid, start: new Date(start), end: new Date(end), stamp: new Date(stamp), summary, description, status: ICalEventStatus.CONFIRMED, transparency: ICalEventTransparency.TRANSPARENT });
  const text = cal.toString();
  return text.endsWith('\r\n') ? text : `${text}\r\n`;
}

/** Brings every write calendar up to date with its person's shifts; answers how many writes were queued. */
export async function syncShiftCalendars(ctx: AppContext): Promise<number> {
  // The window moves a day at a time, and is resolved from a month earlier: a shift cut at either
  // end (its uid carries its start) changes at most daily, not at every run.
  const today = Math.floor(ctx.clock.nowMs() / DAY) * DAY;
  const since = today - DAY;
  let queued = 0;
  for (const userId of await usersWithWriteCalendar(ctx.db)) {
    const { orgIds } = await membershipsOf(ctx, userId);
    const shifts = (await shiftsOfUser(ctx, userId, orgIds, since - 31 * DAY, today + FEED_AHEAD)).filter((f) => f.shift.end > since);
    const objects: CalendarObject[] = shifts.map(({ shift, schedule }) => {
      const uid = shiftUid(schedule.id, shift);
      return { uid, end: iso(new Date(shift.end)), ics: shiftIcs(uid, shift.start, shift.end, `On call: ${schedule.name}`, `${schedule.name} (${schedule.time_zone})`, schedule.created_at) };
    });
    queued += await ctx.transaction((tx) => syncCalendarObjects(ctx, tx, userId, SOURCE, iso(new Date(since)), objects));
  }
  return queued;
}
