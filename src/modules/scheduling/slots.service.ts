import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import { DAY, MINUTE, iso } from '../../lib/clock.js';
import { invalidField, resourceLocked } from '../../lib/errors.js';
import { isTimeZone } from '../../lib/timezone.js';
import { orgLimits } from '../orgs/index.js';
import { isLockedAt, withLocks } from '../orgs/index.js';
import { listTeamMembers } from '../orgs/index.js';
import { computeSlots, dayRange, isValidDate, type BusyBooking, type Host, type Slot } from './availability.js';
import { busyBookings } from './bookings.repository.js';
import type { PositionedEventType } from './event-types.repository.js';
import { describe } from './event-types.service.js';

/** An event type with the hosts who may take its bookings. */
export interface Bookable {
  et: PositionedEventType;
  hostIds: number[];
  locked: boolean;
}

/** Personal: the owner. Team: its active members within the plan's per-team limit, in the order they joined. */
export async function bookableOf(ctx: AppContext, et: PositionedEventType): Promise<Bookable> {
  if (et.team_id === null) return { et, hostIds: [et.owner_id], locked: (await describe(ctx, et)).locked };
  const { limits, locked: orgLocked } = await orgLimits(ctx, et.org_id);
  const position = await ctx.db
    .selectFrom('teams')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', et.org_id)
    .where('id', '<', et.team_id)
    .executeTakeFirstOrThrow();
  const teamLocked = orgLocked || isLockedAt(Number(position.n), limits.teamsPerOrg);
  const members = withLocks(await listTeamMembers(ctx.db, et.team_id), limits.membersPerTeam, teamLocked);
  return { et, hostIds: members.filter((m) => m.active === 1 && !m.locked).map((m) => m.user_id), locked: teamLocked };
}

export function assertBookable(b: Bookable): void {
  if (b.locked) throw resourceLocked();
}

/**
 * The slots of one day for a bookable, from one query for the busy time of all its hosts: their
 * bookings from two days either side (buffers and the per-day count in any zone), and their calendars'
 * intervals only where a slot of the day, with this event type's buffers, could meet them.
 */
export async function slotsFor(ctx: AppContext, db: Kysely<DB>, b: Bookable, date: string, timezone: string, excludeBookingId?: string): Promise<Slot[]> {
  const et = b.et;
  const span = dayRange(date, timezone);
  const reach = {
    from: iso(new Date(span.start - et.buffer_before_minutes * MINUTE)),
    to: iso(new Date(span.end + (et.duration_minutes + et.buffer_after_minutes) * MINUTE)),
  };
  const busy = await busyBookings(db, b.hostIds, et.livemode, { from: iso(new Date(span.start - 2 * DAY)), to: iso(new Date(span.end + 2 * DAY)) }, reach, excludeBookingId);
  // One pass over the rows, grouped by host (never a scan of all rows per host).
  const byHost = new Map<number, BusyBooking[]>(b.hostIds.map((id) => [id, []]));
  for (const x of busy) {
    byHost.get(x.host_id)?.push({
      start: Date.parse(x.start_time),
      end: Date.parse(x.end_time),
      bufferBeforeMinutes: x.buffer_before_minutes,
      bufferAfterMinutes: x.buffer_after_minutes,
      sameEventType: x.event_type_id === et.id,
    });
  }
  const hosts: Host[] = b.hostIds.map((id) => ({ id, bookings: byHost.get(id)! }));
  return computeSlots(
    et.availability,
    {
      durationMinutes: et.duration_minutes,
      intervalMinutes: et.slot_interval_minutes ?? et.duration_minutes,
      bufferBeforeMinutes: et.buffer_before_minutes,
      bufferAfterMinutes: et.buffer_after_minutes,
      minNoticeHours: et.min_notice_hours,
      maxAdvanceDays: et.max_advance_days,
      maxBookingsPerDay: et.max_bookings_per_day,
      blackoutDates: new Set(et.blackout_dates),
    },
    hosts,
    { date, timezone, now: ctx.clock.now().getTime() },
  );
}

/** The availability answer: `date` is a day in `timezone`; slots are in UTC. */
export async function availability(ctx: AppContext, b: Bookable, date: string, timezone = 'UTC') {
  if (!isValidDate(date)) throw invalidField('date', 'must be a real date as YYYY-MM-DD');
  if (!isTimeZone(timezone)) throw invalidField('timezone', 'must be an IANA time zone');
  const slots = b.locked ? [] : await slotsFor(ctx, ctx.db, b, date, timezone);
  return {
    date,
    event_type_id: b.et.id,
    timezone,
    slots: slots.map((s) => ({ start_time: iso(new Date(s.start)), end_time: iso(new Date(s.end)) })),
  };
}
