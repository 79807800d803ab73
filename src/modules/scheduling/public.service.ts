import type { AppContext } from '../../context.js';
import { notFound } from '../../lib/errors.js';
import { findUserBySlug, type PublicProfile } from '../users/index.js';
import { publicEventTypes } from './event-types.service.js';
import { findPersonalBySlug, findTeamBySlug } from './event-types.repository.js';
import { bookableOf, type Bookable } from './slots.service.js';

/** The live personal event type behind `/<username>/<event_slug>`, or 404. */
export async function personalBookable(ctx: AppContext, username: string, eventSlug: string): Promise<Bookable> {
  const user = await findUserBySlug(ctx.db, username.toLowerCase());
  const et = user ? await findPersonalBySlug(ctx.db, user.id, eventSlug.toLowerCase(), 1) : undefined;
  if (!et) throw notFound();
  return bookableOf(ctx, et);
}

/** The live team event type behind `/<org_slug>/<team_slug>/<event_slug>`, or 404. */
export async function teamBookable(ctx: AppContext, orgSlug: string, teamSlug: string, eventSlug: string): Promise<Bookable> {
  const team = await ctx.db
    .selectFrom('teams')
    .innerJoin('orgs', 'orgs.id', 'teams.org_id')
    .select('teams.id')
    .where('orgs.slug', '=', orgSlug.toLowerCase())
    .where('teams.slug', '=', teamSlug.toLowerCase())
    .executeTakeFirst();
  const et = team ? await findTeamBySlug(ctx.db, team.id, eventSlug.toLowerCase(), 1) : undefined;
  if (!et) throw notFound();
  return bookableOf(ctx, et);
}

/** A user's public page: who they are and the event types they offer. */
export async function publicProfile(ctx: AppContext, slug: string): Promise<PublicProfile> {
  const user = await findUserBySlug(ctx.db, slug.toLowerCase());
  if (!user) throw notFound();
  return { id: user.id, name: user.name, slug: user.slug, timezone: user.timezone, event_types: await publicEventTypes(ctx, user.id) };
}
