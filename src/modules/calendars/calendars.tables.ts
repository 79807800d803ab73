import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/calendars as stored (src/db/schema.ts composes DB from every module's tables).

/** An event Muster keeps in a user's CalDAV write calendar (0030), with what it should hold now. */
export interface CalendarObjectsTable {
  id: Generated<number>;
  connection_id: number;
  user_id: number;
  source: string;
  uid: string;
  url: string;
  ics: string;
  wanted: Flag;
  /** The event's end: a sync of a window leaves the events that ended before it alone. */
  ends_at: string;
  updated_at: string;
}

export type CalendarKind = 'ics' | 'caldav';

export type CalendarStatus = 'pending' | 'ok' | 'error';

export interface CalendarConnectionsTable {
  id: Generated<number>;
  user_id: number;
  /** The mode of the credential that connected it (0021): seen and changed only in that mode. */
  livemode: Flag;
  kind: CalendarKind;
  name: string;
  url: string;
  username: string | null;
  /** The CalDAV password, encrypted with the instance key; never returned. */
  secret: string | null;
  /** JSON: CalDAV discovery {home, items: [{url, name, ctag}]}. */
  calendars: string;
  /** JSON: URLs of the calendars that count as busy; null = all (until the user picks). */
  busy_calendars: string | null;
  write_calendar: string | null;
  /** ICS: the feed's last ETag (If-None-Match). */
  etag: string | null;
  status: CalendarStatus;
  error: string | null;
  failing_since: string | null;
  busy_count: number;
  last_synced_at: string | null;
  refreshed_at: string | null;
  sync_lease_until: string | null;
  /** Set when a sync hit a safety limit (0022): not read again until its owner changes it or syncs it. */
  halted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CalendarBusyTable {
  id: Generated<number>;
  connection_id: number;
  user_id: number;
  /** The connection's mode: a test-mode calendar's busy time never blocks live bookings. */
  livemode: Flag;
  start_time: string;
  end_time: string;
}

export interface CalendarsTables {
  calendar_connections: CalendarConnectionsTable;
  calendar_busy: CalendarBusyTable;
  calendar_objects: CalendarObjectsTable;
}
