import type { Plan } from '../../db/schema.js';
import { upgradeRequired } from '../../lib/errors.js';

export interface PlanLimits {
  eventTypes: number;
  /** Orgs a user may own besides their personal org. */
  orgs: number;
  teamsPerOrg: number;
  membersPerTeam: number;
}

const UNLIMITED = Number.POSITIVE_INFINITY;

/** The plan table of the specification. Orgs and teams need agency or enterprise. */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { eventTypes: 3, orgs: 0, teamsPerOrg: 0, membersPerTeam: 0 },
  starter: { eventTypes: 10, orgs: 0, teamsPerOrg: 0, membersPerTeam: 0 },
  agency: { eventTypes: UNLIMITED, orgs: 1, teamsPerOrg: 5, membersPerTeam: 25 },
  enterprise: { eventTypes: UNLIMITED, orgs: UNLIMITED, teamsPerOrg: UNLIMITED, membersPerTeam: UNLIMITED },
};

/**
 * The over-limit rule, for every limited resource: resources are never deleted; ordered oldest
 * first, the first `limit` stay usable and the rest are locked until the plan allows them again.
 */
export const isLockedAt = (position: number, limit: number): boolean => position >= limit;

/** Marks each item of an oldest-first list as locked or not under `limit`. */
export function withLocks<T>(oldestFirst: readonly T[], limit: number, alreadyLocked = false): (T & { locked: boolean })[] {
  return oldestFirst.map((item, i) => ({ ...item, locked: alreadyLocked || isLockedAt(i, limit) }));
}

/** Refuses the creation of one more resource when `existing` already fills the limit (403 upgrade_required). */
export function assertRoomFor(existing: number, limit: number): void {
  if (isLockedAt(existing, limit)) throw upgradeRequired();
}
