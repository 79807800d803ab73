import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

/** An org's subscription to incident events (0042), in one mode. */
export interface IncidentSubscriptionsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  url: string;
  /** `standard`, `chat` or `teams` (formats.ts). */
  format: string;
  /** JSON: the event names it receives (events.ts). */
  events: string;
  /** whsec_...: signs `standard` deliveries; null for the other formats. */
  secret: string | null;
  description: string | null;
  /** Set when the receiver answered 410 Gone: nothing is queued for it until it is turned on again. */
  disabled_at: string | null;
  disabled_reason: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** `oncall.shift_started` sent once per shift (0042). */
export interface SubscriptionShiftStartsTable {
  schedule_id: number;
  user_id: number;
  shift_start: string;
  created_at: string;
}

export interface SubscriptionTables {
  incident_subscriptions: IncidentSubscriptionsTable;
  subscription_shift_starts: SubscriptionShiftStartsTable;
}
