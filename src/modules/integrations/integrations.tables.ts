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

export interface IntegrationsTables {
  integrations: IntegrationsTable;
}
