import type { AppContext } from '../context.js';
import type { Tx } from '../db/transaction.js';
import { MINUTE, iso } from '../lib/clock.js';
import { queueEmail } from '../modules/deliveries/email.js';
import { replyAddress } from '../modules/inbound-email/reply-address.js';
import { queueDelivery } from '../modules/deliveries/outbox.js';
import { MAX_ESCALATIONS } from '../modules/dispatch/assignment.js';
import { claimEscalation, dueEscalations, orgManagers, type DueEscalation } from '../modules/dispatch/escalation.repository.js';
import { findAckTimeouts } from '../modules/dispatch/settings.repository.js';
import { timeoutOf } from '../modules/dispatch/settings.js';
import { recordTimeline } from '../modules/dispatch/timeline.js';

const BATCH = 500;

/**
 * The next step's time: one timeout after this one, or one timeout from now when the sweeper
 * comes late (after downtime), so missed steps are not fired back to back.
 */
function nextStepAt(e: DueEscalation, minutes: number, now: Date): string {
  const planned = Date.parse(e.escalate_at) + minutes * MINUTE;
  return iso(new Date(planned > now.getTime() ? planned : now.getTime() + minutes * MINUTE));
}

async function tellManagers(ctx: AppContext, tx: Tx, e: DueEscalation, level: number): Promise<number[]> {
  const mode = e.livemode === 1 ? 'live' : 'test';
  const url = `${ctx.config.publicUrl}/app/incidents/${e.id}`;
  const who = e.assignee_id === null ? 'nobody is assigned' : 'the assignee has not acknowledged it';
  const subject = `Escalation ${level}/${MAX_ESCALATIONS}: ${e.priority} incident "${e.title}"`;
  const managers = await orgManagers(tx.db, e.org_id);
  for (const m of managers) {
    const base = { topic: 'incident.escalated', mode, userId: m.user_id, orgId: e.org_id } as const;
    await queueDelivery(ctx, tx, { ...base, kind: 'push', recipient: `user:${m.user_id}`, payload: { title: subject, body: who, url, incident_id: e.id } });
    await queueEmail(ctx, tx, { ...base, to: m.email, replyTo: replyAddress(ctx, e.id), subject, text: `${subject}\n\nIt is unacknowledged: ${who}.\n\n${url}` });
  }
  return managers.map((m) => m.user_id);
}

/**
 * Escalates the urgent and high incidents nobody acknowledged in time: push and email to the
 * org's owners and admins and an `escalated` timeline event, again after each further timeout, up
 * to MAX_ESCALATIONS times. Each step is claimed with a conditional update in the transaction of
 * its effects, so it happens once however many sweepers run. The org's current timeout decides
 * the next step; a timeout turned off (null) ends the escalation. Returns the steps taken.
 */
export async function sweepEscalations(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  let steps = 0;
  for (const e of await dueEscalations(ctx.db, iso(now), BATCH)) {
    await ctx.transaction(async (tx) => {
      const minutes = timeoutOf(await findAckTimeouts(tx.db, e.org_id), e.priority);
      const level = e.escalation_level + 1;
      if (minutes === null || level > MAX_ESCALATIONS) {
        await claimEscalation(tx.db, e, e.escalation_level, null);
        return;
      }
      if (!(await claimEscalation(tx.db, e, level, level < MAX_ESCALATIONS ? nextStepAt(e, minutes, now) : null))) return;
      const notified = await tellManagers(ctx, tx, e, level);
      await recordTimeline(ctx, tx, e, 'escalated', null, { level, timeout_minutes: minutes, assignee_id: e.assignee_id, notified });
      steps += 1;
    });
  }
  return steps;
}
