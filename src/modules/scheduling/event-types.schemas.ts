import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, TimeZone } from '../../lib/schemas.js';
import { Slug } from '../orgs/index.js';

const HHMM = Type.String({ pattern: '^(?:[01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$', description: 'HH:MM, 24:00 for the end of the day' });
export const WeeklyWindowSchema = Type.Object({ day: StringEnum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']), start: HHMM, end: HHMM }, { title: 'WeeklyWindow' });
export const AvailabilitySchema = Type.Object({
  timezone: TimeZone,
  weekly: Type.Array(WeeklyWindowSchema, { maxItems: 70 }),
}, { title: 'WeeklyAvailability', description: 'Weekly hours in a time zone' });
// Answers carry the stored zone as plain text: the serializer has no use for the input format.
const AvailabilityAnswer = Type.Object({ timezone: Type.String(), weekly: Type.Array(WeeklyWindowSchema) });
export const LocationTypeSchema = StringEnum(['video', 'phone', 'in_person', 'other']);
const DateOnly = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' });
const Minutes = (max: number, description: string) => Type.Integer({ minimum: 0, maximum: max, description });
const WebhookUrl = Type.String({ maxLength: 2048, pattern: '^https?://', description: 'receives booking.* webhooks, signed per Standard Webhooks' });

const fields = {
  name: Type.String({ maxLength: 100, pattern: '\\S' }),
  slug: Slug,
  description: Nullable(Type.String({ maxLength: 5000 })),
  duration_minutes: Type.Integer({ minimum: 5, maximum: 1440 }),
  location_type: LocationTypeSchema,
  location: Nullable(Type.String({ maxLength: 500, description: 'where the meeting happens: an address, a video link or a phone number; shown on the booking page, in emails and in the invitation' })),
  requires_confirmation: Type.Boolean(),
  max_advance_days: Type.Integer({ minimum: 1, maximum: 3650, description: 'default 60' }),
  min_notice_hours: Minutes(8760, 'hours; default 0'),
  buffer_before_minutes: Minutes(1440, 'default 0'),
  buffer_after_minutes: Minutes(1440, 'default 0'),
  max_bookings_per_day: Nullable(Type.Integer({ minimum: 1, maximum: 1000, description: 'per host and day; null for none' })),
  slot_interval_minutes: Nullable(Type.Integer({ minimum: 5, maximum: 1440, description: 'default: the duration' })),
  availability: AvailabilitySchema,
  blackout_dates: Type.Array(DateOnly, { maxItems: 1000 }),
  webhook_url: Nullable(WebhookUrl),
};

export const CreateEventTypeBody = Type.Object({
  name: fields.name,
  duration_minutes: fields.duration_minutes,
  slug: Type.Optional(fields.slug),
  description: Type.Optional(fields.description),
  location_type: Type.Optional(fields.location_type),
  location: Type.Optional(fields.location),
  requires_confirmation: Type.Optional(fields.requires_confirmation),
  max_advance_days: Type.Optional(fields.max_advance_days),
  min_notice_hours: Type.Optional(fields.min_notice_hours),
  buffer_before_minutes: Type.Optional(fields.buffer_before_minutes),
  buffer_after_minutes: Type.Optional(fields.buffer_after_minutes),
  max_bookings_per_day: Type.Optional(fields.max_bookings_per_day),
  slot_interval_minutes: Type.Optional(fields.slot_interval_minutes),
  availability: Type.Optional(fields.availability),
  blackout_dates: Type.Optional(fields.blackout_dates),
  webhook_url: Type.Optional(fields.webhook_url),
});
export type CreateEventTypeBody = Static<typeof CreateEventTypeBody>;

export const UpdateEventTypeBody = Type.Partial(Type.Object(fields), { minProperties: 1 });
export type UpdateEventTypeBody = Static<typeof UpdateEventTypeBody>;

export const EventType = Type.Object({
  id: Type.Integer(),
  owner_id: Type.Integer(),
  org_id: Type.Integer(),
  team_id: Nullable(Type.Integer()),
  livemode: Type.Boolean(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  duration_minutes: Type.Integer(),
  location_type: LocationTypeSchema,
  location: Nullable(Type.String()),
  requires_confirmation: Type.Boolean(),
  max_advance_days: Type.Integer(),
  min_notice_hours: Type.Integer(),
  buffer_before_minutes: Type.Integer(),
  buffer_after_minutes: Type.Integer(),
  max_bookings_per_day: Nullable(Type.Integer()),
  slot_interval_minutes: Nullable(Type.Integer()),
  availability: AvailabilityAnswer,
  blackout_dates: Type.Array(Type.String()),
  webhook_url: Nullable(Type.String()),
  webhook_secret: Nullable(Type.String({ description: 'whsec_...: verify booking webhooks with it' })),
  booking_url: Type.String({ description: 'the public booking page' }),
  locked: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { title: 'EventType', description: 'A kind of meeting that can be booked' });
export type EventType = Static<typeof EventType>;
export const EventTypeList = Type.Object({ event_types: Type.Array(EventType) }, { title: 'EventTypeList' });
export const EventTypeParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
