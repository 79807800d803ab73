import type { AppContext } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import { verifyToken } from '../../lib/signing.js';
import { feedIcs, type FeedEvent } from '../deliveries/index.js';
import { findUserById } from '../users/index.js';
import { FEED_AHEAD, FEED_BACK, userShiftEvents } from './feeds.js';

// A user's own calendar feed (the link of GET /v1/calendar, modules/deliveries): their bookings as
// host and their on-call shifts, in one ICS.

/**
 * The ICS feed behind a link: the user's upcoming live bookings as host (from 30 days back), and
 * their on-call shifts of the last 30 days and the next 90 ("On call: <schedule>").
 */
export async function calendarFeed(ctx: AppContext, token: string): Promise<string> {
  const subject = verifyToken(ctx.secret, 'calendar', token);
  const [userId, version] = (subject ?? '').split('-').map(Number);
  const user = userId ? await findUserById(ctx.db, userId) : undefined;
  if (!user || user.calendar_feed_version !== version) throw notFound();
  const from = iso(new Date(ctx.clock.now().getTime() - 30 * 24 * 3600 * 1000));
  const rows = await ctx.db
    .selectFrom('bookings')
    .leftJoin('event_types', 'event_types.id', 'bookings.event_type_id')
    .select(['bookings.id', 'bookings.start_time', 'bookings.end_time', 'bookings.status', 'bookings.attendee_name', 'bookings.attendee_email', 'bookings.notes', 'bookings.updated_at', 'event_types.name'])
    .where('bookings.host_id', '=', user.id)
    .where('bookings.livemode', '=', 1)
    .where('bookings.status', 'in', ['confirmed', 'pending'])
    .where('bookings.end_time', '>=', from)
    .orderBy('bookings.start_time')
    .limit(2000)
    .execute();
  const now = ctx.clock.nowMs();
  const shifts = await userShiftEvents(ctx, user.id, now - FEED_BACK, now + FEED_AHEAD);
  return feedIcs(`${user.name} · Muster`, [
    ...rows.map((b): FeedEvent => ({
      uid: `${b.id}@muster`,
      start: b.start_time,
      end: b.end_time,
      summary: `${b.name ?? 'Booking'} with ${b.attendee_name}`,
      description: [b.attendee_email, b.notes].filter(Boolean).join('\n'),
      status: b.status === 'pending' ? 'pending' : 'confirmed',
      // The booking's last change, not the fetch: the same feed twice is the same text.
      stamp: b.updated_at,
    })),
    ...shifts,
  ]);
}
