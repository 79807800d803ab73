import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/incidents as stored (src/db/schema.ts composes DB from every module's tables).

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
  /** 0044: within this many metres of the incident, its assignee is on scene (10..50000). */
  arrival_radius_m: Generated<number>;
  /** 0047 (reports): the first acknowledgement, the first escalation past the first level, and how often it was reopened; kept by recordTimeline. */
  first_acknowledged_at: Generated<string | null>;
  escalated_at: Generated<string | null>;
  reopened_count: Generated<number>;
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
  | 'escalation_exhausted'
  /** Arrival (0044): the assignee's position left the arrival radius; a person took back an automatic arrival. */
  | 'departed'
  | 'on_scene_undone';

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

export interface IncidentsTables {
  incidents: IncidentsTable;
  incident_counts: IncidentCountsTable;
  incident_list_versions: IncidentListVersionsTable;
  incident_events: IncidentEventsTable;
  replies: RepliesTable;
}
