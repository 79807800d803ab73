import type { Kysely } from 'kysely';
import { FixedQuery } from '../../db/fixed.js';
import type { DB, Flag, Priority } from '../../db/schema.js';

export interface AckTimeouts {
  urgent: number | null;
  high: number | null;
}

/** PagerDuty-like defaults: an urgent incident nobody acknowledged for 5 minutes escalates, a high one after 15. */
export const DEFAULT_ACK_TIMEOUTS: Readonly<AckTimeouts> = { urgent: 5, high: 15 };

/** Compiled once (db/fixed.ts): every incident's creation reads it. */
const DISPATCH_DEFAULTS = new FixedQuery<{ orgId: number }>((db, mark) =>
  db.selectFrom('dispatch_settings').select(['ack_urgent_minutes', 'ack_high_minutes', 'default_escalation_policy_id']).where('org_id', '=', mark('orgId')),
);

/** What an opening incident takes from its org's dispatch settings: the acknowledgement timeouts and the default escalation policy. */
export interface OpeningDefaults {
  timeouts: AckTimeouts;
  defaultPolicyId: number | null;
}

/** The org's acknowledgement timeouts and default escalation policy (one read of its dispatch settings). */
export async function findOpeningDefaults(db: Kysely<DB>, orgId: number): Promise<OpeningDefaults> {
  const row = (await DISPATCH_DEFAULTS.execute<{ ack_urgent_minutes: number | null; ack_high_minutes: number | null; default_escalation_policy_id: number | null }>(db, { orgId })).rows[0];
  return row ? { timeouts: { urgent: row.ack_urgent_minutes, high: row.ack_high_minutes }, defaultPolicyId: row.default_escalation_policy_id } : { timeouts: { ...DEFAULT_ACK_TIMEOUTS }, defaultPolicyId: null };
}

/** The org's acknowledgement timeouts (the escalation clock of its incidents), in minutes. */
export async function findAckTimeouts(db: Kysely<DB>, orgId: number): Promise<AckTimeouts> {
  return (await findOpeningDefaults(db, orgId)).timeouts;
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

/** Unacknowledged, unresolved incidents without a policy whose next built-in escalation step is due, oldest due first. */
export async function dueEscalations(db: Kysely<DB>, nowIso: string, limit: number): Promise<DueEscalation[]> {
  const rows = await db
    .selectFrom('incidents')
    .select(['id', 'org_id', 'livemode', 'title', 'priority', 'assignee_id', 'escalation_level', 'escalate_at'])
    .where('escalate_at', '<=', nowIso)
    .where('acknowledged_at', 'is', null)
    .where('status', 'in', ['open', 'in_progress'])
    // Incidents following a policy are walked by paging (policy-walk.ts).
    .where('escalation_policy_id', 'is', null)
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

/**
 * Whom a level pages: a member, whoever is on call in a schedule, a team's active members, or
 * (`nearest`, issue #38) the `count` nearest members with a live beacon to the incident, within
 * `within_m` metres when given, counting only those on call in `schedule_id` or active in `team_id`.
 */
export type PolicyTarget =
  | { type: 'user' | 'schedule' | 'team'; id: number }
  | { type: 'nearest'; count: number; within_m?: number; schedule_id?: number; team_id?: number };
export interface PolicyLevel {
  delay_minutes: number;
  targets: PolicyTarget[];
}
/** The copy of a policy an incident follows (`escalation_snapshot`), taken when the policy was set. */
export interface PolicySnapshot {
  name: string;
  repeat: number;
  levels: PolicyLevel[];
}

/** The snapshot column as a value (null: no policy). */
export function snapshotOf(text: string | null): PolicySnapshot | null {
  return text === null ? null : (JSON.parse(text) as PolicySnapshot);
}

