// What the reports read besides incidents: the org owner's time zone (the default zone of a
// report) and the names of the people, teams and integrations their rows are keyed by.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** The time zone of the org's first owner, if any. */
export async function ownerTimeZone(db: Kysely<DB>, orgId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('u.timezone')
    .where('m.org_id', '=', orgId)
    .where('m.role', '=', 'owner')
    .orderBy('m.created_at')
    .orderBy('m.user_id')
    .limit(1)
    .executeTakeFirst();
  return row?.timezone;
}

export async function userNames(db: Kysely<DB>, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  return new Map((await db.selectFrom('users').select(['id', 'name']).where('id', 'in', [...ids]).execute()).map((r) => [r.id, r.name]));
}

export async function teamNames(db: Kysely<DB>, orgId: number, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  return new Map((await db.selectFrom('teams').select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).execute()).map((r) => [r.id, r.name]));
}

export async function integrationNames(db: Kysely<DB>, orgId: number, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  return new Map((await db.selectFrom('integrations').select(['id', 'name']).where('org_id', '=', orgId).where('id', 'in', ids).execute()).map((r) => [r.id, r.name]));
}

/** The names and time zones of people (the on-call report's rows); a deleted account is absent. */
export async function userProfiles(db: Kysely<DB>, ids: readonly number[]): Promise<Map<number, { name: string; timezone: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name', 'timezone']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, timezone: r.timezone }]));
}
