import type { AppContext } from '../../context.js';
import { calendarObjectIcs } from '../deliveries/ics.js';
import type { OutboxRow } from '../deliveries/outbox.repository.js';
import type { Sender } from '../deliveries/senders/types.js';
import { findBooking } from '../scheduling/bookings.repository.js';
import { linksOf } from '../scheduling/bookings.service.js';
import { findEventType } from '../scheduling/event-types.repository.js';
import { findUserById } from '../users/users.repository.js';
import { findConnection } from './calendars.repository.js';
import { deleteEvent, putEvent } from './dav.js';
import { davOptions } from './sync.service.js';
import { isObjectWrite, sendObject, type ObjectWrite } from './objects.js';
import { hostEventOf, writeError, type CalendarWrite } from './writes.js';

/**
 * Writes a booking's event to the host's CalDAV calendar (the delivery's recipient URL): PUT while
 * the booking stands, DELETE once it is cancelled or declined. A refused address or refused
 * credentials are permanent; anything else is retried on the outbox's schedule.
 */
export function calendarSender(ctx: AppContext): Sender {
  return async (row: OutboxRow) => {
    const p = JSON.parse(row.payload) as CalendarWrite | ObjectWrite;
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
