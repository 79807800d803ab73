import type { AppContext } from '../../context.js';
import { HOUR, MINUTE, iso } from '../../lib/clock.js';
import { digestsEqual, sha256, sixDigitCode } from '../../lib/crypto.js';
import { unauthorized } from '../../lib/errors.js';
import { queueEmail } from '../deliveries/email.js';
import { findUserByEmail, type UserRow } from '../users/users.repository.js';
import { normalizeEmail } from '../users/users.service.js';
import * as codes from './magic-codes.repository.js';

export const CODE_TTL_MS = 10 * MINUTE;
export const MAX_ATTEMPTS = 5;
export const MAX_CODES_PER_HOUR = 5;

const hashCode = (email: string, code: string) => sha256(`magic:${email}:${code}`);

/**
 * Emails a six-digit code and a link to a registered address. The caller always gets the same
 * answer, so this cannot be used to learn which emails are registered; at most five codes are
 * sent to one address per hour.
 */
export async function requestMagicCode(ctx: AppContext, rawEmail: string): Promise<void> {
  const email = normalizeEmail(rawEmail);
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return;
  const now = ctx.clock.now();
  await ctx.transaction(async (tx) => {
    if ((await codes.countCodesSince(tx.db, email, iso(new Date(now.getTime() - HOUR)))) >= MAX_CODES_PER_HOUR) return;
    const code = sixDigitCode();
    await codes.insertCode(tx.db, {
      email,
      codeHash: hashCode(email, code),
      createdAt: iso(now),
      expiresAt: iso(new Date(now.getTime() + CODE_TTL_MS)),
    });
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
 * five wrong tries it is burned. Every failure is the same 401.
 */
export async function verifyMagicCode(ctx: AppContext, rawEmail: string, code: string): Promise<UserRow> {
  const email = normalizeEmail(rawEmail);
  const now = iso(ctx.clock.now());
  const row = await codes.latestCode(ctx.db, email);
  if (!row || row.used_at !== null || row.expires_at <= now || row.attempts >= MAX_ATTEMPTS) throw unauthorized();
  if (!digestsEqual(row.code_hash, hashCode(email, code))) {
    await codes.countAttempt(ctx.db, row.id);
    throw unauthorized();
  }
  if (!(await codes.consumeCode(ctx.db, row.id, now))) throw unauthorized();
  const user = await findUserByEmail(ctx.db, email);
  if (!user) throw unauthorized();
  return user;
}
