import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { zonedWords } from '../../lib/zoned-time.js';
import { queueEmail } from '../deliveries/index.js';
import { phoneAlert, queueDelivery, queueDeliveries } from '../deliveries/index.js';
import { findUserById } from '../users/index.js';
import type { IncidentRow } from './incidents.repository.js';
import type { Incident } from './incidents.schemas.js';
import { publishIncident } from './publish.js';
import { replyAddress } from './reply-address.js';

/**
 * Tells whom a new incident is for (its creator through the API, an integration's default
 * assignee), in the creation's transaction: a push to their browsers and a phone alert, queued in
 * one INSERT (the phone alert's daily cap decided first, under the user's lock).
 */
export async function creationNotice(ctx: AppContext, tx: Tx, incident: IncidentRow, to: { userId: number; phone: string | null }): Promise<void> {
  const note = { title: `New ${incident.priority} incident`, body: incident.title, url: `${ctx.config.publicUrl}/app/incidents/${incident.id}`, incident_id: incident.id };
  // Object literals written out: a spread followed by more properties costs about 1 us per property on Node 20.
  const topic = 'incident.created';
  const mode = incident.livemode === 1 ? 'live' : 'test';
  const { userId } = to;
  const orgId = incident.org_id;
  const phone = await phoneAlert(ctx, tx, { topic, mode, userId, orgId, phone: to.phone, payload: note });
  await queueDeliveries(ctx, tx, [{ topic, mode, userId, orgId, kind: 'push', recipient: `user:${userId}`, payload: note }, phone]);
}

/**
 * Tells a new assignee, in the update's transaction: a push to their browsers and an email
 * (both through the outbox, so the update never waits on them), and `incident.assigned` on the
 * incident stream of the org (which the assignee, a member, receives on every stream of theirs).
 * Assigning oneself sends nothing: the assignee already knows.
 */
export async function notifyAssignee(ctx: AppContext, tx: Tx, actorId: number | null, incident: IncidentRow, view: Incident): Promise<void> {
  const assigneeId = incident.assignee_id;
  if (assigneeId === null) return;
  const mode = incident.livemode === 1 ? 'live' : 'test';
  publishIncident(ctx, tx, incident, 'incident.assigned', view);
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
