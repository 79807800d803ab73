import type { Generated } from 'kysely';

// The tables of modules/retention as stored (src/db/schema.ts composes DB from every module's tables).

/** An org's retention in days per kind (0015): null = the instance default, 0 = keep forever. */
export interface RetentionSettingsTable {
  org_id: number;
  signals_days: number | null;
  audit_days: number | null;
  uploads_days: number | null;
  closed_incidents_days: number | null;
  inbound_emails_days: number | null;
  /** Tracks (0046): 0 keeps none (the default), else days each position is kept. */
  tracks_days: Generated<number>;
  updated_at: string;
}

export interface RetentionTables {
  retention_settings: RetentionSettingsTable;
}
