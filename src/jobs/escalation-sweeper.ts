import type { AppContext } from '../context.js';
import type { Tx } from '../db/transaction.js';
import { iso } from '../lib/clock.js';
import { queueEmail } from '../modules/deliveries/index.js';
import { queueDelivery } from '../modules/deliveries/index.js';
import { claimEscalationStep, dueEscalations, MAX_ESCALATIONS, recordEscalation, replyAddress, type DueEscalation } from '../modules/incidents/index.js';
import { orgManagers } from '../modules/orgs/index.js';

const BATCH = 500;

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
 * to MAX_ESCALATIONS times. Each step is claimed (modules/incidents, claimEscalationStep) in the
 * transaction of its effects, so it happens once however many sweepers run. Returns the steps taken.
 */
export async function sweepEscalations(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  let steps = 0;
  for (const e of await dueEscalations(ctx.db, iso(now), BATCH)) {
    await ctx.transaction(async (tx) => {
      const step = await claimEscalationStep(tx, e, now);
      if (!step) return;
      const notified = await tellManagers(ctx, tx, e, step.level);
      await recordEscalation(ctx, tx, e, step, notified);
      steps += 1;
    });
  }
  return steps;
}
