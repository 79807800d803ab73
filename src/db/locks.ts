import type { Kysely } from 'kysely';
import type { DialectName } from './database.js';
import type { DB } from './schema.js';

/**
 * Serialises work on these users until the transaction ends. PostgreSQL locks their rows (in id
 * order, so two transactions never deadlock); SQLite already holds its write lock from BEGIN IMMEDIATE.
 */
export async function lockUsers(db: Kysely<DB>, dialect: DialectName, userIds: number[]): Promise<void> {
  if (dialect !== 'postgres' || userIds.length === 0) return;
  await db
    .selectFrom('users')
    .select('id')
    .where('id', 'in', [...new Set(userIds)].sort((a, b) => a - b))
    .orderBy('id')
    .forUpdate()
    .execute();
}
