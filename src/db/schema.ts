import type { Generated } from 'kysely';
import type { IntegrationTables } from '../modules/integrations/index.js';
import type { PagingTables } from '../modules/paging/index.js';

/**
 * Row shapes as stored. Both dialects store the same representations:
 * timestamps as ISO-8601 UTC text with milliseconds, booleans as 0/1 integers, JSON as text.
 * Repositories map rows to domain objects, so callers never see 0/1 or JSON strings.
 */
export type Flag = 0 | 1;
export type Plan = 'free' | 'starter' | 'agency' | 'enterprise';
export type Role = 'owner' | 'admin' | 'member';
export type Mode = 'live' | 'test';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string | null;
  name: string;
  slug: string;
  plan: Plan;
  timezone: string;
  phone: string | null;
  is_admin: Flag;
  /** Part of the signed calendar feed link; bumping it revokes the old link. */
  calendar_feed_version: Generated<number>;
  created_at: string;
  updated_at: string;
  /** 1 once the address is proven (verification link, magic or reset code, invite link, an admin). */
  email_verified: Generated<Flag>;
  /** 0040: when the current `phone` was proven by its SMS code; null: not proven (paging skips it). */
  phone_verified_at: string | null;
}

export interface OrgsTable {
  id: Generated<number>;
  name: string;
  slug: string;
  description: string | null;
  personal: Flag;
  /** The billing owner: their plan sets the org's limits. */
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}

export type Routing = 'round_robin' | 'random';

export interface TeamsTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  slug: string;
  routing: Routing;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface TeamMembersTable {
  id: Generated<number>;
  team_id: number;
  user_id: number;
  active: Flag;
  created_at: string;
}

export interface OrgInvitesTable {
  id: Generated<number>;
  org_id: number;
  email: string;
  role: Role;
  invited_by: number | null;
  created_at: string;
  accepted_at: string | null;
  /** SHA-256 of the token in the emailed invite link. */
  token_hash: string | null;
}

