import type { AppContext } from '../../context.js';
import type { Flag, TimelineType } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { publishIncident } from './publish.js';
import { insertEvent, listEvents, type TimelineRow } from './timeline.repository.js';
import { noteReportFacts } from './report-facts.repository.js';
import type { TimelineEvent } from './timeline.schemas.js';

export interface TimelineIncident {
  id: number;
  org_id: number;
  livemode: Flag;
}

export function toTimelineEvent(r: TimelineRow): TimelineEvent {
  return {
    id: r.id,
    incident_id: r.incident_id,
    type: r.type,
    at: r.created_at,
    actor: r.actor_id === null ? null : { user_id: r.actor_id, user_name: r.actor_name ?? '' },
    data: r.data,
  };
}

/**
 * Appends one event to an incident's timeline inside the caller's transaction (so it exists
 * exactly when its cause does), broadcasts it as `incident.timeline` once that commits, and hands
 * it to the incident subscriptions (`ctx.subscriptions`), which queue their webhooks in the same
 * transaction when one wants it.
 */
export async function recordTimeline(
  ctx: AppContext,
  tx: Tx,
  incident: TimelineIncident,
  type: TimelineType,
  actorId: number | null,
  data: Record<string, unknown> = {},
  /** The name of `actorId` when the caller has it (saves reading it back). */
  actorName?: string,
): Promise<TimelineEvent> {
  const at = iso(ctx.clock.now());
  const row = await insertEvent(tx.db, {
    incident_id: incident.id,
    org_id: incident.org_id,
    livemode: incident.livemode,
    type,
    actor_id: actorId,
    data,
    created_at: at,
  }, actorName);
  await noteReportFacts(tx.db, incident.id, type, data, at);
  const event = toTimelineEvent(row);
  publishIncident(ctx, tx, incident, 'incident.timeline', event);
  // Incident subscriptions (modules/subscriptions, above this module): their deliveries join this transaction.
  await ctx.subscriptions.onTimeline(ctx, tx, incident, event);
  return event;
}

export async function timelineOf(ctx: AppContext, incidentId: number, types?: readonly TimelineType[]): Promise<TimelineEvent[]> {
  return (await listEvents(ctx.db, incidentId, types)).map(toTimelineEvent);
}
