import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export async function insertSession(db: Kysely<DB>, row: { id: string; userId: number; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('sessions')
    .values({ id: row.id, user_id: row.userId, created_at: row.createdAt, expires_at: row.expiresAt })
    .execute();
}

/** The user of a live (unexpired) session, by the hash of its cookie. */
export async function findSessionUser(db: Kysely<DB>, idHash: string, nowIso: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select('user_id')
    .where('id', '=', idHash)
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();
  return row?.user_id;
}

export async function deleteSession(db: Kysely<DB>, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', idHash).execute();
}

/** Deletes every session of a user except the one whose hash is `keepIdHash` (if any); answers the deleted hashes. */
export async function deleteUserSessions(db: Kysely<DB>, userId: number, keepIdHash?: string): Promise<string[]> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepIdHash !== undefined) q = q.where('id', '!=', keepIdHash);
  const rows = await q.returning('id').execute();
  return rows.map((r) => r.id);
}
