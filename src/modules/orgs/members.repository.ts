import type { Kysely } from 'kysely';
import type { DB, Role } from '../../db/schema.js';

export interface MemberRow {
  user_id: number;
  email: string;
  name: string;
  role: Role;
  created_at: string;
}

export async function listMembers(db: Kysely<DB>, orgId: number): Promise<MemberRow[]> {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
    .where('m.org_id', '=', orgId)
    .orderBy('m.created_at')
    .orderBy('m.user_id')
    .execute();
}

export async function findMember(db: Kysely<DB>, orgId: number, userId: number): Promise<MemberRow | undefined> {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
    .where('m.org_id', '=', orgId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

/**
 * Whether the user is a member of the org, read inside a transaction that depends on it (a beacon
 * turning a device on); on PostgreSQL the membership row is locked FOR SHARE until that transaction
 * ends, so a removal committing meanwhile waits for it (and then switches the device off).
 */
export async function isMemberLocked(db: Kysely<DB>, lock: boolean, orgId: number, userId: number): Promise<boolean> {
  const q = db.selectFrom('memberships').select('user_id').where('org_id', '=', orgId).where('user_id', '=', userId);
  return (await (lock ? q.forShare() : q).executeTakeFirst()) !== undefined;
}

/** Owners of the org other than `userId`, oldest first. */
export async function otherOwners(db: Kysely<DB>, orgId: number, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('memberships')
    .select('user_id')
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .where('user_id', '!=', userId)
    .orderBy('created_at')
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

export async function setRole(db: Kysely<DB>, orgId: number, userId: number, role: Role): Promise<void> {
  await db.updateTable('memberships').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

/**
 * Keeps the memberships about to end (of `userId`, in `orgId` or in every org) in
 * `membership_history`: on-call schedules answer questions about the past with who was a member then.
 */
export async function recordMembershipsEnded(db: Kysely<DB>, userId: number, orgId: number | undefined, leftAt: string): Promise<void> {
  let q = db.selectFrom('memberships').select((eb) => ['org_id', 'user_id', eb.ref('created_at').as('joined_at'), eb.val(leftAt).as('left_at')]).where('user_id', '=', userId);
  if (orgId !== undefined) q = q.where('org_id', '=', orgId);
  await db.insertInto('membership_history').columns(['org_id', 'user_id', 'joined_at', 'left_at']).expression(q).execute();
}

/** Removes the membership and the user's places in the org's teams; the membership goes into its history. */
export async function removeMember(db: Kysely<DB>, orgId: number, userId: number, at: string): Promise<void> {
  await recordMembershipsEnded(db, userId, orgId, at);
  await db
    .deleteFrom('team_members')
    .where('user_id', '=', userId)
    .where('team_id', 'in', (eb) => eb.selectFrom('teams').select('id').where('org_id', '=', orgId))
    .execute();
  await db.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
}

/** Every org of a user and which one is primary: what the credential cache holds per user. */
export async function membershipsOfUser(db: Kysely<DB>, userId: number): Promise<{ orgIds: number[]; primaryOrgId: number | undefined }> {
  const rows = await db.selectFrom('memberships').select(['org_id', 'is_primary']).where('user_id', '=', userId).orderBy('org_id').execute();
  return { orgIds: rows.map((r) => r.org_id), primaryOrgId: rows.find((r) => r.is_primary === 1)?.org_id };
}

/** The orgs of each of these users (open streams' check of access, modules/streams); a user with none is absent. */
export async function orgIdsOfUsers(db: Kysely<DB>, userIds: readonly number[]): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  if (userIds.length === 0) return out;
  const rows = await db.selectFrom('memberships').select(['user_id', 'org_id']).where('user_id', 'in', [...userIds]).execute();
  for (const r of rows) {
    let orgs = out.get(r.user_id);
    if (!orgs) out.set(r.user_id, (orgs = new Set()));
    orgs.add(r.org_id);
  }
  return out;
}

export interface MembershipSpan {
  org_id: number;
  user_id: number;
  joined_at: string;
  /** null: still a member. */
  left_at: string | null;
}

/** Every membership of these orgs, past (membership_history) and present, oldest first. */
export async function membershipSpans(db: Kysely<DB>, orgIds: readonly number[]): Promise<MembershipSpan[]> {
  if (orgIds.length === 0) return [];
  const past = await db.selectFrom('membership_history').select(['org_id', 'user_id', 'joined_at', 'left_at']).where('org_id', 'in', orgIds).execute();
  const now = await db.selectFrom('memberships').select(['org_id', 'user_id', 'created_at']).where('org_id', 'in', orgIds).execute();
  const all: MembershipSpan[] = [...past, ...now.map((m) => ({ org_id: m.org_id, user_id: m.user_id, joined_at: m.created_at, left_at: null }))];
  return all.sort((a, b) => (a.joined_at < b.joined_at ? -1 : a.joined_at > b.joined_at ? 1 : 0));
}

/** Owners and admins of the org: whom an escalation reaches. */
export async function orgManagers(db: Kysely<DB>, orgId: number) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name'])
    .where('m.org_id', '=', orgId)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('m.user_id')
    .execute();
}