export interface MembershipsTable {
  org_id: number;
  user_id: number;
  role: Role;
  is_primary: Flag;
  created_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  user_id: number;
  created_at: string;
  expires_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  mode: Mode;
  key_hash: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export interface MagicCodesTable {
  id: Generated<number>;
  email: string;
  code_hash: string;
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
  purpose: Generated<CodePurpose>;
}

/** What an emailed six-digit code is for: signing in, resetting the password, proving the address. */
export type CodePurpose = 'magic' | 'reset' | 'verify' | 'phone';

export type OutboxKind = 'email' | 'webhook' | 'push' | 'phone' | 'calendar';
export type OutboxStatus = 'pending' | 'sending' | 'sent' | 'failed' | 'suppressed' | 'skipped';

export interface OutboxTable {
  id: Generated<number>;
  kind: OutboxKind;
  /** What caused it, e.g. `auth.magic_code`, `booking.created`. */
  topic: string;
  org_id: number | null;
  user_id: number | null;
  livemode: Flag;
  recipient: string;
  payload: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export type IncidentStatus = 'open' | 'in_progress' | 'resolved' | 'closed';
export type Priority = 'low' | 'normal' | 'high' | 'urgent';
export type IncidentSource = 'api' | 'email' | 'webhook' | 'alert' | 'dashboard';

export interface IncidentsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  title: string;
  description: string | null;
  status: IncidentStatus;
  priority: Priority;
  source: IncidentSource;
  source_ref: string | null;
  lat: number | null;
  lng: number | null;
  location_name: string | null;
  assignee_id: number | null;
  creator_id: number | null;
  customer_token: string;
  sla_due_at: string;
  /** When 75% of the SLA window has passed. */
  sla_warn_at: string;
  /** Set once by the sweeper when the warning email is queued. */
  sla_warned_at: string | null;
  /** Set once by the sweeper when the breach email is queued. */
  sla_breached_at: string | null;
  resolved_at: string | null;
  created_at: string;
  updated_at: string;
  /** Dispatch (0011): set by the assignee's (or an admin's) acknowledgement, cleared by reassignment. */
  acknowledged_at: string | null;
  acknowledged_by: number | null;
  /** Escalation steps taken so far (at most 3); `escalate_at` is when the next is due, null when none is. */
  escalation_level: Generated<number>;
  escalate_at: string | null;
  /** 0027: the integration that opened it, its name then, and the tool that posted; null otherwise. */
  integration_id: number | null;
  integration_name: string | null;
  integration_tool: IntegrationTool | null;
  /** 0040: the escalation policy, and its copy taken when it was set (later edits of the policy do not change it). */
  escalation_policy_id: number | null;
  escalation_snapshot: string | null;
  /** 0041: with a policy, how many times it ran again after its last level (`escalation_level` is then the level last fired). */
  escalation_loop: Generated<number>;
}

/** How an integration's incident arrived: PagerDuty's Events API, Alertmanager, Grafana or a mailbox. */
export type IntegrationTool = 'events_api' | 'alertmanager' | 'grafana' | 'email' | 'heartbeat';

export type TimelineType =
  | 'created'
  | 'status_changed'
  | 'priority_changed'
  | 'assigned'
  | 'unassigned'
  | 'acknowledged'
  | 'en_route'
  | 'on_scene'
  | 'reply'
  | 'signal'
  | 'escalated'
  | 'sla_warning'
  | 'sla_breached'
  | 'alert_repeated'
  /** Paging (0040): a person paged for the incident. */
  | 'paged'
  /** Paging (0041): one notification's outcome, a level with nobody to page, the end of a policy. */
  | 'notified'
  | 'escalation_skipped'
  | 'escalation_exhausted';

export interface IncidentEventsTable {
  id: Generated<number>;
  incident_id: number;
  org_id: number;
  livemode: Flag;
  type: TimelineType;
  actor_id: number | null;
  /** JSON object; its shape depends on `type` (docs/api.md, Timeline). */
  data: string;
  created_at: string;
}

/** An org's acknowledgement timeouts in minutes (no row: the defaults; null: never escalate). */
export interface DispatchSettingsTable {
  org_id: number;
  ack_urgent_minutes: number | null;
  ack_high_minutes: number | null;
  /** Minutes before a shift that its person is told (0030, default 15); null: never. */
  handoff_notice_minutes: Generated<number | null>;
  /** 0040: the policy of field alerts, email and API incidents; null: the built-in escalation. */
  default_escalation_policy_id: Generated<number | null>;
  updated_at: string;
}

export interface IncidentCountsTable {
  org_id: number;
  livemode: Flag;
  status: IncidentStatus;
  priority: Priority;
  n: number;
}

/** Bumped by triggers on every write of an org's incidents (migration 0019): the list cache's version. */
export interface IncidentListVersionsTable {
  org_id: number;
  livemode: Flag;
  version: number | string;
}

export interface RepliesTable {
  id: Generated<number>;
  incident_id: number;
  body: string;
  public: Flag;
  author_id: number | null;
  created_at: string;
  /** 1 once the author's account was deleted (0015): shown as "Deleted user". */
  author_deleted: Generated<Flag>;
}

export type SignalType = 'beacon' | 'capture' | 'note' | 'checkin' | 'alert';

export interface SignalsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  user_id: number | null;
  type: Exclude<SignalType, 'beacon'>;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  note: string | null;
  image_url: string | null;
  ticket_id: number | null;
  meta: string;
  created_at: string;
}

export interface BeaconStatesTable {
  livemode: Flag;
  user_id: number;
  /** `meta.device_id`, or `user` for a user beaconing without one. */
  device_key: string;
  device_id: string | null;
  org_id: number;
  active: Flag;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: string;
  /** When the shown position was taken; an older one never replaces it. */
  position_at: string;
  last_seen_at: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  action: string;
  user_id: number | null;
  device_id: string | null;
  meta: string;
  created_at: string;
}

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

export interface SettingsTable {
  key: string;
  value: string;
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

export type AttemptOutcome = 'sent' | 'failed' | 'suppressed' | 'skipped';

export interface OutboxAttemptsTable {
  id: Generated<number>;
  outbox_id: number;
  attempt: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

export interface PushSubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  /** The mode of the credential that registered it (0021): live alerts go to live subscriptions only. */
  livemode: Flag;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: string;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  scope: string;
  key: string;
  fingerprint: string;
  state: 'pending' | 'done';
  lock_token: string | null;
  locked_at: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
}

export interface IntegrationsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  name: string;
  key_hash: string;
  last4: string;
  email_token: string;
  created_by: number | null;
  default_assignee_id: number | null;
  /** JSON {critical, error, warning, info} -> priority; null: the default mapping. */
  priority_map: string | null;
  /** JSON array of sender domains; null: anyone may open incidents by email. */
  allowed_senders: string | null;
  created_at: string;
  revoked_at: string | null;
  /** 0040: the escalation policy of its incidents; null: the org default. */
  escalation_policy_id: number | null;
}

/** `ignored`: automatic mail (RFC 3834) or a recipient refused beside an accepted one, kept with why, never answered. */
export type InboundEmailStatus = 'pending' | 'processed' | 'failed' | 'ignored';

