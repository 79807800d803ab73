import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/scheduling as stored (src/db/schema.ts composes DB from every module's tables).

export type LocationType = 'video' | 'phone' | 'in_person' | 'other';

export type BookingStatus = 'confirmed' | 'pending' | 'cancelled' | 'declined';

export interface EventTypesTable {
  id: Generated<number>;
  org_id: number;
  owner_id: number;
  team_id: number | null;
  livemode: Flag;
  name: string;
  slug: string;
  description: string | null;
  duration_minutes: number;
  location_type: LocationType;
  requires_confirmation: Flag;
  max_advance_days: number;
  min_notice_hours: number;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  max_bookings_per_day: number | null;
  slot_interval_minutes: number | null;
  /** JSON: {timezone, weekly: [{day, start, end}]} */
  availability: string;
  /** JSON: ["YYYY-MM-DD"] */
  blackout_dates: string;
  webhook_url: string | null;
  webhook_secret: string | null;
  created_at: string;
  updated_at: string;
  /** Where the meeting happens: an address or a video link (migration 0010); null when not given. */
  location: string | null;
}

export interface BookingsTable {
  id: string;
  event_type_id: number | null;
  host_id: number;
  team_id: number | null;
  org_id: number;
  livemode: Flag;
  status: BookingStatus;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  notes: string | null;
  timezone: string;
  /** The visitor's language, BCP 47 (migration 0017); null when the booking request named none. */
  language: string | null;
  requires_confirmation: Flag;
  cancel_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface SchedulingTables {
  event_types: EventTypesTable;
  bookings: BookingsTable;
}
