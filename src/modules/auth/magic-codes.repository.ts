import type { Kysely } from 'kysely';
import type { CodePurpose, DB } from '../../db/schema.js';

export async function countCodesSince(db: Kysely<DB>, email: string, purpose: CodePurpose, sinceIso: string): Promise<number> {
  const row = await db
    .selectFrom('magic_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('email', '=', email)
    .where('purpose', '=', purpose)
    .where('created_at', '>=', sinceIso)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertCode(
  db: Kysely<DB>,
  row: { email: string; purpose: CodePurpose; codeHash: string; createdAt: string; expiresAt: string },
) {
  await db
    .insertInto('magic_codes')
    .values({
      email: row.email,
      purpose: row.purpose,
      code_hash: row.codeHash,
      attempts: 0,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
      used_at: null,
    })
    .execute();
}

/** The newest code of an email for one purpose: requesting a new code retires the older ones. */
export async function latestCode(db: Kysely<DB>, email: string, purpose: CodePurpose) {
  return db
    .selectFrom('magic_codes')
    .selectAll()
    .where('email', '=', email)
    .where('purpose', '=', purpose)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Takes one of the code's attempts, or none: counting and checking the limit are one conditional
 * UPDATE, so concurrent verifications cannot all read "fewer than five" and all be evaluated
 * (issue #14: 60 concurrent tries reached 59 attempts on PostgreSQL). Every try takes an attempt,
 * the right code too; false when the code is used, expired or out of attempts.
 */
export async function claimAttempt(db: Kysely<DB>, id: number, maxAttempts: number, nowIso: string): Promise<boolean> {
  const row = await db
    .updateTable('magic_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('attempts', '<', maxAttempts)
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .returning('attempts')
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks a code used; false when another request used it first (single use under concurrency). */
export async function consumeCode(db: Kysely<DB>, id: number, nowIso: string): Promise<boolean> {
  const result = await db
    .updateTable('magic_codes')
    .set({ used_at: nowIso })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
