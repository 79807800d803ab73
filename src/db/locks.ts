import type { Kysely } from 'kysely';
import type { DialectName } from './database.js';
import type { DB } from './schema.js';

/**
 * Serialises work on these users until the transaction ends. PostgreSQL locks their rows (in id
 * order, so two transactions never deadlock); SQLite already holds its write lock from BEGIN IMMEDIATE.
 *
 * FOR NO KEY UPDATE, not FOR UPDATE: every insert that references a user (an incident's creator,
 * an outbox row's user) takes a KEY SHARE lock on that user's row through its foreign key, and
 * FOR UPDATE waits for KEY SHARE. A transaction that inserted first and locked later then waited
 * for another that held its KEY SHARE while it waited in turn (on the incident counter row):
 * a deadlock (issue #14). NO KEY UPDATE still excludes every other locker of the row, which is
 * all the serialisation callers need, and ignores foreign-key checks.
 */
export async function lockUsers(db: Kysely<DB>, dialect: DialectName, userIds: number[]): Promise<void> {
  if (dialect !== 'postgres' || userIds.length === 0) return;
  await db
    .selectFrom('users')
    .select('id')
    .where('id', 'in', [...new Set(userIds)].sort((a, b) => a - b))
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}