export interface InboundEmailsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  integration_id: number | null;
  reply_to_incident_id: number | null;
  mail_from: string;
  rcpt_to: string;
  message_id: string | null;
  /** The received message, base64. */
  raw: string;
  status: InboundEmailStatus;
  attempts: Generated<number>;
  error: string | null;
  incident_id: number | null;
  created_at: string;
  processed_at: string | null;
  /** The From: address (lower case); null on rows received before 0023. */
  sender: string | null;
  /** Where an answer goes: Reply-To:, else From: (lower case). */
  answer_to: string | null;
  subject: string | null;
  /** 1 when From: was authenticated (DMARC alignment through DKIM or SPF, or a trusted relay or forwarder). */
  authenticated: Generated<Flag>;
  /** One line: how From: was or was not authenticated. */
  auth: string | null;
  /** Bytes of the message as received (0 once retention emptied `raw`). */
  size: Generated<number>;
  /** Set when retention emptied `raw`. */
  raw_removed_at: string | null;
}

export interface DB extends PagingTables, IntegrationTables {
  users: UsersTable;
  orgs: OrgsTable;
  memberships: MembershipsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  org_invites: OrgInvitesTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  magic_codes: MagicCodesTable;
  outbox: OutboxTable;
  incidents: IncidentsTable;
  incident_counts: IncidentCountsTable;
  incident_list_versions: IncidentListVersionsTable;
  incident_events: IncidentEventsTable;
  dispatch_settings: DispatchSettingsTable;
  replies: RepliesTable;
  signals: SignalsTable;
  beacon_states: BeaconStatesTable;
  audit_log: AuditLogTable;
  event_types: EventTypesTable;
  bookings: BookingsTable;
  settings: SettingsTable;
  outbox_attempts: OutboxAttemptsTable;
  push_subscriptions: PushSubscriptionsTable;
  idempotency_keys: IdempotencyKeysTable;
  calendar_connections: CalendarConnectionsTable;
  calendar_busy: CalendarBusyTable;
  devices: DevicesTable;
  integrations: IntegrationsTable;
  inbound_emails: InboundEmailsTable;
  retention_settings: RetentionSettingsTable;
  oncall_schedules: OncallSchedulesTable;
  oncall_layer_versions: OncallLayerVersionsTable;
  oncall_overrides: OncallOverridesTable;
  oncall_handoff_notices: OncallHandoffNoticesTable;
  membership_history: MembershipHistoryTable;
  calendar_objects: CalendarObjectsTable;
}

/** An on-call schedule (0030); shared by both modes. Deleted ones keep their row. */
export interface OncallSchedulesTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  slug: string;
  time_zone: string;
  description: string | null;
  /** Part of the signed feed link; bumping it revokes the old link. */
  feed_version: Generated<number>;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** The layers of a schedule in force from `effective_from` until the next version's. */
export interface OncallLayerVersionsTable {
  id: Generated<number>;
  schedule_id: number;
  effective_from: string;
  time_zone: string;
  /** JSON: the layers, in order of precedence (modules/oncall/resolver.ts LayerSpec). */
  layers: string;
  created_by: number | null;
  created_at: string;
}

/** An override; its start is never before its creation, and a deleted one counts until `deleted_at`. */
export interface OncallOverridesTable {
  id: Generated<number>;
  schedule_id: number;
  user_id: number;
  start_time: string;
  end_time: string;
  created_by: number | null;
  created_at: string;
  deleted_at: string | null;
}

/** One row per shift whose person was told of it: the handoff notice's exactly-once key. */
export interface OncallHandoffNoticesTable {
  schedule_id: number;
  user_id: number;
  shift_start: string;
  created_at: string;
}

/** A membership that ended (member removed, left, or account deleted), kept for on-call history. */
export interface MembershipHistoryTable {
  id: Generated<number>;
  org_id: number;
  user_id: number;
  joined_at: string;
  left_at: string;
}

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

/** An org's retention in days per kind (0015): null = the instance default, 0 = keep forever. */
export interface RetentionSettingsTable {
  org_id: number;
  signals_days: number | null;
  audit_days: number | null;
  uploads_days: number | null;
  closed_incidents_days: number | null;
  inbound_emails_days: number | null;
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

/** A tracker app's device (issue #17): its token is stored as a SHA-256 only. */
export interface DevicesTable {
  id: Generated<number>;
  user_id: number;
  org_id: number;
  livemode: Flag;
  name: string;
  device_id: string;
  token_hash: string;
  created_at: string;
  updated_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
}

export const flag = (b: boolean): Flag => (b ? 1 : 0);
