import type { AppContext } from '../../context.js';
import { isForeignKeyViolation } from '../../db/dialect.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, notFound, validationFailed, type FieldError } from '../../lib/errors.js';
import { liveScheduleIds } from '../oncall/index.js';
import { orgAccess } from '../orgs/index.js';
// No public surface of orgs yet: the two lookups a target check needs.
import { listMembers } from '../orgs/index.js';
import { listTeams } from '../orgs/index.js';
import type { PolicyTarget } from '../incidents/index.js';
import * as repo from './policies.repository.js';
import type { CreatePolicyBody, Level, Policy, UpdatePolicyBody } from './policies.schemas.js';

const WRITE = { role: 'admin', write: true } as const;

export function toPolicy(r: repo.PolicyRow): Policy {
  return { id: r.id, org_id: r.org_id, name: r.name, repeat: r.repeat, levels: r.levels, created_at: r.created_at, updated_at: r.updated_at };
}

/**
 * Every target must be of the org: a member, one of its schedules (not deleted) or one of its
 * teams. A 422 names each bad one (`levels.1.targets.0.id`); an id of another org reads as unknown.
 * A `nearest` target has a `count`, no `id`, and at most one of `schedule_id` and `team_id`.
 */
async function checkTargets(ctx: AppContext, orgId: number, levels: readonly Level[]): Promise<PolicyTarget[][]> {
  const [members, schedules, teams] = await Promise.all([listMembers(ctx.db, orgId), liveScheduleIds(ctx, orgId), listTeams(ctx.db, orgId)]);
  const known = { user: new Set(members.map((m) => m.user_id)), schedule: schedules, team: new Set(teams.map((t) => t.id)) };
  const what = { user: 'a member', schedule: 'a schedule', team: 'a team' };
  const details: FieldError[] = [];
  const out = levels.map((l, i) =>
    l.targets.map((t, j): PolicyTarget => {
      const at = `levels.${i}.targets.${j}`;
      if (t.type !== 'nearest') {
        for (const f of ['count', 'within_m', 'schedule_id', 'team_id'] as const) if (t[f] !== undefined) details.push({ field: `${at}.${f}`, message: `is only for a nearest target` });
        if (t.id === undefined) details.push({ field: `${at}.id`, message: `is required for a ${t.type} target` });
        else if (!known[t.type].has(t.id)) details.push({ field: `${at}.id`, message: `is not ${what[t.type]} of this org` });
        return { type: t.type, id: t.id ?? 0 };
      }
      if (t.id !== undefined) details.push({ field: `${at}.id`, message: 'is not for a nearest target (schedule_id or team_id narrows it)' });
      if (t.count === undefined) details.push({ field: `${at}.count`, message: 'is required for a nearest target' });
      if (t.schedule_id !== undefined && t.team_id !== undefined) details.push({ field: `${at}.team_id`, message: 'cannot be given with schedule_id' });
      if (t.schedule_id !== undefined && !schedules.has(t.schedule_id)) details.push({ field: `${at}.schedule_id`, message: 'is not a schedule of this org' });
      if (t.team_id !== undefined && !known.team.has(t.team_id)) details.push({ field: `${at}.team_id`, message: 'is not a team of this org' });
      return {
        type: 'nearest',
        count: t.count ?? 1,
        ...(t.within_m !== undefined ? { within_m: t.within_m } : {}),
        ...(t.schedule_id !== undefined ? { schedule_id: t.schedule_id } : {}),
        ...(t.team_id !== undefined ? { team_id: t.team_id } : {}),
      };
    }),
  );
  if (details.length > 0) throw validationFailed(details);
  // Stored in a fixed shape (no extra properties the schema let through).
  return out;
}

const withTargets = (levels: readonly Level[], targets: PolicyTarget[][]) => levels.map((l, i) => ({ delay_minutes: l.delay_minutes, targets: targets[i]! }));

export async function createPolicy(ctx: AppContext, actor: Actor, orgSlug: string, input: CreatePolicyBody): Promise<Policy> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const levels = withTargets(input.levels, await checkTargets(ctx, org.id, input.levels));
  const now = iso(ctx.clock.now());
  const row = await repo.insertPolicy(ctx.db, { org_id: org.id, name: input.name.trim(), repeat: input.repeat ?? 0, levels, created_by: actor.userId, created_at: now, updated_at: now });
  return toPolicy(row);
}

export async function listPolicies(ctx: AppContext, actor: Actor, orgSlug: string) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug });
  return { escalation_policies: (await repo.listPolicies(ctx.db, org.id)).map(toPolicy) };
}

/** Members read; an unknown policy, or another org's, is 404 to everyone. */
async function policyAccess(ctx: AppContext, actor: Actor, orgSlug: string, id: number, write: boolean) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug }, write ? WRITE : {});
  const policy = await repo.findPolicy(ctx.db, access.org.id, id);
  if (!policy) throw notFound();
  return { ...access, policy };
}

export async function getPolicy(ctx: AppContext, actor: Actor, orgSlug: string, id: number): Promise<Policy> {
  return toPolicy((await policyAccess(ctx, actor, orgSlug, id, false)).policy);
}

/** A change applies to incidents opened from now on: a running escalation keeps the copy it took. */
export async function updatePolicy(ctx: AppContext, actor: Actor, orgSlug: string, id: number, input: UpdatePolicyBody): Promise<Policy> {
  const { org, policy } = await policyAccess(ctx, actor, orgSlug, id, true);
  const levels = input.levels === undefined ? undefined : withTargets(input.levels, await checkTargets(ctx, org.id, input.levels));
  const row = await repo.updatePolicy(ctx.db, policy.id, {
    ...(input.name !== undefined ? { name: input.name.trim() } : {}),
    ...(input.repeat !== undefined ? { repeat: input.repeat } : {}),
    ...(levels !== undefined ? { levels } : {}),
    updated_at: iso(ctx.clock.now()),
  });
  return toPolicy(row);
}

/** Refused (409) while an active integration or the org's default uses it; incidents keep their copy. */
export async function deletePolicy(ctx: AppContext, actor: Actor, orgSlug: string, id: number) {
  const { policy } = await policyAccess(ctx, actor, orgSlug, id, true);
  await ctx
    .transaction(async ({ db }) => {
      const uses = await repo.policyUses(db, policy.id);
      if (uses.orgDefault) throw conflict('The escalation policy is the org default: choose another default first (PATCH /v1/orgs/:org_slug/dispatch)');
      if (uses.integrations.length > 0) throw conflict(`The escalation policy is used by the integration${uses.integrations.length > 1 ? 's' : ''} ${uses.integrations.map((i) => `"${i.name}"`).join(', ')}`);
      await repo.releaseRevokedIntegrations(db, policy.id);
      await repo.deletePolicy(db, policy.id);
    })
    // A reference written meanwhile (an integration's PATCH racing this DELETE): the foreign key refuses.
    .catch((err: unknown) => {
      throw isForeignKeyViolation(err) ? conflict('The escalation policy is in use by an integration or as the org default: choose another policy there first') : err;
    });
  return { id: policy.id, deleted: true };
}
