import type { AppContext } from '../../context.js';
import { userRowChanged } from '../users/index.js';
import type { Actor } from '../../lib/actor.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { notFound, unauthorized } from '../../lib/errors.js';
import { queueEmail } from '../deliveries/index.js';
import { proveEmail } from '../orgs/index.js';
import { findUserByEmail, findUserById, updateUser, type UserRow } from '../users/index.js';
import { normalizeEmail } from '../users/index.js';
import { issueCode, redeemCode } from './email-codes.js';
import type { Guard } from './guard.js';
import { endUserSessions } from './sessions.js';
import { membershipBegan } from '../orgs/index.js';

/** Same life as a magic code: a reset code is a sign-in code that also sets a password. */
export const RESET_CODE_TTL_MS = 10 * MINUTE;

/**
 * Changes the password of the caller (session or key) after checking the current one (401 when
 * wrong, counted on the account's password door). Every other session ends; the caller's own
 * session (`keepSessionToken`, when the request came with one) and the API keys stay.
 */
export async function changePassword(
  ctx: AppContext,
  guard: Guard,
  actor: Actor,
  input: { current_password: string; new_password: string },
  keepSessionToken: string | undefined,
): Promise<void> {
  const user = await findUserById(ctx.db, actor.userId);
  if (!user) throw notFound();
  await guard('password', user.email, async () => {
    if (!user.password_hash || !(await ctx.passwords.verify(user.password_hash, input.current_password))) throw unauthorized();
  });
  const hash = await ctx.passwords.hash(input.new_password);
  await ctx.transaction(async (tx) => {
    await updateUser(tx.db, user.id, { password_hash: hash, updated_at: iso(ctx.clock.now()) });
    userRowChanged(ctx, user.id, tx);
    await endUserSessions(ctx, user.id, { keepToken: keepSessionToken, tx });
  });
}

/** Emails a reset code to a registered address; always the same answer, at most five codes an hour. */
export async function requestPasswordReset(ctx: AppContext, rawEmail: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return;
  await ctx.transaction(async (tx) => {
    const code = await issueCode(ctx, tx, email, 'reset', RESET_CODE_TTL_MS);
    if (code === null) return;
    const link = `${ctx.config.publicUrl}/reset-password?email=${encodeURIComponent(email)}&code=${code}`;
    await queueEmail(ctx, tx, {
      to: email,
      userId: user.id,
      topic: 'auth.password_reset',
      subject: `Your Muster password reset code: ${code}`,
      text: `Your Muster password reset code is ${code}.\n\nOr open this link to choose a new password:\n${link}\n\nThe code works once, for 10 minutes. If you did not ask for it, ignore this email: your password stays as it is.`,
    });
  });
}

/**
 * Sets a new password with an emailed reset code (the magic code's rules: newest code only, once,
 * 10 minutes, five tries, the same 401 for every failure). Ends every session of the user (the
 * caller gets a new one) and proves the address.
 */
export async function resetPassword(ctx: AppContext, guard: Guard, input: { email: string; code: string; new_password: string }): Promise<UserRow> {
  const email = normalizeEmail(input.email);
  const user = await guard('code', email, async () => {
    if (!(await redeemCode(ctx, email, 'reset', input.code))) throw unauthorized();
    const found = await findUserByEmail(ctx.db, email);
    if (!found) throw unauthorized();
    return found;
  });
  const hash = await ctx.passwords.hash(input.new_password);
  return ctx.transaction(async (tx) => {
    const now = iso(ctx.clock.now());
    await updateUser(tx.db, user.id, { password_hash: hash, updated_at: now });
    userRowChanged(ctx, user.id, tx);
    await endUserSessions(ctx, user.id, { tx });
    return (await proveEmail(tx.db, user, now, membershipBegan(ctx, user.id, tx), () => userRowChanged(ctx, user.id, tx))) ?? user;
  });
}
