import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { forbidden } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import * as incidents from '../incidents/incidents.repository.js';
import type { IncidentRow } from '../incidents/incidents.repository.js';
import type { Incident } from '../incidents/incidents.schemas.js';
import { CHANNEL, findVisible, toIncident } from '../incidents/incidents.service.js';
import { atLeast, orgAccess } from '../orgs/access.js';
import { cancelPending } from '../paging/index.js';
import { claimAcknowledgement } from './acknowledge.repository.js';
import type { ProgressBody } from './dispatch.schemas.js';
import { recordTimeline } from './timeline.js';
import type { TimelineEvent } from './timeline.schemas.js';

/** The assignee, or an org admin or owner (403 for anyone else in the org; 404 outside it). */
async function responderAccess(ctx: AppContext, actor: Actor, id: number): Promise<IncidentRow> {
  const incident = await findVisible(ctx, actor, id);
  const { role } = await orgAccess(ctx, actor, { id: incident.org_id }, { write: true });
  if (incident.assignee_id !== actor.userId && !atLeast(role, 'admin')) throw forbidden();
  return incident;
}

/** How an acknowledgement came (the timeline's `acknowledged {via}`): the web app, the API, or a notification's channel. */
export type AckVia = 'web' | 'api' | 'push' | 'email' | 'sms' | 'voice';

/** A request's own way: a session is the web app, a key (or a tracker's token) the API. */
const viaOf = (actor: Actor): AckVia => (actor.via === 'session' ? 'web' : 'api');

/**
 * Acknowledges in the caller's transaction, once: the first call sets `acknowledged_at/by`, stops
 * escalation, moves `open` to `in_progress` and writes `acknowledged` (and `status_changed`);
 * later calls change nothing. Returns the incident as it is now. Paging's action tokens call it
 * for the person paged, with the channel that reached them as `via`.
 */
export async function acknowledgeIn(ctx: AppContext, tx: Tx, actor: Actor, incident: IncidentRow, via: AckVia = viaOf(actor)): Promise<IncidentRow> {
  const now = iso(ctx.clock.now());
  const claimed = await claimAcknowledgement(tx.db, incident.id, actor.userId, now);
  if (!claimed) return (await incidents.findIncident(tx.db, { orgIds: [incident.org_id], mode: actor.mode }, incident.id)) ?? incident;
  let after = claimed;
  await recordTimeline(ctx, tx, after, 'acknowledged', actor.userId, { assignee_id: after.assignee_id, escalation_level: after.escalation_level, via });
  // Every notification of a page not yet sent stops here (paging).
  await cancelPending(ctx, tx, after.id, 'acknowledged');
  if (after.status === 'open') {
    after = await incidents.updateIncident(tx.db, claimed, { status: 'in_progress', updated_at: now });
    await recordTimeline(ctx, tx, after, 'status_changed', actor.userId, { from: 'open', to: 'in_progress' });
  }
  ctx.events.publish(tx, { channel: CHANNEL, orgId: after.org_id, mode: actor.mode, type: 'incident.updated', payload: toIncident(ctx, after) });
  return after;
}

export async function acknowledge(ctx: AppContext, actor: Actor, id: number): Promise<Incident> {
  const incident = await responderAccess(ctx, actor, id);
  if (incident.acknowledged_at !== null) return toIncident(ctx, incident);
  return toIncident(ctx, await ctx.transaction((tx) => acknowledgeIn(ctx, tx, actor, incident)));
}

/**
 * "En route" or "on scene", with the phone's position when it has one: a timeline event. The
 * assignee reporting progress has evidently seen the incident, so it also acknowledges it.
 */
export async function reportProgress(ctx: AppContext, actor: Actor, id: number, input: ProgressBody, idem?: EffectRecorder | null): Promise<TimelineEvent> {
  const incident = await responderAccess(ctx, actor, id);
  return ctx.transaction(async (tx) => {
    if (incident.acknowledged_at === null && incident.assignee_id === actor.userId) await acknowledgeIn(ctx, tx, actor, incident);
    const position = { lat: input.lat ?? null, lng: input.lng ?? null, accuracy: input.accuracy ?? null };
    const event = await recordTimeline(ctx, tx, incident, input.state, actor.userId, position);
    await incidents.touchIncident(tx.db, incident, iso(ctx.clock.now()));
    return recorded(tx, idem, event);
  });
}
