import type { Kysely } from 'kysely';
import type { DB, Plan } from '../../db/schema.js';
import { readSetting } from '../../db/settings.js';

export const DEFAULT_PLAN_KEY = 'default_plan';
const PLANS: readonly Plan[] = ['free', 'starter', 'agency', 'enterprise'];

/**
 * The plan a new registration gets: the one an instance admin chose on the admin page, else `free`
 * (what the specification's registration answers). Kept in `settings`, so every instance agrees.
 */
export async function defaultPlan(db: Kysely<DB>): Promise<Plan> {
  const value = await readSetting(db, DEFAULT_PLAN_KEY);
  return PLANS.find((p) => p === value) ?? 'free';
}
