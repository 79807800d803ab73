import { Type } from '@sinclair/typebox';
import { LANGUAGE_MAX, LANGUAGE_PATTERN } from '../../lib/language.js';
import { Email, Nullable, PagingQuery, PersonName, StringEnum, TimeZone } from '../../lib/schemas.js';

export const BookingStatusSchema = StringEnum(['confirmed', 'pending', 'cancelled', 'declined']);

export const AvailabilityQuery = Type.Object({
  event_type_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
  date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a day in `timezone`, YYYY-MM-DD' }),
  timezone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA; default UTC' })),
});
export const SlotsQuery = Type.Object({ date: AvailabilityQuery.properties.date, timezone: AvailabilityQuery.properties.timezone });
export const Slot = Type.Object(
  { start_time: Type.String({ description: 'UTC, ISO 8601' }), end_time: Type.String({ description: 'UTC, ISO 8601' }) },
  { title: 'Slot', description: 'A bookable window', examples: [{ start_time: '2026-03-02T09:00:00.000Z', end_time: '2026-03-02T09:30:00.000Z' }] },
);
export const AvailabilityResponse = Type.Object({
  date: Type.String(),
  event_type_id: Type.Integer(),
  timezone: Type.String(),
  slots: Type.Array(Slot, { description: 'in UTC' }),
}, { title: 'Availability', description: 'Open slots of one day' });

export const PublicBookingBody = Type.Object({
  attendee_name: PersonName,
  attendee_email: Email,
  start_time: Type.String({ format: 'date-time', description: 'the start of a slot offered by availability' }),
  timezone: Type.Optional(TimeZone),
  notes: Type.Optional(Type.String({ maxLength: 5000 })),
  language: Type.Optional(
    Type.String({
      maxLength: LANGUAGE_MAX,
      pattern: LANGUAGE_PATTERN,
      description: "the visitor's language, BCP 47 (e.g. `de`, `en-GB`): the emails to the attendee use it for text and dates; default the request's Accept-Language",
    }),
  ),
});
export const CreateBookingBody = Type.Object({ event_type_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), ...PublicBookingBody.properties });

export const Booking = Type.Object({
  id: Type.String(),
  status: BookingStatusSchema,
  event_type_id: Nullable(Type.Integer()),
  host_id: Type.Integer(),
  attendee_name: Type.String(),
  attendee_email: Type.String(),
  start_time: Type.String(),
  end_time: Type.String(),
  notes: Nullable(Type.String()),
  timezone: Type.String(),
  language: Nullable(Type.String({ description: "the attendee's language (BCP 47) from the booking request, or null when it named none; emails to the attendee follow it" })),
  requires_confirmation: Type.Boolean(),
  cancel_url: Type.String(),
  reschedule_url: Type.String(),
  livemode: Type.Boolean(),
  created_at: Type.String(),
  cancel_reason: Nullable(Type.String({ description: 'the reason given when it was cancelled (by the attendee, shared with the host; or by the host)' })),
}, {
  title: 'Booking',
  description: 'A booking (assignment) of a slot',
  examples: [
    {
      id: 'bk_9f2c7d1e', status: 'confirmed', event_type_id: 3, host_id: 1, attendee_name: 'Ana Field', attendee_email: 'ana@example.com',
      start_time: '2026-03-02T09:00:00.000Z', end_time: '2026-03-02T09:30:00.000Z', notes: null, timezone: 'Europe/Paris', language: 'fr-FR', requires_confirmation: false,
      cancel_url: 'https://muster.example.org/bookings/manage/mt_1a2b?action=cancel', reschedule_url: 'https://muster.example.org/bookings/manage/mt_1a2b?action=reschedule',
      livemode: true, created_at: '2026-02-27T16:40:00.000Z', cancel_reason: null,
    },
  ],
});
export const BookingList = Type.Object({ bookings: Type.Array(Booking), page: Type.Integer(), limit: Type.Integer(), has_more: Type.Boolean() }, { title: 'BookingList' });
export const ListBookingsQuery = Type.Object({
  ...PagingQuery.properties,
  event_type_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  status: Type.Optional(BookingStatusSchema),
  from: Type.Optional(Type.String({ format: 'date-or-date-time', description: 'start_time at or after: a date-time, or a day (YYYY-MM-DD, from its start, UTC)' })),
  to: Type.Optional(Type.String({ format: 'date-or-date-time', description: 'start_time before: a date-time, or a day (YYYY-MM-DD, up to its end, UTC)' })),
});
export const BookingIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const CancelBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 2000 })) });
export const RescheduleBody = Type.Object({ start_time: Type.String({ format: 'date-time' }), reason: Type.Optional(Type.String({ maxLength: 2000 })) });
export const Cancelled = Type.Object({ id: Type.String(), status: BookingStatusSchema }, { title: 'CancelledBooking' });
export const PersonalPath = Type.Object({ username: Type.String({ maxLength: 100 }), event_slug: Type.String({ maxLength: 100 }) });
export const TeamPath = Type.Object({ org_slug: Type.String({ maxLength: 100 }), team_slug: Type.String({ maxLength: 100 }), event_slug: Type.String({ maxLength: 100 }) });
