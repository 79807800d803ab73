import type { Kysely } from 'kysely';
import type { DB, InboundEmailsTable } from '../../db/schema.js';

export type InboundRow = Omit<InboundEmailsTable, 'id' | 'attempts'> & { id: number; attempts: number };
export type NewInbound = Omit<InboundRow, 'id' | 'attempts' | 'status' | 'error' | 'incident_id' | 'processed_at'>;

export async function insertInbound(db: Kysely<DB>, row: NewInbound): Promise<number> {
  const r = await db
    .insertInto('inbound_emails')
    .values({ ...row, status: 'pending', error: null, incident_id: null, processed_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

export async function pendingIds(db: Kysely<DB>, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('inbound_emails').select('id').where('status', '=', 'pending').orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}

export async function findInbound(db: Kysely<DB>, id: number): Promise<InboundRow | undefined> {
  return db.selectFrom('inbound_emails').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Marks a pending message done, once: false when another worker got there first. */
export async function finishInbound(db: Kysely<DB>, id: number, incidentId: number | null, nowIso: string): Promise<boolean> {
  const r = await db
    .updateTable('inbound_emails')
    .set({ status: 'processed', incident_id: incidentId, processed_at: nowIso })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A message that cannot be turned into anything: kept, with why, and retried up to a few times. */
export async function failInbound(db: Kysely<DB>, id: number, error: string, maxAttempts: number, nowIso: string): Promise<void> {
  const row = await db.selectFrom('inbound_emails').select('attempts').where('id', '=', id).executeTakeFirst();
  const attempts = (row?.attempts ?? 0) + 1;
  await db
    .updateTable('inbound_emails')
    .set({ attempts, error: error.slice(0, 1000), ...(attempts >= maxAttempts ? { status: 'failed' as const, processed_at: nowIso } : {}) })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** Who reported an incident by email: the sender of the first message that opened or joined it. */
export async function reporterOf(db: Kysely<DB>, incidentId: number): Promise<string | undefined> {
  const r = await db
    .selectFrom('inbound_emails')
    .select('mail_from')
    .where('incident_id', '=', incidentId)
    .where('integration_id', 'is not', null)
    .orderBy('id')
    .executeTakeFirst();
  return r?.mail_from;
}

/** The member of an org with this email address (replies from members are internal). */
export async function memberByEmail(db: Kysely<DB>, orgId: number, email: string): Promise<number | undefined> {
  const r = await db
    .selectFrom('users')
    .innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select('users.id')
    .where('memberships.org_id', '=', orgId)
    .where((eb) => eb(eb.fn('lower', ['users.email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return r?.id;
}
