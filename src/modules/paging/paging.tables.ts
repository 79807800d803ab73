import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

/** An org's escalation policy (0040); shared by both modes. */
export interface EscalationPoliciesTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  /** How many times the whole policy runs again after its last level (0..9). */
  repeat: number;
  /** JSON: [{delay_minutes, targets: [{type, id}]}] (paging/policies.ts Level). */
  levels: string;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** A person's notification rules (0040); no row: the defaults (paging/rules.ts). */
export interface PagingNotificationRulesTable {
  user_id: number;
  /** JSON: {high: [{channel, delay_minutes}], low: [...]} */
  rules: string;
  updated_at: string;
}

export type PagingChannel = 'push' | 'email' | 'sms' | 'voice';
export type PagingNotificationStatus = 'pending' | 'sent' | 'skipped' | 'failed' | 'cancelled';

/** One channel by which one person is to be reached for one incident, due at page time + the rule's delay. */
export interface PagingNotificationsTable {
  id: Generated<number>;
  incident_id: number;
  org_id: number;
  livemode: Flag;
  user_id: number;
  channel: PagingChannel;
  status: PagingNotificationStatus;
  /** Why it was skipped, failed or cancelled. */
  reason: string | null;
  due_at: string;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  /** 0044: paged by a `nearest` target, how far they were (metres); said in the text. */
  distance_m?: number | null;
}

/** A status callback of a call (Twilio's `CallStatus`: completed, busy, no-answer, failed...). */
export interface PagingCallEventsTable {
  id: Generated<number>;
  notification_id: number;
  call_sid: string;
  status: string;
  created_at: string;
}

/** One person paged for one incident (0041): by a level of its policy, or by hand (level null). */
export interface PagingPagesTable {
  id: Generated<number>;
  incident_id: number;
  org_id: number;
  livemode: Flag;
  user_id: number;
  level: number | null;
  loop: number | null;
  target_type: 'user' | 'schedule' | 'team' | 'nearest';
  target_id: number | null;
  created_at: string;
  /** 0044: paged by a `nearest` target, how far they were (metres). */
  distance_m?: number | null;
}

export interface PagingTables {
  paging_pages: PagingPagesTable;
  escalation_policies: EscalationPoliciesTable;
  paging_notification_rules: PagingNotificationRulesTable;
  paging_notifications: PagingNotificationsTable;
  paging_call_events: PagingCallEventsTable;
}
