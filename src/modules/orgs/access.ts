import type { AppContext } from '../../context.js';
import type { Role } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { forbidden, notFound, resourceLocked } from '../../lib/errors.js';
import type { Scope } from '../../db/scope.js';
import type { Tx } from '../../db/transaction.js';
import { credentialCache, type Memberships, type OrgWrite } from '../users/index.js';
import { membershipsOfUser } from './members.repository.js';
import { findMemberOrg, type MemberOrgRow, type OrgRef } from './orgs.repository.js';
import { PLAN_LIMITS, isLockedAt, type PlanLimits } from './plans.js';

export const ROLE_RANK: Readonly<Record<Role, number>> = { member: 1, admin: 2, owner: 3 };

export interface OrgAccess {
  org: MemberOrgRow;
  role: Role;
  /** Limits of the billing owner's plan. */
  limits: PlanLimits;
  /** Over the owner's org limit: readable, not writable. A personal org is never locked. */
  locked: boolean;
}

export interface Need {
  /** Lowest role allowed (403 below it). */
  role?: Role;
  /** The call changes the org or something in it: refused with 403 resource_locked when the org is locked. */
  write?: boolean;
}

export function accessOf(org: MemberOrgRow): OrgAccess {
  const limits = PLAN_LIMITS[org.owner_plan ?? 'free'];
  return { org, role: org.role, limits, locked: org.personal === 0 && isLockedAt(org.position, limits.orgs) };
}

/**
 * The one access check of every module: membership, role and lock of the caller in an org.
 * A non-member gets 404, so an org's existence never leaks; a member below `need.role` gets 403.
 */
export async function orgAccess(ctx: AppContext, actor: Actor, ref: OrgRef, need: Need = {}): Promise<OrgAccess> {
  const org = await findMemberOrg(ctx.db, actor.userId, ref);
  if (!org) throw notFound();
  const access = accessOf(org);
  if (need.role && ROLE_RANK[access.role] < ROLE_RANK[need.role]) throw forbidden();
  if (need.write && access.locked) throw resourceLocked();
  return access;
}

export const atLeast = (role: Role, need: Role) => ROLE_RANK[role] >= ROLE_RANK[need];

/**
 * The orgs of a user and their primary org, from the credential cache (modules/auth/credential-cache.ts):
 * every change of a membership publishes an access notice that drops the user's entry. Not inside
 * a transaction (it reads through ctx.db). The org rows themselves (slug, plan, lock) are read
 * fresh by orgAccess and targetOrg.
 */
export function membershipsOf(ctx: AppContext, userId: number): Promise<Memberships> {
  return credentialCache(ctx).memberships(userId, () => membershipsOfUser(ctx.db, userId));
}

/**
 * Announces memberships of `userId` that began (after `tx` commits, when given): the credential
 * caches of every instance read the user's memberships again. It closes no stream (none includes
 * an org its holder was not a member of).
 */
export const membershipBegan =
  (ctx: AppContext, userId: number, tx?: Tx) =>
  (orgId: number): void =>
    ctx.events.endAccess({ userId, orgId }, tx);

/**
 * The tenant scope of a caller: every org they belong to, in the mode of their credential; or
 * only `orgId` when a list asks for one, which must be one of theirs (403 otherwise).
 */
export async function actorScope(ctx: AppContext, actor: Actor, orgId?: number): Promise<Scope> {
  const { orgIds } = await membershipsOf(ctx, actor.userId);
  if (orgId === undefined) return { orgIds, mode: actor.mode };
  if (!orgIds.includes(orgId)) throw forbidden();
  return { orgIds: [orgId], mode: actor.mode };
}

/**
 * The org a new record goes into: `orgId` from the body, else the caller's primary org. Naming an
 * org the caller does not belong to is 403 (the caller chose it; docs/api.md, "Access: 401, 403, 404");
 * a locked org refuses new records.
 */
export async function targetOrg(ctx: AppContext, actor: Actor, orgId: number | undefined): Promise<OrgAccess> {
  const id = orgId ?? (await membershipsOf(ctx, actor.userId)).primaryOrgId;
  const org = id === undefined ? undefined : await findMemberOrg(ctx.db, actor.userId, { id });
  if (!org) throw forbidden();
  const access = accessOf(org);
  if (access.locked) throw resourceLocked();
  return access;
}

/**
 * targetOrg for the beacon path (POST /v1/signals beacons and tracker fixes, issue #19): the same
 * answers (403 for an org not the caller's, resource_locked for a locked one) from the credential
 * cache, without the org row. The cache drops an entry when the membership changes or ends, when
 * any org is deleted (the owner's other orgs may cross the plan's limit) and when the owner's row
 * changes (their plan decides the lock).
 */
export async function targetOrgWrite(ctx: AppContext, actor: Actor, orgId: number | undefined): Promise<OrgWrite> {
  const id = orgId ?? (await membershipsOf(ctx, actor.userId)).primaryOrgId;
  const write =
    id === undefined
      ? undefined
      : await credentialCache(ctx).orgWrite(actor.userId, id, async () => {
          const org = await findMemberOrg(ctx.db, actor.userId, { id });
          return org && { orgId: org.id, ownerId: org.owner_id, locked: accessOf(org).locked };
        });
  if (!write) throw forbidden();
  if (write.locked) throw resourceLocked();
  return write;
}

/** What a live stream of `channel` opened by this caller receives: their orgs, their mode. */
export async function streamAudience(ctx: AppContext, actor: Actor, channel: string) {
  const scope = await actorScope(ctx, actor);
  return { channel, orgIds: new Set(scope.orgIds), mode: scope.mode };
}

/** An org's limits and lock state, for callers who are not members (public booking pages). */
export async function orgLimits(ctx: AppContext, orgId: number): Promise<{ limits: PlanLimits; locked: boolean }> {
  const row = await ctx.db
    .selectFrom('orgs')
    .leftJoin('users as owner', 'owner.id', 'orgs.owner_id')
    .select(['orgs.personal', 'owner.plan as owner_plan'])
    .select((eb) => eb.selectFrom('orgs as o2').select((e) => e.fn.countAll<number>().as('n')).whereRef('o2.owner_id', '=', 'orgs.owner_id').where('o2.personal', '=', 0).whereRef('o2.id', '<', 'orgs.id').as('position'))
    .where('orgs.id', '=', orgId)
    .executeTakeFirstOrThrow();
  const limits = PLAN_LIMITS[row.owner_plan ?? 'free'];
  return { limits, locked: row.personal === 0 && isLockedAt(Number(row.position ?? 0), limits.orgs) };
}
