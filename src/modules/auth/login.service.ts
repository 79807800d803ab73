import type { AppContext } from '../../context.js';
import { unauthorized } from '../../lib/errors.js';
import { findUserByEmail, type UserRow } from '../users/users.repository.js';
import { normalizeEmail } from '../users/users.service.js';

/** Checks an email and password; every failure answers the same 401 after the same work. */
export async function checkPassword(ctx: AppContext, email: string, password: string): Promise<UserRow> {
  const user = await findUserByEmail(ctx.db, normalizeEmail(email));
  if (!user?.password_hash) {
    await ctx.passwords.verifyDummy(password);
    throw unauthorized();
  }
  if (!(await ctx.passwords.verify(user.password_hash, password))) throw unauthorized();
  return user;
}
