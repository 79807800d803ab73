// The escalation walk (issue #36, docs/paging.md): an incident following a policy pages level 1 at
// once, the next level when nobody acknowledged within the level's delay, the policy again `repeat`
// times, then records `escalation_exhausted`. The incident's side (its state, the conditional update
// that makes each step happen once across instances) is modules/incidents policy-walk.ts; this file
// decides whom a step reaches and pages them.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { conflict, forbidden } from '../../lib/errors.js';
import {
  advanceWalk,
  assignPaged,
  duePolicyWalks,
  escalates,
  findVisible,
  nextPosition,
  recordTimeline,
  toIncident,
  walkById,
  type IncidentRow,
  type PolicyTarget,
  type WalkIncident,
  type WalkPosition,
} from '../incidents/index.js';
import { atLeast, orgAccess } from '../orgs/index.js';
import { PARALLEL_RUNS, pagePerson } from './notifications.js';
import { eachLimited } from '../../lib/concurrency.js';
import { resolveLevel, type PagedPerson } from './targets.js';

const BATCH = 200;

/** One step's plan, made before its transaction (resolving schedules reads a lot): levels skipped, then the level fired or the end. */
interface Plan {
  skipped: (WalkPosition & { reason: string })[];
  fired?: WalkPosition & { people: PagedPerson[] };
  exhausted?: string;
  to: WalkPosition & { escalateAt: string | null };
}

/**
 * Whom the next step reaches at `firedAt` (ms): the next level whose targets resolve to someone,
 * after any that resolve to nobody (each skipped at once, with why). A whole round of levels with
 * nobody to page ends the escalation. `wrap`: an escalation asked for by hand goes on past the last
 * round. A normal or low incident pages one level only (no deadline after it).
 */
async function planStep(ctx: AppContext, e: WalkIncident, firedAt: number, wrap: boolean): Promise<Plan> {
  const skipped: Plan['skipped'] = [];
  let at: WalkPosition = { level: e.escalation_level, loop: e.escalation_loop };
  for (let i = 0; i < e.policy.levels.length; i++) {
    const next = nextPosition(e.policy, at, wrap && i === 0);
    if (!next) return { skipped, exhausted: 'every level fired and nobody acknowledged', to: { ...at, escalateAt: null } };
    const level = e.policy.levels[next.level - 1]!;
    const { people, reason } = await resolveLevel(ctx, e, level.targets, firedAt);
    if (people.length > 0) {
      const escalateAt = escalates(e.priority) ? iso(new Date(firedAt + level.delay_minutes * MINUTE)) : null;
      return { skipped, fired: { ...next, people }, to: { ...next, escalateAt } };
    }
    skipped.push({ ...next, reason });
    at = next;
  }
  return { skipped, exhausted: 'no level of the policy has anyone to page', to: { ...at, escalateAt: null } };
}

/**
 * Pages one person for an incident in the caller's transaction: their notifications by their own
 * rules (notifications.ts), the page recorded (who may acknowledge, `GET /v1/auth/me/pages`) and the
 * `paged {user_id, level, loop, target, distance_m?}` timeline event (level and loop null: by hand;
 * `distance_m`: paged by a `nearest` target, how far they were).
 */
export async function pageOne(
  ctx: AppContext,
  tx: Tx,
  incident: Pick<IncidentRow, 'id' | 'org_id' | 'livemode' | 'priority'>,
  userId: number,
  at: { level: number | null; loop: number | null; target: PolicyTarget; distanceM?: number },
  actorId: number | null,
) {
  const distance = at.distanceM ?? null;
  const rows = await pagePerson(ctx, tx, incident, userId, distance);
  await tx.db
    .insertInto('paging_pages')
    .values({ incident_id: incident.id, org_id: incident.org_id, livemode: incident.livemode, user_id: userId, level: at.level, loop: at.loop, target_type: at.target.type, target_id: at.target.type === 'nearest' ? null : at.target.id, distance_m: distance, created_at: iso(ctx.clock.now()) })
    .execute();
  await recordTimeline(ctx, tx, incident, 'paged', actorId, { user_id: userId, level: at.level, loop: at.loop, target: at.target, ...(distance !== null ? { distance_m: distance } : {}) });
  return rows;
}

/**
 * Takes one step of an incident's walk, if nobody took it since `e` was read: the plan is made
 * first, then applied in one transaction whose first statement is the conditional update
 * (advanceWalk); a walker that lost it writes nothing. Answers whether this call took the step.
 */
async function step(ctx: AppContext, e: WalkIncident, firedAt: number, by: { actorId: number | null; wrap: boolean }): Promise<boolean> {
  const plan = await planStep(ctx, e, firedAt, by.wrap);
  return ctx.transaction(async (tx) => {
    const row = await advanceWalk(ctx, tx, e, plan.to, by.wrap && e.acknowledged_at !== null);
    if (!row) return false;
    for (const s of plan.skipped) await recordTimeline(ctx, tx, row, 'escalation_skipped', null, { level: s.level, loop: s.loop, reason: s.reason });
    if (plan.exhausted) await recordTimeline(ctx, tx, row, 'escalation_exhausted', null, { level: plan.to.level, loop: plan.to.loop, reason: plan.exhausted });
    if (!plan.fired) return true;
    const { level, loop, people } = plan.fired;
    if (level > 1 || loop > 0 || by.actorId !== null) await recordTimeline(ctx, tx, row, 'escalated', by.actorId, { level, loop, ...(by.actorId !== null ? { by_hand: true } : {}) });
    for (const p of people) await pageOne(ctx, tx, row, p.userId, { level, loop, target: p.target, ...(p.distanceM !== undefined ? { distanceM: p.distanceM } : {}) }, null);
    // The first person paged at level 1 becomes the assignee of an incident nobody has.
    if (level === 1 && row.assignee_id === null) await assignPaged(ctx, tx, row.id, people[0]!.userId);
    return true;
  });
}

