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

/**
 * Serialises changes to who owns these orgs (PostgreSQL; SQLite's BEGIN IMMEDIATE already does):
 * role changes, removals and account deletions each lock the orgs they check the owners of, in id
 * order, before reading them. FOR NO KEY UPDATE, as above, so inserts into the org (which take KEY
 * SHARE through their foreign key) never wait for it.
 */
export async function lockOrgs(db: Kysely<DB>, dialect: DialectName, orgIds: number[]): Promise<void> {
  if (dialect !== 'postgres' || orgIds.length === 0) return;
  await db
    .selectFrom('orgs')
    .select('id')
    .where('id', 'in', [...new Set(orgIds)].sort((a, b) => a - b))
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/**
 * Locks a user row against every transaction that references it (PostgreSQL; FOR UPDATE, which
 * conflicts with the KEY SHARE lock a foreign-key check takes): a transaction that has inserted a
 * row of theirs (a signal, key, device) commits first and is then seen; one that comes later waits
 * and then fails its foreign-key check once the user is gone. For deleting the account.
 */
export async function lockUserForDeletion(db: Kysely<DB>, dialect: DialectName, userId: number): Promise<boolean> {
  const q = db.selectFrom('users').select('id').where('id', '=', userId);
  return (await (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst()) !== undefined;
}
