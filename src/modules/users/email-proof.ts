import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { acceptInvite, pendingInvitesFor } from '../orgs/invites.repository.js';
import { updateUser, type UserRow } from './users.repository.js';

/**
 * The address of this user is proven (verification code, magic or reset code, an invite's own
 * link, or an instance admin's word): mark it, and accept every invite waiting for it. Invites
 * wait for this because registering an address proves nothing: before issue #14, pre-registering
 * a colleague's invited address was enough to join their org. Run it in the caller's transaction.
 */
export async function proveEmail(db: Kysely<DB>, user: Pick<UserRow, 'id' | 'email'>, now: string): Promise<UserRow | undefined> {
  const proven = await updateUser(db, user.id, { email_verified: 1, updated_at: now });
  for (const invite of await pendingInvitesFor(db, user.email)) await acceptInvite(db, invite, user.id, now);
  return proven;
}
