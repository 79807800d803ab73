import type { AppContext } from '../../context.js';
import { userRowChanged } from '../users/index.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { unauthorized } from '../../lib/errors.js';
import { queueEmail } from '../deliveries/index.js';
import { proveEmail } from '../orgs/index.js';
import { findUserByEmail, type UserRow } from '../users/index.js';
import { normalizeEmail } from '../users/index.js';
import { issueCode, redeemCode } from './email-codes.js';
import type { Guard } from './guard.js';
import { membershipBegan } from '../orgs/index.js';

export const CODE_TTL_MS = 10 * MINUTE;
export { MAX_ATTEMPTS, MAX_CODES_PER_HOUR } from './email-codes.js';

/**
 * Emails a six-digit code and a link to a registered address. The caller always gets the same
 * answer, so this cannot be used to learn which emails are registered; at most five codes are
 * sent to one address per hour.
 */
export async function requestMagicCode(ctx: AppContext, rawEmail: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return;
  await ctx.transaction(async (tx) => {
    const code = await issueCode(ctx, tx, email, 'magic', CODE_TTL_MS);
    if (code === null) return;
    const link = `${ctx.config.publicUrl}/login/magic?email=${encodeURIComponent(email)}&code=${code}`;
    await queueEmail(ctx, tx, {
      to: email,
      userId: user.id,
      topic: 'auth.magic_code',
      subject: `Your Muster sign-in code: ${code}`,
      text: `Your Muster sign-in code is ${code}.\n\nOr open this link to sign in:\n${link}\n\nThe code works once, for 10 minutes. If you did not ask for it, ignore this email.`,
    });
  });
}

/**
 * Exchanges the newest code of an email for its user. A code works once, for 10 minutes; after
 * five tries it is burned. Every failure is the same 401. The code came to the mailbox, so using
 * it proves the address.
 */
export async function verifyMagicCode(ctx: AppContext, guard: Guard, rawEmail: string, code: string): Promise<UserRow> {
  const email = normalizeEmail(rawEmail);
  return guard('code', email, async () => {
    if (!(await redeemCode(ctx, email, 'magic', code))) throw unauthorized();
    const user = await findUserByEmail(ctx.db, email);
    if (!user) throw unauthorized();
    if (user.email_verified === 1) return user;
    return (await ctx.transaction((tx) => proveEmail(tx.db, user, iso(ctx.clock.now()), membershipBegan(ctx, user.id, tx), () => userRowChanged(ctx, user.id, tx)))) ?? user;
  });
}
