// Whom a level of an escalation policy reaches, resolved at the moment it fires (issue #36).
// Each target type has one resolver; a new kind of target (the nearest responders on duty, by
// position: the field-dispatch issue) is one more entry of RESOLVERS and of the policy schema's union.
import type { AppContext } from '../../context.js';
import type { PolicyTarget } from '../incidents/index.js';
import { liveScheduleIds, whoIsOnCall } from '../oncall/index.js';
import { listMembers, listTeamMembers, listTeams } from '../orgs/index.js';

export interface PagedPerson {
  userId: number;
  /** The target that reached them (the first one, when several did). */
  target: PolicyTarget;
}

/** What the resolvers of one level share: the org's members and its live schedules, read once. */
interface Lookup {
  ctx: AppContext;
  orgId: number;
  at: number;
  members: Set<number>;
  schedules?: Set<number>;
}

type Resolver = (l: Lookup, id: number) => Promise<{ people: number[]; reason?: string }>;

const RESOLVERS: Record<PolicyTarget['type'], Resolver> = {
  user: async (l, id) => (l.members.has(id) ? { people: [id] } : { people: [], reason: `user ${id} is no longer a member` }),
  team: async (l, id) => {
    const team = (await listTeams(l.ctx.db, l.orgId)).find((t) => t.id === id);
    if (!team) return { people: [], reason: `team ${id} no longer exists` };
    const people = (await listTeamMembers(l.ctx.db, id)).filter((m) => m.active === 1 && l.members.has(m.user_id)).map((m) => m.user_id);
    return people.length > 0 ? { people } : { people, reason: `team "${team.name}" has no active members` };
  },
  schedule: async (l, id) => {
    l.schedules ??= await liveScheduleIds(l.ctx, l.orgId);
    if (!l.schedules.has(id)) return { people: [], reason: `schedule ${id} no longer exists` };
    const shift = await whoIsOnCall(l.ctx, l.orgId, id, l.at);
    if (!shift) return { people: [], reason: `nobody is on call in schedule ${id}` };
    if (!l.members.has(shift.userId)) return { people: [], reason: `the person on call in schedule ${id} is no longer a member` };
    return { people: [shift.userId] };
  },
};

/**
 * The people a level's targets reach at instant `at` (ms), each once (the first target that reached
 * them is theirs), in the targets' order; with nobody, why (one reason per target, joined).
 */
export async function resolveLevel(ctx: AppContext, orgId: number, targets: readonly PolicyTarget[], at: number): Promise<{ people: PagedPerson[]; reason: string }> {
  const l: Lookup = { ctx, orgId, at, members: new Set((await listMembers(ctx.db, orgId)).map((m) => m.user_id)) };
  const people = new Map<number, PolicyTarget>();
  const reasons: string[] = [];
  for (const target of targets) {
    const r = await RESOLVERS[target.type](l, target.id);
    for (const userId of r.people) if (!people.has(userId)) people.set(userId, target);
    if (r.reason) reasons.push(r.reason);
  }
  return { people: [...people].map(([userId, target]) => ({ userId, target })), reason: reasons.join('; ') || 'the level has no targets' };
}
