import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export async function countCodesSince(db: Kysely<DB>, email: string, sinceIso: string): Promise<number> {
  const row = await db
    .selectFrom('magic_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('email', '=', email)
    .where('created_at', '>=', sinceIso)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertCode(db: Kysely<DB>, row: { email: string; codeHash: string; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('magic_codes')
    .values({ email: row.email, code_hash: row.codeHash, attempts: 0, created_at: row.createdAt, expires_at: row.expiresAt, used_at: null })
    .execute();
}

/** The newest code of an email: requesting a new code retires the older ones. */
export async function latestCode(db: Kysely<DB>, email: string) {
  return db.selectFrom('magic_codes').selectAll().where('email', '=', email).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** Counts one wrong attempt. */
export async function countAttempt(db: Kysely<DB>, id: number): Promise<void> {
  await db
    .updateTable('magic_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
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
