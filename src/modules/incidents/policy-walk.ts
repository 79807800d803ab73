// The escalation walk's state on the incident (issue #36): which level of the incident's copy of its
// policy fired last (`escalation_level`, 0 before the first), how many times the policy ran again
// (`escalation_loop`) and when the next level is due (`escalate_at`). Paging decides whom a level
// reaches (modules/paging walk.ts); this file owns the incident's side: reading due walks, and moving
// the state with one conditional update, so each step happens once across instances.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Flag, IncidentStatus, Priority } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import type { IncidentRow } from './incidents.repository.js';
import { toIncident } from './incidents.service.js';
import { publishIncident } from './publish.js';
import { recordTimeline } from './timeline.js';
import { snapshotOf, type PolicySnapshot } from './escalation.repository.js';

export type { PolicyLevel, PolicySnapshot, PolicyTarget } from './escalation.repository.js';

/** Urgent and high incidents escalate through the levels; normal and low ones page one level only. */
export const escalates = (priority: Priority): boolean => priority === 'urgent' || priority === 'high';

export interface WalkIncident {
  id: number;
  org_id: number;
  livemode: Flag;
  title: string;
  priority: Priority;
  status: IncidentStatus;
  location_name: string | null;
  lat: number | null;
  lng: number | null;
  assignee_id: number | null;
  acknowledged_at: string | null;
  escalation_level: number;
  escalation_loop: number;
  escalate_at: string | null;
  policy: PolicySnapshot;
}

export interface WalkPosition {
  level: number;
  loop: number;
}

/**
 * The level that fires after `at`: the next one, or level 1 of the next round while the policy has
 * repeats left (`wrap`: even when it has none, for an escalation asked for by hand); null when the
 * policy is done.
 */
export function nextPosition(p: PolicySnapshot, at: WalkPosition, wrap = false): WalkPosition | null {
  if (at.level < p.levels.length) return { level: at.level + 1, loop: at.loop };
  if (at.loop < p.repeat || wrap) return { level: 1, loop: at.loop + 1 };
  return null;
}

const WALK_COLUMNS = ['id', 'org_id', 'livemode', 'title', 'priority', 'status', 'location_name', 'lat', 'lng', 'assignee_id', 'acknowledged_at', 'escalation_level', 'escalation_loop', 'escalate_at', 'escalation_snapshot'] as const;
type WalkRow = Pick<IncidentRow, (typeof WALK_COLUMNS)[number]>;

function walkOf(r: WalkRow): WalkIncident | undefined {
  const policy = snapshotOf(r.escalation_snapshot);
  if (!policy) return undefined;
  const { escalation_snapshot: _, ...rest } = r;
  return { ...rest, policy };
}

/** Open, unacknowledged incidents following a policy whose next level is due, oldest due first. */
export async function duePolicyWalks(db: Kysely<DB>, nowIso: string, limit: number): Promise<WalkIncident[]> {
  const rows = await db
    .selectFrom('incidents')
    .select(WALK_COLUMNS)
    .where('escalate_at', '<=', nowIso)
    .where('escalation_policy_id', 'is not', null)
    .where('acknowledged_at', 'is', null)
    .where('status', 'in', ['open', 'in_progress'])
    .orderBy('escalate_at')
    .limit(limit)
    .execute();
  return rows.flatMap((r) => walkOf(r) ?? []);
}

/** The walk of one incident (a hand-asked escalation); undefined without a policy. */
export async function walkById(db: Kysely<DB>, id: number): Promise<WalkIncident | undefined> {
  const r = await db.selectFrom('incidents').select(WALK_COLUMNS).where('id', '=', id).executeTakeFirst();
  return r ? walkOf(r) : undefined;
}

/**
 * Moves the walk from the state `e` was read in to `to`, if nobody moved it since: one conditional
 * update (level, loop, deadline and acknowledgement as read, still open), so of any number of
 * walkers on any number of instances exactly one takes a step. `clearAck`: an escalation asked for
 * by hand takes an acknowledged incident back (as PagerDuty's "escalate" re-triggers it). Answers the
 * row as it is now (broadcast as `incident.updated`), or undefined when another walker took it.
 */
export async function advanceWalk(ctx: AppContext, tx: Tx, e: WalkIncident, to: WalkPosition & { escalateAt: string | null }, clearAck = false): Promise<IncidentRow | undefined> {
  let q = tx.db
    .updateTable('incidents')
    .set({ escalation_level: to.level, escalation_loop: to.loop, escalate_at: to.escalateAt, ...(clearAck ? { acknowledged_at: null, acknowledged_by: null } : {}) })
    .where('id', '=', e.id)
    .where('escalation_level', '=', e.escalation_level)
    .where('escalation_loop', '=', e.escalation_loop)
    .where('status', 'in', ['open', 'in_progress']);
  q = e.escalate_at === null ? q.where('escalate_at', 'is', null) : q.where('escalate_at', '=', e.escalate_at);
  q = e.acknowledged_at === null ? q.where('acknowledged_at', 'is', null) : q.where('acknowledged_at', '=', e.acknowledged_at);
  const row = await q.returningAll().executeTakeFirst();
  if (row) publishIncident(ctx, tx, row, 'incident.updated', toIncident(ctx, row));
  return row;
}

/**
 * Makes the first person a policy paged the assignee of an incident nobody is assigned to (an
 * `assigned` timeline event, `by: "paging"`), in the caller's transaction. No reassignment notice
 * (they are being paged) and the escalation goes on: this is not a person's reassignment.
 */
export async function assignPaged(ctx: AppContext, tx: Tx, incidentId: number, userId: number): Promise<IncidentRow | undefined> {
  const row = await tx.db
    .updateTable('incidents')
    .set({ assignee_id: userId, updated_at: iso(ctx.clock.now()) })
    .where('id', '=', incidentId)
    .where('assignee_id', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  publishIncident(ctx, tx, row, 'incident.updated', toIncident(ctx, row));
  await recordTimeline(ctx, tx, row, 'assigned', null, { assignee_id: userId, previous_assignee_id: null, by: 'paging' });
  return row;
}
