import type { AppContext } from '../../context.js';
import { davOptions, deleteEvent, findConnection, hostEventOf, isObjectWrite, putEvent, sendObject, writeError, type CalendarWrite, type ObjectWrite } from '../calendars/index.js';
import { calendarObjectIcs, type OutboxRow, type Sender } from '../deliveries/index.js';
import { findUserById } from '../users/index.js';
import { findBooking } from './bookings.repository.js';
import { linksOf } from './bookings.service.js';
import { findEventType } from './event-types.repository.js';

/**
 * Writes a booking's event to the host's CalDAV calendar (the delivery's recipient URL): PUT while
 * the booking stands, DELETE once it is cancelled or declined. A refused address or refused
 * credentials are permanent; anything else is retried on the outbox's schedule.
 */
export function calendarSender(ctx: AppContext): Sender {
  return async (row: OutboxRow) => {
    const p = row.payload as CalendarWrite | ObjectWrite;
    // Events other features keep there (on-call shifts): objects.ts.
    if (isObjectWrite(p)) return sendObject(ctx, row, p);
    const conn = await findConnection(ctx.db, p.connection_id);
    if (!conn) return { outcome: 'skipped', note: 'the calendar connection was removed' };
    const b = await findBooking(ctx.db, p.booking_id);
    // Queued for a connection of the booking's mode; should that ever not hold, nothing is written.
    if (b && b.livemode !== conn.livemode) return { outcome: 'skipped', note: 'the calendar connection is of the other mode' };
    const gone = !b || b.status === 'cancelled' || b.status === 'declined';
    try {
      const o = davOptions(ctx, conn);
      if (gone) return { outcome: 'sent', statusCode: await deleteEvent(row.recipient, o) };
      const et = b.event_type_id === null ? undefined : await findEventType(ctx.db, b.event_type_id);
      const host = await findUserById(ctx.db, b.host_id);
      const manageUrl = linksOf(ctx, b.id).cancel_url.split('?')[0]!;
      return { outcome: 'sent', statusCode: await putEvent(row.recipient, calendarObjectIcs(hostEventOf(b, et, host, manageUrl)), o) };
    } catch (err) {
      throw writeError(ctx, err);
    }
  };
}
