import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export async function insertSession(db: Kysely<DB>, row: { id: string; userId: number; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('sessions')
    .values({ id: row.id, user_id: row.userId, created_at: row.createdAt, expires_at: row.expiresAt })
    .execute();
}

/** A live (unexpired) session, by the hash of its cookie. */
export async function findLiveSession(db: Kysely<DB>, idHash: string, nowIso: string): Promise<{ user_id: number; expires_at: string } | undefined> {
  return db.selectFrom('sessions').select(['user_id', 'expires_at']).where('id', '=', idHash).where('expires_at', '>', nowIso).executeTakeFirst();
}

/** Of these session ids (hashes), the ones still live (open streams' check of access, modules/streams). */
export async function liveSessionIds(db: Kysely<DB>, idHashes: readonly string[], nowIso: string): Promise<Set<string>> {
  if (idHashes.length === 0) return new Set();
  const rows = await db.selectFrom('sessions').select('id').where('id', 'in', [...idHashes]).where('expires_at', '>', nowIso).execute();
  return new Set(rows.map((r) => r.id));
}

/** The user of a live (unexpired) session, by the hash of its cookie. */
export async function findSessionUser(db: Kysely<DB>, idHash: string, nowIso: string): Promise<number | undefined> {
  return (await findLiveSession(db, idHash, nowIso))?.user_id;
}

export async function deleteSession(db: Kysely<DB>, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', idHash).execute();
}

/** Deletes every session of a user but `keepIdHash`; answers the ids (hashes) it deleted. */
export async function deleteSessionsOfUser(db: Kysely<DB>, userId: number, keepIdHash?: string): Promise<string[]> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepIdHash !== undefined) query = query.where('id', '!=', keepIdHash);
  return (await query.returning('id').execute()).map((r) => r.id);
}
