import { sql, type Kysely } from 'kysely';
import type { DB, OrgsTable, Plan, Role } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

export type OrgRow = Omit<OrgsTable, 'id'> & { id: number };

/** An org as one of its members sees it: their role, and what the lock rule needs. */
export interface MemberOrgRow extends OrgRow {
  role: Role;
  is_primary: 0 | 1;
  /** Plan of the billing owner (null when the org has none). */
  owner_plan: Plan | null;
  /** How many of the billing owner's non-personal orgs are older than this one. */
  position: number;
}

export type OrgRef = { slug: string } | { id: number };

function memberOrgs(db: Kysely<DB>, userId: number) {
  return db
    .selectFrom('orgs')
    .innerJoin('memberships as m', (j) => j.onRef('m.org_id', '=', 'orgs.id').on('m.user_id', '=', userId))
    .leftJoin('users as owner', 'owner.id', 'orgs.owner_id')
    .selectAll('orgs')
    .select(['m.role', 'm.is_primary', 'owner.plan as owner_plan'])
    .select(
      sql<number>`(select count(*) from orgs o2 where o2.owner_id = orgs.owner_id and o2.personal = 0 and o2.id < orgs.id)`.as('position'),
    );
}

/** The org, if `userId` is a member of it. */
export async function findMemberOrg(db: Kysely<DB>, userId: number, ref: OrgRef): Promise<MemberOrgRow | undefined> {
  const q = memberOrgs(db, userId);
  const row = await ('slug' in ref ? q.where('orgs.slug', '=', ref.slug) : q.where('orgs.id', '=', ref.id)).executeTakeFirst();
  return row ? { ...row, position: Number(row.position) } : undefined;
}

export async function listMemberOrgs(db: Kysely<DB>, userId: number): Promise<MemberOrgRow[]> {
  const rows = await memberOrgs(db, userId).orderBy('orgs.id').execute();
  return rows.map((r) => ({ ...r, position: Number(r.position) }));
}

/** Ids of every org the user belongs to: the scope of their tenant queries. */
export async function memberOrgIds(db: Kysely<DB>, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.org_id);
}

/** Non-personal orgs whose billing owner is the user (what the plan's org limit counts). */
export async function countOwnedOrgs(db: Kysely<DB>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('orgs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', userId)
    .where('personal', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertOrg(
  db: Kysely<DB>,
  row: Pick<OrgRow, 'name' | 'slug' | 'description' | 'personal' | 'created_at'> & { owner_id?: number | null },
): Promise<OrgRow> {
  return db
    .insertInto('orgs')
    .values({ owner_id: null, ...row, updated_at: row.created_at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateOrg(
  db: Kysely<DB>,
  id: number,
  patch: Partial<Pick<OrgRow, 'name' | 'slug' | 'description' | 'owner_id' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('orgs').set(patch).where('id', '=', id).execute();
}

/** An org's display name (public pages show it, and nothing else of the org). */
export async function findOrgName(db: Kysely<DB>, id: number): Promise<string | undefined> {
  return (await db.selectFrom('orgs').select('name').where('id', '=', id).executeTakeFirst())?.name;
}

export async function deleteOrg(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('orgs').where('id', '=', id).execute();
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
