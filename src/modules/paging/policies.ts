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
import * as repo from './policies.repository.js';
import type { CreatePolicyBody, Level, Policy, UpdatePolicyBody } from './policies.schemas.js';

const WRITE = { role: 'admin', write: true } as const;

export function toPolicy(r: repo.PolicyRow): Policy {
  return { id: r.id, org_id: r.org_id, name: r.name, repeat: r.repeat, levels: r.levels, created_at: r.created_at, updated_at: r.updated_at };
}

/**
 * Every target must be of the org: a member, one of its schedules (not deleted) or one of its
 * teams. A 422 names each bad one (`levels.1.targets.0.id`); an id of another org reads as unknown.
 */
async function checkTargets(ctx: AppContext, orgId: number, levels: readonly Level[]): Promise<Level[]> {
  const [members, schedules, teams] = await Promise.all([listMembers(ctx.db, orgId), liveScheduleIds(ctx, orgId), listTeams(ctx.db, orgId)]);
  const known = { user: new Set(members.map((m) => m.user_id)), schedule: schedules, team: new Set(teams.map((t) => t.id)) };
  const what = { user: 'a member', schedule: 'a schedule', team: 'a team' };
  const details: FieldError[] = [];
  levels.forEach((l, i) =>
    l.targets.forEach((t, j) => {
      if (!known[t.type].has(t.id)) details.push({ field: `levels.${i}.targets.${j}.id`, message: `is not ${what[t.type]} of this org` });
    }),
  );
  if (details.length > 0) throw validationFailed(details);
  // Stored in a fixed shape (no extra properties the schema let through).
  return levels.map((l) => ({ delay_minutes: l.delay_minutes, targets: l.targets.map((t) => ({ type: t.type, id: t.id })) }));
}

export async function createPolicy(ctx: AppContext, actor: Actor, orgSlug: string, input: CreatePolicyBody): Promise<Policy> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const levels = await checkTargets(ctx, org.id, input.levels);
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
  const levels = input.levels === undefined ? undefined : await checkTargets(ctx, org.id, input.levels);
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
