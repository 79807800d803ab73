import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { iso } from '../../lib/clock.js';
import { updateUser, type UserRow } from '../users/index.js';
import { INVITE_TTL_MS } from './invite-ttl.js';
import { acceptInvite, pendingInvitesFor } from './invites.repository.js';

/**
 * The address of this user is proven (verification code, magic or reset code, an invite's own
 * link, or an instance admin's word): mark it, and accept every unexpired invite waiting for it. Invites
 * wait for this because registering an address proves nothing: before issue #14, pre-registering
 * a colleague's invited address was enough to join their org. Run it in the caller's transaction.
 * `joined` hears each org joined (orgs/access.ts membershipBegan: credential caches read again),
 * `changed` that the user's row changed (users/user-cache.ts userRowChanged).
 */
export async function proveEmail(
  db: Kysely<DB>,
  user: Pick<UserRow, 'id' | 'email'>,
  now: string,
  joined?: (orgId: number) => void,
  changed?: () => void,
): Promise<UserRow | undefined> {
  const proven = await updateUser(db, user.id, { email_verified: 1, updated_at: now });
  changed?.();
  const since = iso(new Date(new Date(now).getTime() - INVITE_TTL_MS));
  for (const invite of await pendingInvitesFor(db, user.email, since)) {
    if (await acceptInvite(db, invite, user.id, now)) joined?.(invite.org_id);
  }
  return proven;
}
