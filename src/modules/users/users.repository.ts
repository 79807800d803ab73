import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { DB, UsersTable } from '../../db/schema.js';

export type UserRow = Selectable<UsersTable>;

export async function findUserById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Kysely<DB>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUserBySlug(db: Kysely<DB>, slug: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Inserts a user; the first user of an instance becomes its admin, decided in the same statement. */
export async function insertUser(
  db: Kysely<DB>,
  row: Pick<UserRow, 'email' | 'password_hash' | 'name' | 'slug' | 'timezone' | 'created_at' | 'email_verified' | 'plan'>,
): Promise<UserRow> {
  return db
    .insertInto('users')
    .values({
      ...row,
      phone: null,
      updated_at: row.created_at,
      is_admin: sql<0 | 1>`(select case when count(*) = 0 then 1 else 0 end from users)`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Some user's id, or undefined on an instance without accounts. */
export async function anyUserId(db: Kysely<DB>): Promise<number | undefined> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst())?.id;
}

export async function updateUser(
  db: Kysely<DB>,
  id: number,
  patch: Partial<Pick<UserRow, 'name' | 'timezone' | 'phone' | 'phone_verified_at' | 'plan' | 'updated_at' | 'email_verified' | 'password_hash'>>,
): Promise<UserRow | undefined> {
  return db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function listUsers(db: Kysely<DB>, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db.selectFrom('users').selectAll().orderBy('id', 'asc').limit(limit).offset(offset).execute(),
    db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}
