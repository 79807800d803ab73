// The API shapes the dashboard reads (see docs/api.md and /v1/openapi.json).

export interface Me {
  id: number;
  email: string;
  name: string;
  slug: string;
  plan: string;
  timezone: string;
  phone: string | null;
  admin: boolean;
  livemode: boolean;
}

export type Role = 'owner' | 'admin' | 'member';

export interface Org {
  id: number;
  name: string;
  slug: string;
  description: string | null;
  role: Role;
  primary: boolean;
  personal: boolean;
  locked: boolean;
  created_at: string;
}

export type IncidentStatus = 'open' | 'in_progress' | 'resolved' | 'closed';
export type Priority = 'low' | 'normal' | 'high' | 'urgent';

export interface Incident {
  Id: number;
  org_id: number;
  livemode: boolean;
  title: string;
  description: string | null;
  status: IncidentStatus;
  priority: Priority;
  source: string;
  source_ref: string | null;
  sla_due_at: string;
  sla_breached: boolean;
  sla_status: 'ok' | 'warning' | 'breached' | 'met';
  customer_token: string;
  customer_status_url: string;
  lat: number | null;
  lng: number | null;
  location_name: string | null;
  assignee_id: number | null;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  acknowledged_at?: string | null;
  acknowledged_by?: number | null;
}

export interface TimelineEvent {
  id: number;
  incident_id: number;
  type: string;
  at: string;
  actor: { user_id: number; user_name: string } | null;
  data: Record<string, unknown>;
}

export interface Responder {
  user_id: number;
  user_name: string;
  device_id: string | null;
  lat: number;
  lng: number;
  last_seen_at: string;
  distance_m: number | null;
  open_assignments: number;
}

export interface Reply {
  id: number;
  incident_id: number;
  body: string;
  public: boolean;
  author_id: number | null;
  author_name: string | null;
  created_at: string;
}

export type SignalType = 'beacon' | 'capture' | 'note' | 'checkin' | 'alert';

export interface Signal {
  Id: number | null;
  type: SignalType;
  user_id: number;
  user_name: string;
  org_id: number;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  note: string | null;
  image_url: string | null;
  ticket_id: number | null;
  meta: Record<string, unknown>;
  created_at: string;
}

export interface Beacon {
  device_id: string | null;
  user_id: number;
  user_name: string;
  org_id: number;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: Record<string, unknown>;
  created_at: string;
  last_seen_at?: string;
}

export type BookingStatus = 'confirmed' | 'pending' | 'cancelled' | 'declined';

export interface Booking {
  id: string;
  status: BookingStatus;
  event_type_id: number | null;
  host_id: number;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  notes: string | null;
  timezone: string;
  requires_confirmation: boolean;
  created_at: string;
}

export type Day = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export interface WeeklyWindow {
  day: Day;
  start: string;
  end: string;
}

export interface EventType {
  id: number;
  owner_id: number;
  org_id: number;
  team_id: number | null;
  name: string;
  slug: string;
  description: string | null;
  duration_minutes: number;
  location_type: 'video' | 'phone' | 'in_person' | 'other';
  /** The address or video link (issue 20). */
  location?: string | null;
  requires_confirmation: boolean;
  max_advance_days: number;
  min_notice_hours: number;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  max_bookings_per_day: number | null;
  slot_interval_minutes: number | null;
  availability: { timezone: string; weekly: WeeklyWindow[] };
  blackout_dates: string[];
  webhook_url: string | null;
  webhook_secret: string | null;
  booking_url: string;
  locked: boolean;
  created_at: string;
}

export interface Member {
  user_id: number;
  email: string;
  name: string;
  role: Role;
}

export interface Team {
  id: number;
  name: string;
  slug: string;
  routing: 'round_robin' | 'random';
  description: string | null;
  created_at: string;
  locked: boolean;
}

export interface TeamMember {
  user_id: number;
  name: string;
  active: boolean;
  locked: boolean;
}

export interface ApiKey {
  id: number;
  name: string;
  mode: 'live' | 'test';
  livemode: boolean;
  redacted: string;
  created_at: string;
  key?: string;
}

/** A live event as the streams send it. */
export interface LiveEvent<T = unknown> {
  type: string;
  payload: T;
  org_ids?: number[];
}
