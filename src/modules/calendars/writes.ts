// Bookings written to the host's calendar: a `calendar` delivery per booking change, queued in
// the change's transaction, so a slow or down CalDAV server never delays or fails a booking.
import type { AppContext } from '../../context.js';
import type { LocationType, UsersTable } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Invitation } from '../deliveries/index.js';
import { queueDelivery } from '../deliveries/index.js';
import { reachReason } from '../deliveries/index.js';
import { DeliveryError } from '../deliveries/index.js';
import { BlockedAddressError } from '../deliveries/index.js';
import type { BookingRow } from '../scheduling/index.js';
import type { EventTypeRow } from '../scheduling/index.js';
import { writeConnectionOf } from './calendars.repository.js';
import { DavError } from './dav.js';

export interface CalendarWrite {
  connection_id: number;
  booking_id: string;
}


/** How a booking's place is shown when its event type names none. */
export const LOCATION_LABEL: Record<LocationType, string | null> = {
  video: 'Video call',
  phone: 'Phone call',
  in_person: 'In person',
  other: null,
};

/** The invitation of a booking: the emailed `.ics` and the written calendar event share it (UID, summary, sequence). */
export function invitationOf(
  b: BookingRow,
  et: Pick<EventTypeRow, 'name' | 'location_type'> & { location?: string | null } | undefined,
  host: Pick<UsersTable, 'name' | 'email'> | undefined,
  cancelled: boolean,
): Invitation {
  return {
    uid: `${b.id}@muster`,
    method: cancelled ? 'CANCEL' : 'REQUEST',
    start: b.start_time,
    end: b.end_time,
    summary: `${et?.name ?? 'Booking'} with ${host?.name ?? 'your host'}`,
    organizer: host?.email ?? null,
    organizer_name: host?.name ?? null,
    attendee: b.attendee_email,
    attendee_name: b.attendee_name,
    // RFC 5546: every update of an event raises SEQUENCE; seconds since creation always grow.
    sequence: Math.max(0, Math.floor((Date.parse(b.updated_at) - Date.parse(b.created_at)) / 1000)),
    // A request waiting for its host is TENTATIVE until it is confirmed.
    status: b.status === 'pending' ? 'pending' : 'confirmed',
    // The event type's address or video link when it has one (issue 20), else the kind of place.
    location: et ? (et.location ?? LOCATION_LABEL[et.location_type]) : null,
    stamp: b.updated_at,
  };
}

/**
 * The event written to the host's own calendar: the invitation seen from the host's side. Its title
 * names the attendee ("Site visit with Ben"), not the host whose calendar it is, and its DESCRIPTION
 * carries what the booking emails do: who booked (name and address), their notes and the booking's
 * management page (`manageUrl`, also its URL).
 */
export function hostEventOf(
  b: BookingRow,
  et: Parameters<typeof invitationOf>[1],
  host: Parameters<typeof invitationOf>[2],
  manageUrl: string,
): Omit<Invitation, 'method'> {
  const { method: _method, ...inv } = invitationOf(b, et, host, false);
  const lines = [`Attendee: ${b.attendee_name} <${b.attendee_email}>`];
  if (b.notes) lines.push(`Notes: ${b.notes}`);
  lines.push(`Reschedule or cancel: ${manageUrl}`);
  return Object.assign(inv, { summary: `${et?.name ?? 'Booking'} with ${b.attendee_name}`, description: lines.join('\n'), url: manageUrl });
}

/** Where a booking's event lives in a calendar collection. */
export const eventUrl = (calendarUrl: string, bookingId: string) => new URL(`${encodeURIComponent(bookingId)}.ics`, calendarUrl.endsWith('/') ? calendarUrl : `${calendarUrl}/`).toString();

/**
 * Queues the write of a booking's current state to the host's write calendar, if they chose one.
 * The sender reads the booking when it runs: a PUT for a live booking, a DELETE for a cancelled
 * or declined one, so retries and late deliveries always leave the calendar as the booking is.
 */
export async function queueCalendarWrite(ctx: AppContext, tx: Tx, topic: string, b: BookingRow): Promise<void> {
  // Only a connection of the booking's mode: a live booking never goes to a calendar a test key connected.
  const conn = await writeConnectionOf(tx.db, b.host_id, b.livemode === 1 ? 'live' : 'test');
  if (!conn?.write_calendar) return;
  const payload: CalendarWrite = { connection_id: conn.id, booking_id: b.id };
  await queueDelivery(ctx, tx, {
    kind: 'calendar',
    topic,
    recipient: eventUrl(conn.write_calendar, b.id),
    payload,
    mode: b.livemode === 1 ? 'live' : 'test',
    userId: b.host_id,
    orgId: b.org_id,
  });
}

/**
 * A failed write to a CalDAV calendar as the delivery's error: refused credentials or a refused
 * address are permanent, anything else is retried. The log its owner reads never shows the address
 * a name resolved to or a socket's own error (reach.ts, issue #31).
 */
export function writeError(ctx: AppContext, err: unknown): DeliveryError {
  if (err instanceof DavError) return new DeliveryError(err.message, err.status, err.status === 401 || err.status === 403);
  return new DeliveryError(reachReason(ctx.log, err, 'the calendar server'), null, err instanceof BlockedAddressError);
}
