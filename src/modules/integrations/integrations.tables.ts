import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/integrations as stored (src/db/schema.ts composes DB from every module's tables).

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


// Issue #37 (migration 0043): heartbeats, maintenance windows and the integration event log.

/**
 * `new`: never pinged (it cannot miss yet); `up`: pinged, next ping due by `due_at`; `down`: missed,
 * its incident opened. `late` is not stored: an `up` heartbeat past its interval but within its grace.
 */
export type HeartbeatStatus = 'new' | 'up' | 'down';

/** The heartbeat of an integration of type `heartbeat` (one row per such integration). */
export interface IntegrationHeartbeatsTable {
  integration_id: number;
  interval_seconds: number;
  grace_seconds: number;
  status: HeartbeatStatus;
  last_ping_at: string | null;
  /** When it misses unless a ping comes first: the last ping (or a fresh interval) + interval + grace; null while `new`. */
  due_at: string | null;
  /** The incident its last miss opened (while `down`). */
  incident_id: number | null;
  /** When it went down. */
  down_at: string | null;
}

export type IntegrationEventOutcome = 'opened' | 'repeated' | 'resolved' | 'acknowledged' | 'suppressed' | 'rejected' | 'ignored';
export type IntegrationEventSource = 'events_api' | 'alertmanager' | 'grafana' | 'heartbeat';

/** One payload an integration received (or one heartbeat miss), with what came of it; 7 days, the last 100 per integration. */
export interface IntegrationEventsTable {
  id: Generated<number>;
  integration_id: number;
  org_id: number;
  livemode: Flag;
  source: IntegrationEventSource;
  outcome: IntegrationEventOutcome;
  /** Why it was rejected or suppressed. */
  reason: string | null;
  /** The incident it touched (the first, for a notification of several alerts). */
  incident_id: number | null;
  /** JSON: [{ref, outcome, incident_id}] per alert of a notification; null for a single event. */
  results: string | null;
  /** The body as received (JSON text), without the key; at most 64 KB. */
  body: string | null;
  body_truncated: Flag;
  created_at: string;
}

/** A planned outage of an org's integrations in one mode: events are answered but open and page nothing. */
export interface MaintenanceWindowsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  starts_at: string;
  ends_at: string;
  description: string | null;
  /** JSON array of integration ids; null: every integration of the org in its mode. */
  integration_ids: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface IntegrationsTables {
  integrations: IntegrationsTable;
  integration_heartbeats: IntegrationHeartbeatsTable;
  integration_events: IntegrationEventsTable;
  maintenance_windows: MaintenanceWindowsTable;
}
