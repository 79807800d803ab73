import type { AppContext } from '../../context.js';
import type { CodePurpose } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { HOUR, iso } from '../../lib/clock.js';
import { digestsEqual, sha256, sixDigitCode } from '../../lib/crypto.js';
import * as codes from './magic-codes.repository.js';

export const MAX_ATTEMPTS = 5;
export const MAX_CODES_PER_HOUR = 5;

// The purpose is part of the hash: a sign-in code can never be replayed as a reset code.
const hashCode = (email: string, purpose: CodePurpose, code: string) =>
  sha256(purpose === 'magic' ? `magic:${email}:${code}` : `${purpose}:${email}:${code}`);

/**
 * Stores a new six-digit code for an email and purpose in the caller's transaction and answers it
 * (for the email the caller queues in the same transaction), or null when five codes of this
 * purpose were already sent to the address within the hour.
 */
export async function issueCode(ctx: AppContext, tx: Tx, email: string, purpose: CodePurpose, ttlMs: number): Promise<string | null> {
  const now = ctx.clock.now();
  if ((await codes.countCodesSince(tx.db, email, purpose, iso(new Date(now.getTime() - HOUR)))) >= MAX_CODES_PER_HOUR) return null;
  const code = sixDigitCode();
  await codes.insertCode(tx.db, {
    email,
    purpose,
    codeHash: hashCode(email, purpose, code),
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + ttlMs)),
  });
  return code;
}

/**
 * True when `code` is the newest live code of this email and purpose, and uses it up. Each try
 * takes one of five attempts first (atomically), then compares in constant time; the right code
 * after five tries, expired or already used is false like a wrong one.
 */
export async function redeemCode(ctx: AppContext, email: string, purpose: CodePurpose, code: string): Promise<boolean> {
  const now = iso(ctx.clock.now());
  const row = await codes.latestCode(ctx.db, email, purpose);
  if (!row || !(await codes.claimAttempt(ctx.db, row.id, MAX_ATTEMPTS, now))) return false;
  if (!digestsEqual(row.code_hash, hashCode(email, purpose, code))) return false;
  return codes.consumeCode(ctx.db, row.id, now);
}
