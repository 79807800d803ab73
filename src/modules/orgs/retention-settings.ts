import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, RetentionSettingsTable } from '../../db/schema.js';
import { iso } from '../../lib/clock.js';

// An org's retention settings (issue #22): how long it keeps each kind of data. Set with PATCH
// /v1/orgs/:org_slug, read by modules/retention (its sweeper and GET .../retention).

export type RetentionKind = 'signals_days' | 'audit_days' | 'uploads_days' | 'closed_incidents_days' | 'inbound_emails_days';
export const RETENTION_KINDS: readonly RetentionKind[] = ['signals_days', 'audit_days', 'uploads_days', 'closed_incidents_days', 'inbound_emails_days'];
export type StoredRetention = Pick<RetentionSettingsTable, RetentionKind>;

export async function findRetention(db: Kysely<DB>, orgId: number): Promise<StoredRetention | undefined> {
  return db.selectFrom('retention_settings').select(RETENTION_KINDS).where('org_id', '=', orgId).executeTakeFirst();
}

/** Sets the given kinds (null: instance default, 0: forever), leaving the others as they were. */
export async function saveRetention(db: Kysely<DB>, orgId: number, values: Partial<StoredRetention> & { tracks_days?: number }, now: string): Promise<void> {
  await db
    .insertInto('retention_settings')
    .values({ org_id: orgId, signals_days: null, audit_days: null, uploads_days: null, closed_incidents_days: null, inbound_emails_days: null, ...values, updated_at: now })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ ...values, updated_at: now }))
    .execute();
}

/** Days per kind as the API shows them: null keeps forever. */
export type Retention = Record<RetentionKind, number | null>;

/** What one org keeps: its own setting per kind, else the instance default (RETENTION_*_DAYS). */
export function effectiveRetention(ctx: AppContext, stored: Partial<StoredRetention> | undefined): Retention {
  const out = { ...ctx.config.ops.retention };
  for (const kind of RETENTION_KINDS) {
    const v = stored?.[kind];
    if (v !== null && v !== undefined) out[kind] = v === 0 ? null : v;
  }
  return out;
}

/** The org's tracks setting (0: no track kept, the default). */
export async function findTracksDays(db: Kysely<DB>, orgId: number): Promise<number> {
  const row = await db.selectFrom('retention_settings').select('tracks_days').where('org_id', '=', orgId).executeTakeFirst();
  return row?.tracks_days ?? 0;
}

/** The bus event every instance's tracks cache listens for (modules/tracks): the org's retention changed. */
export const RETENTION_CHANGED = { channel: 'org-settings', type: 'retention.changed' } as const;

/** Stores the kinds given (null: keep forever). The caller has checked the owner's access (PATCH /v1/orgs/:slug). */
export async function setRetention(ctx: AppContext, orgId: number, input: Partial<Retention> & { tracks_days?: number }): Promise<void> {
  const values: Partial<StoredRetention> & { tracks_days?: number } = {};
  for (const kind of RETENTION_KINDS) {
    const v = input[kind];
    if (v !== undefined) values[kind] = v === null ? 0 : v;
  }
  if (input.tracks_days !== undefined) values.tracks_days = input.tracks_days;
  if (Object.keys(values).length === 0) return;
  await saveRetention(ctx.db, orgId, values, iso(ctx.clock.now()));
  // Every instance's tracks cache reads the org's setting again (this one synchronously).
  if (input.tracks_days !== undefined) ctx.events.bus.publish({ ...RETENTION_CHANGED, orgId, mode: 'live', payload: { tracks_days: input.tracks_days } });
}
