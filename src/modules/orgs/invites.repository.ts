import type { Kysely } from 'kysely';
import type { DB, Role } from '../../db/schema.js';

/** Creates or refreshes the pending invite of an email to an org. */
export async function upsertInvite(db: Kysely<DB>, i: { orgId: number; email: string; role: Role; invitedBy: number; now: string }) {
  await db
    .insertInto('org_invites')
    .values({ org_id: i.orgId, email: i.email, role: i.role, invited_by: i.invitedBy, created_at: i.now, accepted_at: null })
    .onConflict((oc) => oc.columns(['org_id', 'email']).doUpdateSet({ role: i.role, invited_by: i.invitedBy, created_at: i.now, accepted_at: null }))
    .execute();
}

export async function listPendingInvites(db: Kysely<DB>, orgId: number) {
  return db
    .selectFrom('org_invites')
    .select(['email', 'role', 'created_at'])
    .where('org_id', '=', orgId)
    .where('accepted_at', 'is', null)
    .orderBy('id')
    .execute();
}

export async function pendingInvitesFor(db: Kysely<DB>, email: string) {
  return db.selectFrom('org_invites').select(['id', 'org_id', 'role']).where('email', '=', email).where('accepted_at', 'is', null).execute();
}

export async function markAccepted(db: Kysely<DB>, ids: number[], now: string): Promise<void> {
  if (ids.length > 0) await db.updateTable('org_invites').set({ accepted_at: now }).where('id', 'in', ids).execute();
}
