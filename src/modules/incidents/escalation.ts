import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Priority } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { claimEscalation, findAckTimeouts, findOpeningDefaults, type AckTimeouts, type DueEscalation, type OpeningDefaults } from './escalation.repository.js';
import type { IncidentPatch, IncidentRow } from './incidents.repository.js';
import { isDone } from './sla.js';
import { recordTimeline } from './timeline.js';

/** An unacknowledged incident escalates at most this many times. */
export const MAX_ESCALATIONS = 3;

/** The acknowledgement timeout of a priority in this org, in minutes; null when it never escalates. */
export function timeoutOf(t: AckTimeouts, priority: Priority): number | null {
  return priority === 'urgent' ? t.urgent : priority === 'high' ? t.high : null;
}

/** The built-in escalation's first deadline of an incident of this priority whose clock starts at `from` (null: never). */
export function deadlineOf(t: AckTimeouts, priority: Priority, from: Date): string | null {
  const minutes = timeoutOf(t, priority);
  return minutes === null ? null : iso(new Date(from.getTime() + minutes * MINUTE));
}

/** When an unacknowledged incident of this priority, whose clock starts at `from`, first escalates (null: never). */
export async function ackDeadline(db: Kysely<DB>, orgId: number, priority: Priority, from: Date): Promise<string | null> {
  // Only urgent and high incidents escalate (timeoutOf): the others need no look-up of the setting.
  if (priority !== 'urgent' && priority !== 'high') return null;
  return deadlineOf(await findAckTimeouts(db, orgId), priority, from);
}

/**
 * How an incident opening starts escalating: which policy it follows (the opening's own; undefined:
 * the org's default; null: none) and its first deadline. With a policy, level 1 is due at once (the
 * paging walk fires it right after the commit); without one, the built-in escalation's clock runs.
 */
export async function openingEscalation(
  db: Kysely<DB>,
  orgId: number,
  policyId: number | null | undefined,
  priority: Priority,
  now: Date,
  defaults: (db: Kysely<DB>, orgId: number) => Promise<OpeningDefaults> = findOpeningDefaults,
): Promise<{ policyId: number | null; escalateAt: string | null }> {
  const needsDefaults = policyId === undefined || priority === 'urgent' || priority === 'high';
  const d = needsDefaults ? await defaults(db, orgId) : undefined;
  const chosen = policyId === undefined ? (d?.defaultPolicyId ?? null) : policyId;
  if (chosen !== null) return { policyId: chosen, escalateAt: iso(now) };
  return { policyId: null, escalateAt: d ? deadlineOf(d.timeouts, priority, now) : null };
}

/**
 * What an update does to acknowledgement and escalation. Without a policy (the built-in
 * escalation): a new assignee starts unacknowledged with a fresh escalation clock; an
 * unacknowledged incident whose priority changes, or that is reopened, gets its next step from now;
 * a resolved or closed one never escalates. With a policy (docs/paging.md): reassignment, reopening,
 * a raise to urgent or high, or a new policy start the walk again from level 1 at once; a fall to
 * normal or low stops further levels.
 */
export async function escalationPatch(db: Kysely<DB>, before: IncidentRow, patch: IncidentPatch, now: Date): Promise<IncidentPatch> {
  const status = patch.status ?? before.status;
  const priority = patch.priority ?? before.priority;
  const reassigned = patch.assignee_id !== undefined && patch.assignee_id !== before.assignee_id;
  if (isDone(status)) return isDone(before.status) || before.escalate_at === null ? {} : { escalate_at: null };
  const reopened = isDone(before.status);
  const policyId = patch.escalation_policy_id !== undefined ? patch.escalation_policy_id : before.escalation_policy_id;
  if (policyId !== null) {
    const restart = { acknowledged_at: null, acknowledged_by: null, escalation_level: 0, escalation_loop: 0, escalate_at: iso(now) };
    const newPolicy = patch.escalation_snapshot !== undefined && (patch.escalation_policy_id !== before.escalation_policy_id || patch.escalation_snapshot !== before.escalation_snapshot);
    if (reassigned || reopened) return restart;
    if (before.acknowledged_at !== null) return {};
    const raised = !isUrgent(before.priority) && isUrgent(priority);
    if (newPolicy || raised) return restart;
    if (isUrgent(before.priority) && !isUrgent(priority)) return { escalate_at: null };
    return {};
  }
  if (before.escalation_policy_id !== null) {
    // The policy was taken off: the built-in escalation from now.
    return { escalation_level: 0, escalation_loop: 0, escalate_at: before.acknowledged_at === null ? await ackDeadline(db, before.org_id, priority, now) : null };
  }
  if (reassigned) return { acknowledged_at: null, acknowledged_by: null, escalation_level: 0, escalate_at: await ackDeadline(db, before.org_id, priority, now) };
  if (before.acknowledged_at !== null) return {};
  if (priority !== before.priority || reopened) return { escalate_at: before.escalation_level >= MAX_ESCALATIONS ? null : await ackDeadline(db, before.org_id, priority, now) };
  return {};
}

const isUrgent = (p: Priority) => p === 'urgent' || p === 'high';

/**
 * The next step's time: one timeout after this one, or one timeout from now when the sweeper
 * comes late (after downtime), so missed steps are not fired back to back.
 */
function nextStepAt(e: DueEscalation, minutes: number, now: Date): string {
  const planned = Date.parse(e.escalate_at) + minutes * MINUTE;
  return iso(new Date(planned > now.getTime() ? planned : now.getTime() + minutes * MINUTE));
}

export interface EscalationStep {
  level: number;
  /** The timeout that ran out. */
  minutes: number;
}

/**
 * Claims the due escalation step of an incident in the caller's transaction, if nobody has: a
 * conditional update on the level and deadline read, so of any number of sweepers (on any number
 * of instances) exactly one takes it. The org's current timeout decides the next step; a timeout
 * turned off (null), or the last level reached, ends the escalation (undefined: no step taken).
 */
export async function claimEscalationStep(tx: Tx, e: DueEscalation, now: Date): Promise<EscalationStep | undefined> {
  const minutes = timeoutOf(await findAckTimeouts(tx.db, e.org_id), e.priority);
  const level = e.escalation_level + 1;
  if (minutes === null || level > MAX_ESCALATIONS) {
    await claimEscalation(tx.db, e, e.escalation_level, null);
    return undefined;
  }
  if (!(await claimEscalation(tx.db, e, level, level < MAX_ESCALATIONS ? nextStepAt(e, minutes, now) : null))) return undefined;
  return { level, minutes };
}

/** The `escalated` timeline event of a claimed step, naming whom it notified. */
export async function recordEscalation(ctx: AppContext, tx: Tx, e: DueEscalation, step: EscalationStep, notified: number[]): Promise<void> {
  await recordTimeline(ctx, tx, e, 'escalated', null, { level: step.level, timeout_minutes: step.minutes, assignee_id: e.assignee_id, notified });
}
