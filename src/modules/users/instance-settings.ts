import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Plan } from '../../db/schema.js';
import { readSetting, writeSetting } from '../../db/settings.js';
import type { Actor } from '../../lib/actor.js';
import { requireAdmin } from './users.service.js';

const DEFAULT_PLAN = 'default_plan';
const PLANS: readonly Plan[] = ['free', 'starter', 'agency', 'enterprise'];

/**
 * The plan a new registration gets: the one an instance admin chose on the admin page, else `free`
 * (what the specification's registration answers). Kept in `settings`, so every instance agrees.
 */
export async function defaultPlan(db: Kysely<DB>): Promise<Plan> {
  const value = await readSetting(db, DEFAULT_PLAN);
  return PLANS.find((p) => p === value) ?? 'free';
}

export async function getInstanceSettings(ctx: AppContext, actor: Actor) {
  await requireAdmin(ctx, actor);
  return { default_plan: await defaultPlan(ctx.db) };
}

/** Instance admins; applies to registrations from now on (existing accounts keep their plan). */
export async function updateInstanceSettings(ctx: AppContext, actor: Actor, input: { default_plan?: Plan | undefined }) {
  await requireAdmin(ctx, actor);
  if (input.default_plan !== undefined) await writeSetting(ctx.db, DEFAULT_PLAN, input.default_plan);
  return { default_plan: await defaultPlan(ctx.db) };
}
