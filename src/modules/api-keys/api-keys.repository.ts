import type { Kysely } from 'kysely';
import type { ApiKeysTable, DB, Mode } from '../../db/schema.js';

export type ApiKeyRow = Omit<ApiKeysTable, 'id'> & { id: number };

export async function insertApiKey(db: Kysely<DB>, row: Omit<ApiKeyRow, 'id' | 'revoked_at'>): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({ ...row, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The owner and mode of an unrevoked key, by the SHA-256 of its secret. */
export async function findActiveKey(db: Kysely<DB>, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'user_id', 'mode'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Of these key ids, the ones not revoked (open streams' check of access, modules/streams). */
export async function unrevokedKeyIds(db: Kysely<DB>, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('api_keys').select('id').where('id', 'in', [...ids]).where('revoked_at', 'is', null).execute();
  return new Set(rows.map((r) => r.id));
}

export async function listActiveKeys(db: Kysely<DB>, userId: number, modes: readonly Mode[]): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('mode', 'in', [...modes])
    .where('revoked_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes a key of this user and one of these modes; false when there is no such active key. */
export async function revokeKey(db: Kysely<DB>, userId: number, id: number, modes: readonly Mode[], nowIso: string) {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: nowIso })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('mode', 'in', [...modes])
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
