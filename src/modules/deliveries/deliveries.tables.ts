import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/deliveries as stored (src/db/schema.ts composes DB from every module's tables).

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

export interface DeliveriesTables {
  outbox: OutboxTable;
  outbox_attempts: OutboxAttemptsTable;
  push_subscriptions: PushSubscriptionsTable;
}
