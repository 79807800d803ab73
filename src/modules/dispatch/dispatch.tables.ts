import type { Generated } from 'kysely';

// The tables of modules/dispatch as stored (src/db/schema.ts composes DB from every module's tables).

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

/** 0044: where a person's position last put them for an incident (arrival.ts): each change claimed once. */
export interface IncidentPresenceTable {
  incident_id: number;
  user_id: number;
  state: 'inside' | 'outside';
  updated_at: string;
}

export interface DispatchTables {
  dispatch_settings: DispatchSettingsTable;
  incident_presence: IncidentPresenceTable;
}
