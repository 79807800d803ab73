import type { Kysely } from 'kysely';
import type { DB, InboundEmailStatus, InboundEmailsTable } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type InboundRow = Omit<InboundEmailsTable, 'id' | 'attempts' | 'authenticated' | 'size'> & { id: number; attempts: number; authenticated: 0 | 1; size: number };
export type NewInbound = Omit<InboundRow, 'id' | 'attempts' | 'incident_id' | 'processed_at' | 'raw_removed_at'>;

export async function insertInbound(db: Kysely<DB>, row: NewInbound): Promise<number> {
  const done = row.status === 'pending' ? null : row.created_at;
  const r = await db
    .insertInto('inbound_emails')
    .values({ ...row, incident_id: null, processed_at: done, raw_removed_at: null })
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
    .set({ attempts, error: error.replace(/\0/g, '').slice(0, 1000), ...(attempts >= maxAttempts ? { status: 'failed' as const, processed_at: nowIso } : {}) })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
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

export interface InboundFilter {
  integrationId?: number | undefined;
  status?: InboundEmailStatus | undefined;
}

/** Received messages of the scope, newest first, without their raw text (one row more than the page, for has_more). */
export async function listInbound(db: Kysely<DB>, scope: Scope, f: InboundFilter, limit: number, offset: number) {
  let q = db
    .selectFrom('inbound_emails')
    .select([
      'id',
      'org_id',
      'livemode',
      'integration_id',
      'reply_to_incident_id',
      'incident_id',
      'status',
      'error',
      'attempts',
      'mail_from',
      'rcpt_to',
      'sender',
      'answer_to',
      'subject',
      'message_id',
      'authenticated',
      'auth',
      'size',
      'raw_removed_at',
      'created_at',
      'processed_at',
    ])
    .$call(scoped(scope, 'inbound_emails'));
  if (f.integrationId !== undefined) q = q.where('integration_id', '=', f.integrationId);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  return q.orderBy('id', 'desc').limit(limit).offset(offset).execute();
}