/**
 * When a due step counts as fired: at its deadline when the walker is on time (so delays do not
 * drift by the sweep's interval), at `now` when it comes late (after downtime: missed levels are
 * not fired back to back).
 */
function firedAtOf(e: WalkIncident, now: number): number {
  const due = e.escalate_at === null ? now : Date.parse(e.escalate_at);
  return now - due <= MINUTE ? due : now;
}

/**
 * Takes every due step of every walk (the paging sweep and the wake after a commit), PARALLEL_RUNS incidents at once
 * (a failing step is thrown once the others are done). Answers how many it took.
 */
export async function walkDue(ctx: AppContext): Promise<number> {
  const now = ctx.clock.nowMs();
  let taken = 0;
  await eachLimited(await duePolicyWalks(ctx.db, iso(new Date(now)), BATCH), PARALLEL_RUNS, async (e) => {
    if (await step(ctx, e, firedAtOf(e, now), { actorId: null, wrap: false })) taken += 1;
  });
  return taken;
}

/**
 * POST /v1/tickets/:id/escalate: fires the next level now (an admin or owner of the org, or the
 * assignee). After the last level it starts the policy again; an acknowledged incident goes back to
 * unacknowledged (as PagerDuty's escalate re-triggers it). 409 for an incident without a policy or
 * resolved. Each call fires one level: two concurrent calls fire two, one after the other.
 */
export async function escalateByHand(ctx: AppContext, actor: Actor, incidentId: number) {
  const incident = await findVisible(ctx, actor, incidentId);
  const { role } = await orgAccess(ctx, actor, { id: incident.org_id }, { write: true });
  if (incident.assignee_id !== actor.userId && !atLeast(role, 'admin')) throw forbidden();
  if (incident.status === 'resolved' || incident.status === 'closed') throw conflict('The incident is resolved: reopen it to escalate');
  // A walker may take a step between the read and the claim (level 1 right after the incident
  // opened): then the next level is the one after that, read again. Three tries, then 409.
  for (let attempt = 0; ; attempt++) {
    const e = await walkById(ctx.db, incident.id);
    if (!e) throw conflict('The incident follows no escalation policy: set one, or page someone');
    if (await step(ctx, e, ctx.clock.nowMs(), { actorId: actor.userId, wrap: true })) break;
    if (attempt === 2) throw conflict('The escalation moved meanwhile: look again');
  }
  wakeAfter(ctx);
  return toIncident(ctx, (await findVisible(ctx, actor, incidentId)));
}

/** Sends what a step queued at once (rules with no delay) without waiting for the sweep. */
function wakeAfter(ctx: AppContext): void {
  ctx.escalation.wake(ctx);
}

/** Whether `userId` was paged for the incident (by a level or by hand): they may acknowledge it. */
export async function wasPaged(db: Kysely<DB>, incidentId: number, userId: number): Promise<boolean> {
  const r = await db.selectFrom('paging_pages').select('id').where('incident_id', '=', incidentId).where('user_id', '=', userId).limit(1).executeTakeFirst();
  return r !== undefined;
}

/**
 * GET /v1/auth/me/pages: the open, unacknowledged incidents the caller was paged for, in their
 * mode and in orgs they are still a member of, newest page first (what /field shows full-screen).
 */
export async function myPages(ctx: AppContext, actor: Actor) {
  const rows = await ctx.db
    .selectFrom('paging_pages as p')
    .innerJoin('incidents as i', 'i.id', 'p.incident_id')
    .innerJoin('memberships as m', (j) => j.onRef('m.org_id', '=', 'i.org_id').onRef('m.user_id', '=', 'p.user_id'))
    .select(['i.id', 'i.org_id', 'i.title', 'i.priority', 'i.location_name', (eb) => eb.fn.max('p.created_at').as('paged_at'), (eb) => eb.fn.max('p.level').as('level')])
    .where('p.user_id', '=', actor.userId)
    .where('i.livemode', '=', actor.mode === 'live' ? 1 : 0)
    .where('i.status', 'in', ['open', 'in_progress'])
    .where('i.acknowledged_at', 'is', null)
    .groupBy(['i.id', 'i.org_id', 'i.title', 'i.priority', 'i.location_name'])
    .orderBy('paged_at', 'desc')
    .limit(50)
    .execute();
  return {
    data: rows.map((r) => ({ incident_id: r.id, org_id: r.org_id, title: r.title, priority: r.priority, location_name: r.location_name, paged_at: String(r.paged_at), level: r.level === null ? null : Number(r.level) })),
  };
}
