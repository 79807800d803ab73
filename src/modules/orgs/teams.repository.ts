import { sql, type Kysely } from 'kysely';
import type { DB, Routing, TeamsTable } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

export type TeamRow = Omit<TeamsTable, 'id'> & { id: number };
/** A team and how many of its org's teams are older (for the lock rule). */
export type PositionedTeam = TeamRow & { position: number };

export async function listTeams(db: Kysely<DB>, orgId: number): Promise<TeamRow[]> {
  return db.selectFrom('teams').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

export async function findTeam(db: Kysely<DB>, orgId: number, slug: string): Promise<PositionedTeam | undefined> {
  const row = await db
    .selectFrom('teams')
    .selectAll()
    .select(sql<number>`(select count(*) from teams t2 where t2.org_id = teams.org_id and t2.id < teams.id)`.as('position'))
    .where('org_id', '=', orgId)
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row ? { ...row, position: Number(row.position) } : undefined;
}

export async function countTeams(db: Kysely<DB>, orgId: number): Promise<number> {
  const row = await db.selectFrom('teams').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertTeam(
  db: Kysely<DB>,
  t: { orgId: number; name: string; slug: string; routing: Routing; description: string | null; now: string },
): Promise<TeamRow> {
  return db
    .insertInto('teams')
    .values({ org_id: t.orgId, name: t.name, slug: t.slug, routing: t.routing, description: t.description, created_at: t.now, updated_at: t.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTeam(
  db: Kysely<DB>,
  id: number,
  patch: Partial<Pick<TeamRow, 'name' | 'slug' | 'routing' | 'description' | 'updated_at'>>,
): Promise<TeamRow> {
  return db.updateTable('teams').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteTeam(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('teams').where('id', '=', id).execute();
}

export interface TeamMemberRow {
  user_id: number;
  name: string;
  active: 0 | 1;
}

/** Members in the order they joined (the lock rule keeps the oldest). */
export async function listTeamMembers(db: Kysely<DB>, teamId: number): Promise<TeamMemberRow[]> {
  return db
    .selectFrom('team_members as tm')
    .innerJoin('users as u', 'u.id', 'tm.user_id')
    .select(['tm.user_id', 'u.name', 'tm.active'])
    .where('tm.team_id', '=', teamId)
    .orderBy('tm.id')
    .execute();
}

export async function countTeamMembers(db: Kysely<DB>, teamId: number): Promise<number> {
  const row = await db
    .selectFrom('team_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertTeamMember(db: Kysely<DB>, teamId: number, userId: number, active: boolean, now: string): Promise<void> {
  await db.insertInto('team_members').values({ team_id: teamId, user_id: userId, active: flag(active), created_at: now }).execute();
}

export async function setTeamMemberActive(db: Kysely<DB>, teamId: number, userId: number, active: boolean): Promise<boolean> {
  const r = await db
    .updateTable('team_members')
    .set({ active: flag(active) })
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function removeTeamMember(db: Kysely<DB>, teamId: number, userId: number): Promise<boolean> {
  const r = await db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}
