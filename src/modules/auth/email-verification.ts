import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { DAY, iso } from '../../lib/clock.js';
import { unauthorized } from '../../lib/errors.js';
import { issueCode, redeemCode } from './email-codes.js';
import type { Guard } from './guard.js';
import { queueEmail } from '../deliveries/index.js';
import { proveEmail } from '../orgs/index.js';
import { findUserByEmail, type UserRow } from '../users/index.js';
import { userRowChanged } from '../users/index.js';
import { membershipBegan } from '../orgs/index.js';

const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A day: the email of a registration may well be read the next morning. Five tries, like every code. */
export const VERIFY_CODE_TTL_MS = DAY;

/** Queues the "prove your address" email (a code and a link carrying it) in the caller's transaction. */
export async function sendVerification(ctx: AppContext, tx: Tx, user: Pick<UserRow, 'id' | 'email'>): Promise<void> {
  const code = await issueCode(ctx, tx, user.email, 'verify', VERIFY_CODE_TTL_MS);
  if (code === null) return;
  const link = `${ctx.config.publicUrl}/verify-email?email=${encodeURIComponent(user.email)}&code=${code}`;
  await queueEmail(ctx, tx, {
    to: user.email,
    userId: user.id,
    topic: 'auth.verify_email',
    subject: `Confirm your email address for Muster: ${code}`,
    text: `Your Muster confirmation code is ${code}.\n\nOr open this link to confirm this address:\n${link}\n\nThe code works once, for 24 hours. If you did not create a Muster account, ignore this email.`,
  });
}

/** Emails a new code to a registered, unproven address; like the magic link, the answer is always the same. */
export async function resendVerification(ctx: AppContext, rawEmail: string): Promise<void> {
  const user = await findUserByEmail(ctx.db, normalizeEmail(rawEmail));
  if (!user || user.email_verified === 1) return;
  await ctx.transaction((tx) => sendVerification(ctx, tx, user));
}

/** Proves the address with its emailed code; every failure is the same 401. */
export async function verifyEmail(ctx: AppContext, guard: Guard, rawEmail: string, code: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  await guard('code', email, async () => {
    if (!(await redeemCode(ctx, email, 'verify', code))) throw unauthorized();
    const user = await findUserByEmail(ctx.db, email);
    if (!user) throw unauthorized();
    await ctx.transaction((tx) => proveEmail(tx.db, user, iso(ctx.clock.now()), membershipBegan(ctx, user.id, tx), () => userRowChanged(ctx, user.id, tx)));
  });
}
