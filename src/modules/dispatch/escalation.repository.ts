import type { Kysely } from 'kysely';
import type { DB, Flag, Priority } from '../../db/schema.js';

export interface DueEscalation {
  id: number;
  org_id: number;
  livemode: Flag;
  title: string;
  priority: Priority;
  assignee_id: number | null;
  escalation_level: number;
  escalate_at: string;
}

/** Unacknowledged, unresolved incidents whose next escalation step is due, oldest due first. */
export async function dueEscalations(db: Kysely<DB>, nowIso: string, limit: number): Promise<DueEscalation[]> {
  const rows = await db
    .selectFrom('incidents')
    .select(['id', 'org_id', 'livemode', 'title', 'priority', 'assignee_id', 'escalation_level', 'escalate_at'])
    .where('escalate_at', '<=', nowIso)
    .where('acknowledged_at', 'is', null)
    .where('status', 'in', ['open', 'in_progress'])
    .orderBy('escalate_at')
    .limit(limit)
    .execute();
  return rows as DueEscalation[];
}

/**
 * Takes one escalation step if nobody has: the update matches only while the incident is still
 * at the level and deadline the sweeper read and unacknowledged, so of any number of sweepers
 * (on any number of instances) exactly one moves it. `nextAt` null: no further step.
 */
export async function claimEscalation(db: Kysely<DB>, e: DueEscalation, nextLevel: number, nextAt: string | null): Promise<boolean> {
  const r = await db
    .updateTable('incidents')
    .set({ escalation_level: nextLevel, escalate_at: nextAt })
    .where('id', '=', e.id)
    .where('escalation_level', '=', e.escalation_level)
    .where('escalate_at', '=', e.escalate_at)
    .where('acknowledged_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Owners and admins of the org: whom an escalation reaches. */
export async function orgManagers(db: Kysely<DB>, orgId: number) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name'])
    .where('m.org_id', '=', orgId)
    .where('m.role', 'in', ['owner', 'admin'])
    .orderBy('m.user_id')
    .execute();
}
