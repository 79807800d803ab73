import type { AppContext } from '../../context.js';
import type { Plan } from '../../db/schema.js';
import { writeSetting } from '../../db/settings.js';
import type { Actor } from '../../lib/actor.js';
import { DEFAULT_PLAN_KEY, defaultPlan } from './default-plan.js';
import { requireAdmin } from './users.service.js';

export async function getInstanceSettings(ctx: AppContext, actor: Actor) {
  await requireAdmin(ctx, actor);
  return { default_plan: await defaultPlan(ctx.db) };
}

/** Instance admins; applies to registrations from now on (existing accounts keep their plan). */
export async function updateInstanceSettings(ctx: AppContext, actor: Actor, input: { default_plan?: Plan | undefined }) {
  await requireAdmin(ctx, actor);
  if (input.default_plan !== undefined) await writeSetting(ctx.db, DEFAULT_PLAN_KEY, input.default_plan);
  return { default_plan: await defaultPlan(ctx.db) };
}
