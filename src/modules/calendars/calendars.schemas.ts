import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../lib/schemas.js';

const url = (description: string) => Type.String({ maxLength: 2048, pattern: '^(https?|webcal)://\\S+$', description });
const Url = url('http(s):// (webcal:// is read as https://)');

export const CreateCalendarBody = Type.Object({
  kind: StringEnum(['ics', 'caldav'], { description: 'ics: a subscribed feed address; caldav: a CalDAV account (server, principal or calendar URL)' }),
  url: Url,
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'an app password; stored encrypted, never returned' })),
  name: Type.Optional(Type.String({ maxLength: 100, pattern: '\\S' })),
});
export type CreateCalendarBody = Static<typeof CreateCalendarBody>;

export const UpdateCalendarBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100, pattern: '\\S' })),
    url: Type.Optional(url('a new address (http(s)://, webcal://), read at once; a CalDAV account is discovered again and its picks are reset')),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'a new app password; stored encrypted, never returned' })),
    busy_calendars: Type.Optional(Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 100, description: 'CalDAV: URLs of discovered calendars that count as busy' })),
    write_calendar: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'CalDAV: the discovered calendar that receives bookings; null for none' }))),
  },
  { minProperties: 1 },
);
export type UpdateCalendarBody = Static<typeof UpdateCalendarBody>;

export const Calendar = Type.Object({
  id: Type.Integer(),
  kind: StringEnum(['ics', 'caldav']),
  name: Type.String(),
  url: Type.String(),
  username: Nullable(Type.String()),
  livemode: Type.Boolean({ description: 'the mode of the key that connected it; seen and changed only in that mode' }),
  status: StringEnum(['pending', 'ok', 'error']),
  error: Nullable(Type.String()),
  halted: Type.Boolean({
    description: 'true when the last read hit a safety limit (error says which): the calendar is not read again until it is changed (PATCH) or synced by hand',
  }),
  failing_since: Nullable(Type.String()),
  warning: Nullable(Type.String({ description: 'set once the calendar has failed for 24 hours' })),
  last_synced_at: Nullable(Type.String()),
  busy_count: Type.Integer(),
  calendars: Type.Array(Type.Object({ url: Type.String(), name: Type.String(), busy: Type.Boolean(), write: Type.Boolean() })),
  busy_calendars: Nullable(Type.Array(Type.String())),
  write_calendar: Nullable(Type.String()),
  created_at: Type.String(),
}, { title: 'Calendar', description: 'A connected calendar (ICS feed or CalDAV account) read as busy time' });

export const CalendarList = Type.Object({ calendars: Type.Array(Calendar) }, { title: 'CalendarList' });
export const DeletedCalendar = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() });

export const BusyQuery = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
});
export const BusyList = Type.Object({ busy: Type.Array(Type.Object({ calendar_id: Type.Integer(), start_time: Type.String(), end_time: Type.String() })) }, { title: 'BusyTimes' });
