import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { queueEmail } from '../deliveries/index.js';
import { queueDelivery } from '../deliveries/index.js';
import { findUserById } from '../users/index.js';
import type { BookingRow } from './bookings.repository.js';
import type { EventTypeRow } from './event-types.repository.js';
import { invitationOf, queueCalendarWrite } from '../calendars/index.js';
import { emailText, type EmailKey } from './email-text.js';
import { whenIn } from './notice-times.js';

export type BookingEvent = 'booking.created' | 'booking.confirmed' | 'booking.declined' | 'booking.cancelled' | 'booking.rescheduled';

export interface Links {
  cancel_url: string;
  reschedule_url: string;
  confirm_url?: string;
  decline_url?: string;
}

const HOST_LABEL: Record<BookingEvent, string> = {
  'booking.created': 'New booking',
  'booking.confirmed': 'Confirmed',
  'booking.declined': 'Declined',
  'booking.cancelled': 'Cancelled',
  'booking.rescheduled': 'Rescheduled',
};

/**
 * Queues, in the transaction of the change, the emails and the webhook that a booking event
 * owes: the attendee's notice (with its links and an invitation), the host's notice (with confirm
 * and decline links when the booking waits for them), `booking.*` to the event type's webhook, and
 * the event in the host's write calendar. Each email shows the time in its reader's zone (the
 * attendee: the booking's; the host: their own), with the zone named; a cancellation's reason
 * reaches both.
 */
export async function queueBookingNotices(ctx: AppContext, tx: Tx, event: BookingEvent, b: BookingRow, et: EventTypeRow | undefined, links: Links, data: unknown) {
  const host = await findUserById(tx.db, b.host_id);
  const name = et?.name ?? 'Booking';
  const mode = b.livemode === 1 ? ('live' as const) : ('test' as const);
  const base = { userId: b.host_id, orgId: b.org_id, mode };
  const manageUrl = links.cancel_url.split('?')[0]!;
  const ics = invitationOf(b, et, host, event === 'booking.cancelled' || event === 'booking.declined');
  const reason = b.cancel_reason ? `\nReason: ${b.cancel_reason}` : '';
  // The event type's place (an address or a video link, issue 20) under the time in every notice but a cancellation's.
  const where = et?.location ? `\n\nWhere: ${et.location}` : '';

  // The attendee's notice in the booking's language (issue 20): text from email-text.ts, the date through Intl in
  // that language and the booking's zone. The host's notice and the invitation stay in English.
  const lang = b.language;
  const say = (key: EmailKey, vars: Record<string, string> = {}) => emailText(lang, key, vars);
  const v = { name: et?.name ?? say('name.fallback'), at: whenIn(b.start_time, b.end_time, b.timezone, lang) };
  const manage = `${et?.location ? `\n\n${say('where', { place: et.location })}` : ''}\n\n${say('manage', { reschedule: links.reschedule_url, cancel: links.cancel_url })}`;
  const mail = (key: 'created.pending' | 'created' | 'confirmed' | 'declined' | 'cancelled' | 'rescheduled', host: string, tail: string) => ({
    subject: say(`${key}.subject`, v),
    text: `${say(`${key}.text`, { ...v, host })}${tail}`,
  });
  const attendee: Record<BookingEvent, { subject: string; text: string } | undefined> = {
    'booking.created': b.status === 'pending' ? mail('created.pending', host?.name ?? say('host.by'), manage) : mail('created', host?.name ?? say('host.with'), manage),
    'booking.confirmed': mail('confirmed', host?.name ?? say('host.subject'), manage),
    'booking.declined': mail('declined', host?.name ?? say('host.subject'), ''),
    'booking.cancelled': mail('cancelled', '', b.cancel_reason ? `\n${say('reason', { reason: b.cancel_reason })}` : ''),
    'booking.rescheduled': mail('rescheduled', '', manage),
  };
  const a = attendee[event];
  const notes = b.notes ? `Notes: ${b.notes}\n\n` : '';
  const attendeeIcs = { ...ics, description: `${notes}Reschedule or cancel: ${manageUrl}`, url: manageUrl };
  if (a) await queueEmail(ctx, tx, { ...base, to: b.attendee_email, topic: event, ...a, ics: attendeeIcs });

  if (host) {
    const hostAt = whenIn(b.start_time, b.end_time, host.timezone);
    const text =
      event === 'booking.created' && b.status === 'pending'
        ? `${b.attendee_name} <${b.attendee_email}> asks for ${name} on ${hostAt}.\n\nConfirm: ${links.confirm_url}\nDecline: ${links.decline_url}`
        : `${b.attendee_name} <${b.attendee_email}>: ${name} on ${hostAt} (${event.replace('booking.', '')}).${event === 'booking.cancelled' ? reason : where}`;
    const subject = event === 'booking.created' && b.status === 'pending' ? `Please confirm: ${name} on ${hostAt}` : `${HOST_LABEL[event]}: ${name} on ${hostAt}`;
    // The host's copy has no URL: the management link is the attendee's.
    const hostIcs = { ...ics, description: `${b.attendee_name} <${b.attendee_email}>${b.notes ? `\nNotes: ${b.notes}` : ''}` };
    await queueEmail(ctx, tx, { ...base, to: host.email, topic: `${event}.host`, subject, text, ics: hostIcs });
  }

  if (et?.webhook_url) {
    await queueDelivery(ctx, tx, {
      ...base,
      kind: 'webhook',
      topic: event,
      recipient: et.webhook_url,
      payload: { event_type_id: et.id, body: { type: event, created_at: iso(ctx.clock.now()), data } },
    });
  }

  // The host's own calendar, when they chose one to receive bookings (CalDAV).
  await queueCalendarWrite(ctx, tx, event, b);
}
