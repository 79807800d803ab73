import ical, { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendarMethod, ICalEventStatus, ICalEventTransparency } from 'ical-generator';

export interface Invitation {
  uid: string;
  method: 'REQUEST' | 'CANCEL';
  start: string;
  end: string;
  summary: string;
  organizer: string | null;
  organizer_name?: string | null;
  attendee: string;
  sequence?: number;
  /** The attendee's name (CN). */
  attendee_name?: string | null;
  /** A booking waiting for its host is TENTATIVE, never CONFIRMED. Default confirmed. */
  status?: 'confirmed' | 'pending';
  location?: string | null;
  description?: string | null;
  /** The attendee's management page (reschedule or cancel). */
  url?: string | null;
  /** DTSTAMP: the booking's last change, so a resent invitation is the same text. Default now. */
  stamp?: string | null;
}

const PROD_ID = { company: 'Muster', product: 'Muster', language: 'EN' };

/**
 * RFC 5545 ends every content line, the last one included, with CRLF; ical-generator leaves
 * the final `END:VCALENDAR` without one, which strict parsers refuse.
 */
const withFinalCrlf = (text: string) => (text.endsWith('\r\n') ? text : `${text}\r\n`);

function eventStatus(inv: Invitation): ICalEventStatus {
  if (inv.method === 'CANCEL') return ICalEventStatus.CANCELLED;
  return inv.status === 'pending' ? ICalEventStatus.TENTATIVE : ICalEventStatus.CONFIRMED;
}

/**
 * An iCalendar invitation (METHOD:REQUEST) or its cancellation (METHOD:CANCEL) for one booking.
 * The attendee chose the time, so their PARTSTAT is ACCEPTED (DECLINED once cancelled); a
 * pending booking is TENTATIVE until its host confirms (then a new SEQUENCE says CONFIRMED).
 */
export function invitationIcs(inv: Invitation): string {
  const cancel = inv.method === 'CANCEL';
  const cal = ical({ prodId: PROD_ID, method: cancel ? ICalCalendarMethod.CANCEL : ICalCalendarMethod.REQUEST });
  cal.createEvent({
    id: inv.uid,
    start: new Date(inv.start),
    end: new Date(inv.end),
    ...(inv.stamp ? { stamp: new Date(inv.stamp) } : {}),
    summary: inv.summary,
    sequence: inv.sequence ?? 0,
    status: eventStatus(inv),
    location: inv.location ?? null,
    description: inv.description ?? null,
    url: inv.url ?? null,
    ...(inv.organizer ? { organizer: { name: inv.organizer_name ?? inv.organizer, email: inv.organizer } } : {}),
    attendees: [
      {
        email: inv.attendee,
        name: inv.attendee_name ?? inv.attendee,
        role: ICalAttendeeRole.REQ,
        status: cancel ? ICalAttendeeStatus.DECLINED : ICalAttendeeStatus.ACCEPTED,
        rsvp: !cancel,
      },
    ],
  });
  return withFinalCrlf(cal.toString());
}

export interface FeedEvent {
  uid: string;
  start: string;
  end: string;
  summary: string;
  description?: string;
  status: 'confirmed' | 'pending';
  /** DTSTAMP: when the booking last changed, so fetching the feed twice gives the same text. */
  stamp?: string;
  /** Shown as free time (TRANSP:TRANSPARENT): on-call shifts, which make nobody busy. */
  transparent?: boolean;
}

/** A calendar feed of events (a user's upcoming bookings). */
export function feedIcs(name: string, events: FeedEvent[]): string {
  const cal = ical({ name, prodId: PROD_ID, ttl: 15 * 60 });
  for (const e of events) {
    cal.createEvent({
      id: e.uid,
      start: new Date(e.start),
      end: new Date(e.end),
      ...(e.stamp ? { stamp: new Date(e.stamp) } : {}),
      summary: e.summary,
      description: e.description ?? null,
      status: e.status === 'pending' ? ICalEventStatus.TENTATIVE : ICalEventStatus.CONFIRMED,
      ...(e.transparent ? { transparency: ICalEventTransparency.TRANSPARENT } : {}),
    });
  }
  return withFinalCrlf(cal.toString());
}

/**
 * The same event as the invitation, as a calendar object resource for a CalDAV PUT: RFC 4791
 * forbids METHOD in stored objects, so the invitation's text is kept and only that line dropped.
 */
export function calendarObjectIcs(inv: Omit<Invitation, 'method'>): string {
  return invitationIcs({ ...inv, method: 'REQUEST' }).replace(/^METHOD:[^\r\n]*\r?\n/m, '');
}
