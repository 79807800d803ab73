import type { Kysely } from 'kysely';
import { FixedQuery } from '../../db/fixed.js';
import type { DB, Flag, Priority } from '../../db/schema.js';

export interface AckTimeouts {
  urgent: number | null;
  high: number | null;
}

/** PagerDuty-like defaults: an urgent incident nobody acknowledged for 5 minutes escalates, a high one after 15. */
export const DEFAULT_ACK_TIMEOUTS: Readonly<AckTimeouts> = { urgent: 5, high: 15 };

/** Compiled once (db/fixed.ts): every urgent or high incident's creation reads it. */
const ACK_TIMEOUTS = new FixedQuery<{ orgId: number }>((db, mark) =>
  db.selectFrom('dispatch_settings').select(['ack_urgent_minutes', 'ack_high_minutes']).where('org_id', '=', mark('orgId')),
);

/** The org's acknowledgement timeouts (the escalation clock of its incidents), in minutes. */
export async function findAckTimeouts(db: Kysely<DB>, orgId: number): Promise<AckTimeouts> {
  const row = (await ACK_TIMEOUTS.execute<{ ack_urgent_minutes: number | null; ack_high_minutes: number | null }>(db, { orgId })).rows[0];
  return row ? { urgent: row.ack_urgent_minutes, high: row.ack_high_minutes } : { ...DEFAULT_ACK_TIMEOUTS };
}

/** Writes the whole setting (the caller merged the change into the current one). */
export async function saveAckTimeouts(db: Kysely<DB>, orgId: number, t: AckTimeouts, nowIso: string): Promise<void> {
  const values = { ack_urgent_minutes: t.urgent, ack_high_minutes: t.high, updated_at: nowIso };
  await db
    .insertInto('dispatch_settings')
    .values({ org_id: orgId, ...values })
    .onConflict((oc) => oc.column('org_id').doUpdateSet(values))
    .execute();
}

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
