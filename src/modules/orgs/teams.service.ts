import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, forbidden, invalidField, notFound, resourceLocked, upgradeRequired } from '../../lib/errors.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { atLeast, orgAccess, type OrgAccess } from './access.js';
import { findMember } from './members.repository.js';
import { slugConflict } from './orgs.service.js';
import type { CreateTeamBody, UpdateTeamBody } from './orgs.schemas.js';
import { assertRoomFor, isLockedAt, withLocks } from './plans.js';
import * as teams from './teams.repository.js';

const toTeam = (t: teams.TeamRow, locked: boolean) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  routing: t.routing,
  description: t.description,
  created_at: t.created_at,
  locked,
});

export interface TeamAccess extends OrgAccess {
  team: teams.PositionedTeam;
  teamLocked: boolean;
}

/** Org access plus the team; a team is locked when its org is, or when it is beyond the plan's team limit. */
export async function teamAccess(
  ctx: AppContext,
  actor: Actor,
  orgSlug: string,
  teamSlug: string,
  need: { role?: 'admin' | 'owner'; write?: boolean } = {},
): Promise<TeamAccess> {
  // The team is looked up before the role is checked: to a member, an unknown team is 404 on every route.
  const access = await orgAccess(ctx, actor, { slug: orgSlug });
  const team = await teams.findTeam(ctx.db, access.org.id, teamSlug);
  if (!team) throw notFound();
  if (need.role && !atLeast(access.role, need.role)) throw forbidden();
  const teamLocked = access.locked || isLockedAt(team.position, access.limits.teamsPerOrg);
  if (need.write && teamLocked) throw resourceLocked();
  return { ...access, team, teamLocked };
}

/**
 * Teams need agency or enterprise; agency allows 5 per org. The creator joins the new team as an
 * active member when they are a member of the org (as Cal.com does), in the same transaction, and
 * the answer lists the team's members so it says so.
 */
export async function createTeam(ctx: AppContext, actor: Actor, orgSlug: string, input: CreateTeamBody) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug }, { role: 'admin', write: true });
  const limit = access.limits.teamsPerOrg;
  if (limit === 0) throw upgradeRequired();
  const creator = await findMember(ctx.db, access.org.id, actor.userId);
  const joins = creator !== undefined && access.limits.membersPerTeam !== 0;
  const team = await ctx
    .transaction(async ({ db }) => {
      assertRoomFor(await teams.countTeams(db, access.org.id), limit);
      const base = slugify(input.name, 'team');
      const existing = new Set((await teams.listTeams(db, access.org.id)).map((t) => t.slug));
      const now = iso(ctx.clock.now());
      const row = await teams.insertTeam(db, {
        orgId: access.org.id,
        name: input.name.trim(),
        slug: input.slug ?? firstFreeSlug(base, existing),
        routing: input.routing ?? 'round_robin',
        description: input.description ?? null,
        now,
      });
      if (joins) await teams.insertTeamMember(db, row.id, creator.user_id, true, now);
      return row;
    })
    .catch(slugConflict);
  const members = joins ? [{ user_id: creator.user_id, name: creator.name, active: true, locked: false }] : [];
  return { ...toTeam(team, false), members };
}

export async function listTeams(ctx: AppContext, actor: Actor, orgSlug: string) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug });
  const rows = await teams.listTeams(ctx.db, access.org.id);
  return { teams: withLocks(rows, access.limits.teamsPerOrg, access.locked).map((t) => toTeam(t, t.locked)) };
}

export async function updateTeam(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, input: UpdateTeamBody) {
  const { team } = await teamAccess(ctx, actor, orgSlug, teamSlug, { role: 'admin', write: true });
  const updated = await teams
    .updateTeam(ctx.db, team.id, {
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.routing !== undefined ? { routing: input.routing } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updated_at: iso(ctx.clock.now()),
    })
    .catch(slugConflict);
  return toTeam(updated, false);
}

/** Allowed on a locked team: deleting is how one gets back under a limit. */
export async function deleteTeam(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string) {
  const { team } = await teamAccess(ctx, actor, orgSlug, teamSlug, { role: 'admin' });
  await teams.deleteTeam(ctx.db, team.id);
  return { id: team.id, deleted: true };
}

/** Members of the team; beyond the plan's per-team limit (oldest first) they are locked and not routed to. */
export async function listTeamMembers(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string) {
  const access = await teamAccess(ctx, actor, orgSlug, teamSlug);
  const rows = await teams.listTeamMembers(ctx.db, access.team.id);
  return {
    members: withLocks(rows, access.limits.membersPerTeam, access.teamLocked).map((m) => ({
      user_id: m.user_id,
      name: m.name,
      active: m.active === 1,
      locked: m.locked,
    })),
  };
}

/** Admins manage anyone's place in a team; a member manages their own (joins, toggles, leaves). */
async function teamMemberAccess(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, userId: number, write: boolean) {
  const access = await teamAccess(ctx, actor, orgSlug, teamSlug, { write });
  if (userId !== actor.userId && !atLeast(access.role, 'admin')) throw forbidden();
  return access;
}

export async function addTeamMember(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, input: { user_id: number; active?: boolean | undefined }) {
  const access = await teamMemberAccess(ctx, actor, orgSlug, teamSlug, input.user_id, true);
  const member = await findMember(ctx.db, access.org.id, input.user_id);
  if (!member) throw invalidField('user_id', 'is not a member of this org');
  assertRoomFor(await teams.countTeamMembers(ctx.db, access.team.id), access.limits.membersPerTeam);
  const active = input.active ?? true;
  await teams.insertTeamMember(ctx.db, access.team.id, member.user_id, active, iso(ctx.clock.now())).catch((err: unknown) => {
    if (isUniqueViolation(err)) throw conflict('Already in this team');
    throw err;
  });
  return { user_id: member.user_id, name: member.name, active, locked: false };
}

export async function setTeamMemberActive(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, userId: number, active: boolean) {
  const access = await teamMemberAccess(ctx, actor, orgSlug, teamSlug, userId, true);
  const list = withLocks(await teams.listTeamMembers(ctx.db, access.team.id), access.limits.membersPerTeam);
  const member = list.find((m) => m.user_id === userId);
  if (!member) throw notFound();
  if (member.locked) throw resourceLocked();
  await teams.setTeamMemberActive(ctx.db, access.team.id, userId, active);
  return { user_id: userId, name: member.name, active, locked: false };
}

export async function removeTeamMember(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, userId: number) {
  const access = await teamMemberAccess(ctx, actor, orgSlug, teamSlug, userId, false);
  if (!(await teams.removeTeamMember(ctx.db, access.team.id, userId))) throw notFound();
  return { user_id: userId, removed: true };
}
