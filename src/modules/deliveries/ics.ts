import ical, { ICalCalendarMethod, ICalEventStatus } from 'ical-generator';

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
}

/** An iCalendar invitation (METHOD:REQUEST) or its cancellation (METHOD:CANCEL) for one booking. */
export function invitationIcs(inv: Invitation): string {
  const cancel = inv.method === 'CANCEL';
  const cal = ical({ prodId: { company: 'Muster', product: 'Muster', language: 'EN' }, method: cancel ? ICalCalendarMethod.CANCEL : ICalCalendarMethod.REQUEST });
  cal.createEvent({
    id: inv.uid,
    start: new Date(inv.start),
    end: new Date(inv.end),
    summary: inv.summary,
    sequence: inv.sequence ?? 0,
    status: cancel ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    ...(inv.organizer ? { organizer: { name: inv.organizer_name ?? inv.organizer, email: inv.organizer } } : {}),
    attendees: [{ email: inv.attendee, rsvp: true }],
  });
  return cal.toString();
}

/** A calendar feed of events (a user's upcoming bookings). */
export function feedIcs(name: string, events: { uid: string; start: string; end: string; summary: string; description?: string; status: 'confirmed' | 'pending' }[]): string {
  const cal = ical({ name, prodId: { company: 'Muster', product: 'Muster', language: 'EN' }, ttl: 15 * 60 });
  for (const e of events) {
    cal.createEvent({
      id: e.uid,
      start: new Date(e.start),
      end: new Date(e.end),
      summary: e.summary,
      description: e.description ?? null,
      status: e.status === 'pending' ? ICalEventStatus.TENTATIVE : ICalEventStatus.CONFIRMED,
    });
  }
  return cal.toString();
}

/**
 * The same event as the invitation, as a calendar object resource for a CalDAV PUT: RFC 4791
 * forbids METHOD in stored objects, so the invitation's text is kept and only that line dropped.
 */
export function calendarObjectIcs(inv: Omit<Invitation, 'method'>): string {
  return invitationIcs({ ...inv, method: 'REQUEST' }).replace(/^METHOD:[^\r\n]*\r?\n/m, '');
}
