import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { claimAcknowledgement, lockIncident, updateIncident, type IncidentRow } from './incidents.repository.js';
import { applyChange, toIncident } from './incidents.service.js';
import { publishIncident } from './publish.js';
import { recordTimeline } from './timeline.js';

/** How an acknowledgement came (the timeline's `acknowledged {via}`): the web app, the API, a notification's channel, or the assignee's position on arrival. */
export type AckVia = 'web' | 'api' | 'push' | 'email' | 'sms' | 'voice' | 'position';

export interface Acknowledger {
  /** The user acknowledging; null for a tool (an integration). */
  userId: number | null;
  /** How a person acknowledged (recorded in the default event data). */
  via?: AckVia;
  /** The `acknowledged` event's data; by default the assignee and escalation level it was acknowledged at. */
  data?: Record<string, unknown>;
}

/**
 * The one acknowledgement path (a responder's POST .../acknowledge, a progress report, an
 * integration's `acknowledge`), in the caller's transaction. The first acknowledgement sets
 * `acknowledged_at/by` and stops escalation (a conditional update: of concurrent calls exactly one
 * claims it) and writes `acknowledged`; under a policy, or when they were paged for it, the person
 * acknowledging becomes the assignee (`assigned {by: "acknowledgement"}`); an incident still `open` then goes to `in_progress` through
 * the change path (applyChange: `incident.updated`, `status_changed`). An acknowledgement that
 * changed the row is broadcast as `incident.updated` either way. Returns the incident as it is now.
 */
export async function acknowledgeIncident(ctx: AppContext, tx: Tx, incident: IncidentRow, by: Acknowledger): Promise<IncidentRow> {
  let claimed = await claimAcknowledgement(tx.db, incident.id, by.userId, iso(ctx.clock.now()));
  if (claimed) {
    await recordTimeline(ctx, tx, claimed, 'acknowledged', by.userId, by.data ?? { assignee_id: claimed.assignee_id, escalation_level: claimed.escalation_level, ...(by.via ? { via: by.via } : {}) });
    // Every notification of a page not yet sent stops here (modules/paging, through ctx.escalation).
    await ctx.escalation.cancelPending(ctx, tx, claimed.id, 'acknowledged');
    // "I have it": under a policy, or when paged for it, whoever acknowledges becomes the assignee.
    const takeOver = by.userId !== null && claimed.assignee_id !== by.userId && (claimed.escalation_policy_id !== null || (await ctx.escalation.wasPaged(tx.db, claimed.id, by.userId)));
    if (takeOver && by.userId !== null) {
      const previous = claimed.assignee_id;
      claimed = await updateIncident(tx.db, claimed, { assignee_id: by.userId });
      await recordTimeline(ctx, tx, claimed, 'assigned', by.userId, { assignee_id: by.userId, previous_assignee_id: previous, by: 'acknowledgement' });
    }
  }
  const current = claimed ?? (await lockIncident(tx.db, ctx.database.dialect === 'postgres', incident.id)) ?? incident;
  if (current.status === 'open') return applyChange(ctx, tx, current, { status: 'in_progress' }, by.userId);
  if (claimed) publishIncident(ctx, tx, claimed, 'incident.updated', toIncident(ctx, claimed));
  return current;
}
