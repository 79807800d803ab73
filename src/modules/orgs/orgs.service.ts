import { setRetention } from './retention-settings.js';
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, notFound, upgradeRequired } from '../../lib/errors.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { slugsLike } from '../../db/slugs.js';
import { findUserById } from '../users/index.js';
import { accessOf, membershipBegan, orgAccess, type OrgAccess } from './access.js';
import * as orgs from './orgs.repository.js';
import type { CreateOrgBody, Org, UpdateOrgBody } from './orgs.schemas.js';
import { PLAN_LIMITS, assertRoomFor } from './plans.js';

export const toOrg = ({ org, role, locked }: OrgAccess): Org => ({
  id: org.id,
  name: org.name,
  slug: org.slug,
  description: org.description,
  role,
  primary: org.is_primary === 1,
  personal: org.personal === 1,
  locked,
  created_at: org.created_at,
});

/** Maps a unique-slug violation to 409; anything else is rethrown. */
export function slugConflict(err: unknown): never {
  if (isUniqueViolation(err, 'slug')) throw conflict('Slug already taken');
  throw err;
}

/** Orgs beyond the personal one need agency (1) or enterprise (unlimited); the creator owns and bills it. */
export async function createOrg(ctx: AppContext, actor: Actor, input: CreateOrgBody): Promise<Org> {
  const user = await findUserById(ctx.db, actor.userId);
  if (!user) throw notFound();
  const limit = PLAN_LIMITS[user.plan].orgs;
  if (limit === 0) throw upgradeRequired();
  const id = await ctx
    .transaction(async (tx) => {
      const { db } = tx;
      assertRoomFor(await orgs.countOwnedOrgs(db, user.id), limit);
      const base = slugify(input.name, 'org');
      const slug = input.slug ?? firstFreeSlug(base, await slugsLike(db, 'orgs', base));
      const now = iso(ctx.clock.now());
      const org = await orgs.insertOrg(db, { name: input.name.trim(), slug, description: input.description ?? null, personal: 0, owner_id: user.id, created_at: now });
      await orgs.insertMembership(db, { orgId: org.id, userId: user.id, role: 'owner', primary: false, createdAt: now });
      membershipBegan(ctx, user.id, tx)(org.id);
      return org.id;
    })
    .catch(slugConflict);
  return toOrg(await orgAccess(ctx, actor, { id }));
}

export async function listOrgs(ctx: AppContext, actor: Actor): Promise<{ orgs: Org[] }> {
  const rows = await orgs.listMemberOrgs(ctx.db, actor.userId);
  return { orgs: rows.map((r) => toOrg(accessOf(r))) };
}

export async function getOrg(ctx: AppContext, actor: Actor, slug: string): Promise<Org> {
  return toOrg(await orgAccess(ctx, actor, { slug }));
}

/** Name, slug and description: owners only. */
export async function updateOrg(ctx: AppContext, actor: Actor, slug: string, input: UpdateOrgBody): Promise<Org> {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'owner', write: true });
  await orgs
    .updateOrg(ctx.db, org.id, {
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updated_at: iso(ctx.clock.now()),
    })
    .catch(slugConflict);
  if (input.retention) await setRetention(ctx, org.id, input.retention); // issue #22, modules/retention
  return toOrg(await orgAccess(ctx, actor, { id: org.id }));
}

/** Owners only; a locked org may be deleted (that is how one gets back under a limit). Never the personal org. */
export async function deleteOrg(ctx: AppContext, actor: Actor, slug: string) {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'owner' });
  if (org.personal === 1) throw conflict('A personal org cannot be deleted');
  await orgs.deleteOrg(ctx.db, org.id);
  ctx.events.endAccess({ orgId: org.id }); // every member's streams that include it close
  return { id: org.id, deleted: true };
}
