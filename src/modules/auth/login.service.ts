import type { AppContext } from '../../context.js';
import { unauthorized } from '../../lib/errors.js';
import { findUserByEmail, type UserRow } from '../users/index.js';
import { normalizeEmail } from '../users/index.js';
import type { Guard } from './guard.js';

/**
 * Checks an email and password; every failure answers the same 401 after the same work. Tries
 * go through the account's password door (issue #14: 60 passwords in 2 s from six addresses).
 */
export async function checkPassword(ctx: AppContext, guard: Guard, rawEmail: string, password: string): Promise<UserRow> {
  const email = normalizeEmail(rawEmail);
  return guard('password', email, async () => {
    const user = await findUserByEmail(ctx.db, email);
    if (!user?.password_hash) {
      await ctx.passwords.verifyDummy(password);
      throw unauthorized();
    }
    if (!(await ctx.passwords.verify(user.password_hash, password))) throw unauthorized();
    return user;
  });
}
