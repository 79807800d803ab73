import type { Kysely } from 'kysely';
import type { DB, Role } from '../../db/schema.js';

/** Creates or refreshes the pending invite of an email to an org. */
export async function upsertInvite(
  db: Kysely<DB>,
  i: { orgId: number; email: string; role: Role; invitedBy: number; now: string; tokenHash: string },
) {
  const fields = { role: i.role, invited_by: i.invitedBy, created_at: i.now, accepted_at: null, token_hash: i.tokenHash };
  await db
    .insertInto('org_invites')
    .values({ org_id: i.orgId, email: i.email, ...fields })
    .onConflict((oc) => oc.columns(['org_id', 'email']).doUpdateSet(fields))
    .execute();
}

/** A pending invite by the hash of its link's token, with its org's name and slug. */
export async function findPendingByToken(db: Kysely<DB>, tokenHash: string) {
  return db
    .selectFrom('org_invites as i')
    .innerJoin('orgs as o', 'o.id', 'i.org_id')
    .select(['i.id', 'i.org_id', 'i.email', 'i.role', 'i.created_at', 'o.name as org_name', 'o.slug as org_slug'])
    .where('i.token_hash', '=', tokenHash)
    .where('i.accepted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Accepts one invite for a user: the conditional update decides which of two concurrent proofs
 * of the address accepts it, and the membership is added unless the user is a member already.
 */
export async function acceptInvite(db: Kysely<DB>, invite: { id: number; org_id: number; role: Role }, userId: number, now: string): Promise<boolean> {
  const claimed = await db
    .updateTable('org_invites')
    .set({ accepted_at: now })
    .where('id', '=', invite.id)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return false;
  await db
    .insertInto('memberships')
    .values({ org_id: invite.org_id, user_id: userId, role: invite.role, is_primary: 0, created_at: now })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
    .execute();
  return true;
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

/** The pending invites of an email made (or refreshed) since `sinceIso`: older ones have expired. */
export async function pendingInvitesFor(db: Kysely<DB>, email: string, sinceIso: string) {
  return db
    .selectFrom('org_invites')
    .select(['id', 'org_id', 'role'])
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('created_at', '>', sinceIso)
    .execute();
}
