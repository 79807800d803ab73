import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { credentialCache } from './credential-cache.js';
import { findUserById, type UserRow } from './users.repository.js';

/**
 * A user's row from the credential cache (issue #19: GET /v1/auth/me and every beacon read it),
 * read from the database when it is not held. Every writer of the users table calls
 * userRowChanged after its change, which drops the row on every instance (a `{userRow}` access
 * notice), and deleting a user drops it with the rest of the user (`{userId}`). For showing the
 * user (name, plan, address); decisions of access read the row fresh (users.service requireAdmin).
 */
export function cachedUser(ctx: AppContext, userId: number): Promise<UserRow | undefined> {
  return credentialCache(ctx).user(userId, () => findUserById(ctx.db, userId));
}

/** The row of a user when the credential cache holds it (no promise, no read); else undefined. */
export function heldUser(ctx: AppContext, userId: number): UserRow | undefined {
  return credentialCache(ctx).heldUser(userId);
}

/** The row of `userId` changed (after `tx` commits, when given): every instance reads it again. */
export function userRowChanged(ctx: AppContext, userId: number, tx?: Tx): void {
  ctx.events.endAccess({ userRow: userId }, tx);
}
