import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { zonedWords } from '../../lib/zoned-time.js';
import { queueEmail } from '../deliveries/email.js';
import { queueDelivery } from '../deliveries/outbox.js';
import type { IncidentPatch, IncidentRow } from '../incidents/incidents.repository.js';
import { isDone } from '../incidents/sla.js';
import { replyAddress } from '../inbound-email/reply-address.js';
import { findUserById } from '../users/users.repository.js';
import { ackDeadline } from './settings.js';

/**
 * What an update does to acknowledgement and escalation. A new assignee starts unacknowledged
 * with a fresh escalation clock; an unacknowledged incident whose priority changes, or that is
 * reopened, gets its next step from now; a resolved or closed one never escalates.
 */
export async function dispatchPatch(db: Kysely<DB>, before: IncidentRow, patch: IncidentPatch, now: Date): Promise<IncidentPatch> {
  const status = patch.status ?? before.status;
  const priority = patch.priority ?? before.priority;
  const reassigned = patch.assignee_id !== undefined && patch.assignee_id !== before.assignee_id;
  if (isDone(status)) return isDone(before.status) || before.escalate_at === null ? {} : { escalate_at: null };
  const reopened = isDone(before.status);
  if (reassigned) return { acknowledged_at: null, acknowledged_by: null, escalation_level: 0, escalate_at: await ackDeadline(db, before.org_id, priority, now) };
  if (before.acknowledged_at !== null) return {};
  if (priority !== before.priority || reopened) return { escalate_at: before.escalation_level >= MAX_ESCALATIONS ? null : await ackDeadline(db, before.org_id, priority, now) };
  return {};
}

/** An unacknowledged incident escalates at most this many times. */
export const MAX_ESCALATIONS = 3;

/**
 * Tells a new assignee, in the update's transaction: a push to their browsers and an email
 * (both through the outbox, so the update never waits on them), and `incident.assigned` on the
 * incident stream of the org (which the assignee, a member, receives on every stream of theirs).
 * Assigning oneself sends nothing: the assignee already knows.
 */
export async function notifyAssignee(ctx: AppContext, tx: Tx, actorId: number | null, incident: IncidentRow, view: unknown): Promise<void> {
  const assigneeId = incident.assignee_id;
  if (assigneeId === null) return;
  const mode = incident.livemode === 1 ? 'live' : 'test';
  ctx.events.publish(tx, { channel: 'incidents', orgId: incident.org_id, mode, type: 'incident.assigned', payload: view });
  if (assigneeId === actorId) return;
  const [assignee, by] = await Promise.all([findUserById(tx.db, assigneeId), actorId === null ? undefined : findUserById(tx.db, actorId)]);
  const url = `${ctx.config.publicUrl}/field#incident-${incident.id}`;
  const title = `Assigned to you: ${incident.title}`;
  const base = { topic: 'incident.assigned', mode, userId: assigneeId, orgId: incident.org_id } as const;
  await queueDelivery(ctx, tx, { ...base, kind: 'push', recipient: `user:${assigneeId}`, payload: { title, body: `${incident.priority} priority`, url, incident_id: incident.id } });
  if (!assignee) return;
  const where = incident.location_name ?? (incident.lat !== null && incident.lng !== null ? `${incident.lat}, ${incident.lng}` : 'no position given');
  // The time in the assignee's own zone and in words, as the SLA emails say it (issue 33).
  const at = zonedWords(iso(ctx.clock.now()), assignee.timezone);
  const text = `${by?.name ?? 'A dispatcher'} assigned you an incident.\n\n${incident.title}\nPriority: ${incident.priority}\nWhere: ${where}\nAssigned: ${at.full} (${at.zone})\n\nAcknowledge it: ${url}`;
  await queueEmail(ctx, tx, { ...base, to: assignee.email, replyTo: replyAddress(ctx, incident.id), subject: title, text });
}
