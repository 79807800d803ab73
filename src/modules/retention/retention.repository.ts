import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { RETENTION_KINDS } from '../orgs/index.js';
import { scoped, type Scope } from '../../db/scope.js';

/** Orgs after `afterId`, with their stored settings (none: every kind at the instance default). */
export async function orgsWithRetention(db: Kysely<DB>, afterId: number, limit: number) {
  return db
    .selectFrom('orgs')
    .leftJoin('retention_settings', 'retention_settings.org_id', 'orgs.id')
    .select(['orgs.id', 'retention_settings.tracks_days', ...RETENTION_KINDS.map((k) => `retention_settings.${k}` as const)])
    .where('orgs.id', '>', afterId)
    .orderBy('orgs.id')
    .limit(limit)
    .execute();
}

/** Up to `limit` signals of the scope taken before `before`, with their image URL. */
export async function oldSignals(db: Kysely<DB>, scope: Scope, before: string, limit: number) {
  return db
    .selectFrom('signals')
    .select(['id', 'image_url'])
    .$call(scoped(scope, 'signals'))
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Up to `limit` signals of the scope taken before `before` that still point at an upload. */
export async function oldUploads(db: Kysely<DB>, scope: Scope, before: string, limit: number) {
  return db
    .selectFrom('signals')
    .select(['id', 'image_url'])
    .$call(scoped(scope, 'signals'))
    .where('created_at', '<', before)
    .where('image_url', 'is not', null)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

export async function deleteSignals(db: Kysely<DB>, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.deleteFrom('signals').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function clearImages(db: Kysely<DB>, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.updateTable('signals').set({ image_url: null }).where('id', 'in', ids).where('image_url', 'is not', null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Whether any signal still points at this upload (the same image may be attached twice). */
export async function imageInUse(db: Kysely<DB>, imageUrl: string): Promise<boolean> {
  return (await db.selectFrom('signals').select('id').where('image_url', '=', imageUrl).limit(1).executeTakeFirst()) !== undefined;
}

export async function oldAuditIds(db: Kysely<DB>, scope: Scope, before: string, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('audit_log').select('id').$call(scoped(scope, 'audit_log')).where('created_at', '<', before).limit(limit).execute();
  return rows.map((r) => r.id);
}

export async function deleteAudit(db: Kysely<DB>, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.deleteFrom('audit_log').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Received emails of the scope from before `before` that are not waiting to be processed: their
 * ids, and whether the row is still needed once the message itself goes (a processed message tied
 * to an incident names its reporter and its thread's Message-IDs). Oldest first.
 */
export async function oldInboundEmails(db: Kysely<DB>, scope: Scope, before: string, limit: number) {
  return db
    .selectFrom('inbound_emails')
    .select(['id', 'status', 'incident_id', 'reply_to_incident_id'])
    .$call(scoped(scope, 'inbound_emails'))
    .where('created_at', '<', before)
    .where('status', '<>', 'pending')
    .where('raw_removed_at', 'is', null)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Deletes received emails whole (those that opened or answered nothing). */
export async function deleteInboundEmails(db: Kysely<DB>, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  return Number((await db.deleteFrom('inbound_emails').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
}

/** Empties the message of received emails whose record stays (its sender, subject and Message-ID remain). */
export async function removeInboundRaw(db: Kysely<DB>, ids: readonly number[], now: string): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.updateTable('inbound_emails').set({ raw: '', size: 0, raw_removed_at: now }).where('id', 'in', ids).where('raw_removed_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Deletes up to `limit` integration event log entries received before `before`; answers how many. */
export async function deleteIntegrationEvents(db: Kysely<DB>, before: string, limit: number): Promise<number> {
  const ids = (await db.selectFrom('integration_events').select('id').where('created_at', '<', before).orderBy('id').limit(limit).execute()).map((r) => r.id);
  if (ids.length === 0) return 0;
  return Number((await db.deleteFrom('integration_events').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
}
