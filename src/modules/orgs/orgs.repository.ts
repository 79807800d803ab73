import type { Kysely } from 'kysely';
import type { DB, OrgsTable, Role } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

export type OrgRow = Omit<OrgsTable, 'id'> & { id: number };

/** Org slugs equal to `base` or of the form `base-N`. */
export async function orgSlugsLike(db: Kysely<DB>, base: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('orgs')
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .execute();
  return new Set(rows.map((r) => r.slug));
}

export async function insertOrg(
  db: Kysely<DB>,
  row: Pick<OrgRow, 'name' | 'slug' | 'description' | 'personal' | 'created_at'>,
): Promise<OrgRow> {
  return db
    .insertInto('orgs')
    .values({ ...row, updated_at: row.created_at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertMembership(
  db: Kysely<DB>,
  m: { orgId: number; userId: number; role: Role; primary: boolean; createdAt: string },
): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ org_id: m.orgId, user_id: m.userId, role: m.role, is_primary: flag(m.primary), created_at: m.createdAt })
    .execute();
}

/** The org used when a request names none. */
export async function findPrimaryOrgId(db: Kysely<DB>, userId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('memberships')
    .select('org_id')
    .where('user_id', '=', userId)
    .where('is_primary', '=', 1)
    .executeTakeFirst();
  return row?.org_id;
}
