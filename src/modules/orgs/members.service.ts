import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { lockOrgs } from '../../db/locks.js';
import type { Tx } from '../../db/transaction.js';
import type { DB } from '../../db/schema.js';
import type { Role } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import { findUserByEmail } from '../users/index.js';
import { normalizeEmail } from '../users/index.js';
import { atLeast, membershipBegan, orgAccess, type OrgAccess } from './access.js';
import * as invites from './invites.repository.js';
import { sendInvite } from './invites.service.js';
import * as members from './members.repository.js';
import { insertMembership, updateOrg } from './orgs.repository.js';

const toMember = (m: members.MemberRow) => ({ user_id: m.user_id, email: m.email, name: m.name, role: m.role });

export async function listMembers(ctx: AppContext, actor: Actor, slug: string) {
  const access = await orgAccess(ctx, actor, { slug });
  const rows = await members.listMembers(ctx.db, access.org.id);
  const pending = atLeast(access.role, 'admin') ? await invites.listPendingInvites(ctx.db, access.org.id) : [];
  return { members: rows.map(toMember), invites: pending };
}

/** Only an owner may touch an owner, or make one. */
function assertMayManage(access: OrgAccess, targetRole: Role | undefined, newRole: Role | undefined): void {
  if ((targetRole === 'owner' || newRole === 'owner') && access.role !== 'owner') throw forbidden();
}

/**
 * Adds a registered user whose address is proven as a member at once. An unknown address, or an
 * account that has not proven it, gets an emailed invite that its link (or the address proven
 * later) accepts: otherwise registering a colleague's address first would be enough to be let in.
 */
export async function addMember(ctx: AppContext, actor: Actor, slug: string, input: { email: string; role?: Role | undefined }) {
  const access = await orgAccess(ctx, actor, { slug }, { role: 'admin', write: true });
  const role = input.role ?? 'member';
  assertMayManage(access, undefined, role);
  const email = normalizeEmail(input.email);
  const now = iso(ctx.clock.now());
  const user = await findUserByEmail(ctx.db, email);
  if (user && (await members.findMember(ctx.db, access.org.id, user.id))) throw conflict('Already a member');
  if (user?.email_verified === 1) {
    await insertMembership(ctx.db, { orgId: access.org.id, userId: user.id, role, primary: false, createdAt: now }).catch((err: unknown) => {
      if (isUniqueViolation(err)) throw conflict('Already a member');
      throw err;
    });
    membershipBegan(ctx, user.id)(access.org.id);
    return { status: 201 as const, body: { user_id: user.id, email: user.email, name: user.name, role } };
  }
  await ctx.transaction((tx) => sendInvite(ctx, tx, { org: access.org, email, role, invitedBy: actor.userId }));
  return { status: 201 as const, body: { invited: true, email, role } };
}

/**
 * When the billing owner stops being an owner, the longest-standing other owner takes over the plan.
 * The org's lock now follows the successor's plan, and it moves from one owner's count of orgs to the
 * other's: the credential caches drop the write access they hold to the orgs of both (a `{userRow}`
 * notice of each, after the commit), as they do when either one's plan changes.
 */
async function handOverBilling(ctx: AppContext, tx: Tx, access: OrgAccess, leavingUserId: number, successor: number | undefined) {
  if (access.org.owner_id === leavingUserId && successor !== undefined) {
    await updateOrg(tx.db, access.org.id, { owner_id: successor, updated_at: iso(ctx.clock.now()) });
    ctx.events.endAccess({ userRow: leavingUserId }, tx);
    ctx.events.endAccess({ userRow: successor }, tx);
  }
}

/**
 * The last owner can be neither demoted nor removed, nor the owner of a personal org. Called inside
 * the transaction that makes the change, after `lockOrgs`: two owners demoting or removing each
 * other, or one deleting their account, at once, cannot both pass with the other still counted.
 */
async function assertOwnerMayGo(db: Kysely<DB>, access: OrgAccess, target: members.MemberRow): Promise<number | undefined> {
  if (target.role !== 'owner') return undefined;
  if (access.org.personal === 1 && access.org.owner_id === target.user_id) throw conflict('The owner of a personal org stays its owner');
  const others = await members.otherOwners(db, access.org.id, target.user_id);
  if (others.length === 0) throw conflict('An org needs at least one owner');
  return others[0];
}

/** The member as they are now, with the org's owners locked until the transaction ends. */
async function lockedMember(ctx: AppContext, tx: Tx, access: OrgAccess, userId: number): Promise<members.MemberRow> {
  await lockOrgs(tx.db, ctx.database.dialect, [access.org.id]);
  const target = await members.findMember(tx.db, access.org.id, userId);
  if (!target) throw notFound();
  return target;
}

export async function updateMember(ctx: AppContext, actor: Actor, slug: string, userId: number, role: Role) {
  const access = await orgAccess(ctx, actor, { slug }, { role: 'admin', write: true });
  const target = await ctx.transaction(async (tx) => {
    const target = await lockedMember(ctx, tx, access, userId);
    assertMayManage(access, target.role, role);
    const successor = role === 'owner' ? undefined : await assertOwnerMayGo(tx.db, access, target);
    await members.setRole(tx.db, access.org.id, userId, role);
    await handOverBilling(ctx, tx, access, userId, successor);
    // Streams that include this org close and reopen with what the new role may see.
    if (target.role !== role) ctx.events.endAccess({ userId, orgId: access.org.id }, tx);
    return target;
  });
  return toMember({ ...target, role });
}

/** What else goes when a member leaves an org (the composition root wires it: app.ts). */
export type MemberRemoved = (userId: number, orgId: number) => Promise<unknown>;

/**
 * Admins remove members; anyone may leave. Allowed on a locked org. `removed` runs once the
 * removal committed, before the answer (modules/signals switches the member's devices off there).
 */
export async function removeMember(ctx: AppContext, actor: Actor, slug: string, userId: number, removed?: MemberRemoved) {
  const self = userId === actor.userId;
  const access = await orgAccess(ctx, actor, { slug }, self ? {} : { role: 'admin' });
  await ctx.transaction(async (tx) => {
    const target = await lockedMember(ctx, tx, access, userId);
    if (!self) assertMayManage(access, target.role, undefined);
    const successor = await assertOwnerMayGo(tx.db, access, target);
    await members.removeMember(tx.db, access.org.id, userId, iso(ctx.clock.now()));
    await handOverBilling(ctx, tx, access, userId, successor);
    ctx.events.endAccess({ userId, orgId: access.org.id }, tx); // the org's events stop reaching their streams
  });
  // Off the org's map and device list at once, not after the silence timeout (issue #31 F12).
  if (removed) await removed(userId, access.org.id);
  return { user_id: userId, removed: true };
}
