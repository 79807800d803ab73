import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { forbidden } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import { acknowledgeIncident, findVisible, type AckVia, recordTimeline, toIncident, touchIncident, type Incident, type IncidentRow, type TimelineEvent } from '../incidents/index.js';
import { atLeast, orgAccess } from '../orgs/index.js';
import type { ProgressBody } from './dispatch.schemas.js';

/**
 * The assignee, or an org admin or owner; for an acknowledgement also anyone paged for it
 * (docs/paging.md). 403 for anyone else in the org; 404 outside it.
 */
async function responderAccess(ctx: AppContext, actor: Actor, id: number, pagedMay = false): Promise<IncidentRow> {
  const incident = await findVisible(ctx, actor, id);
  const { role } = await orgAccess(ctx, actor, { id: incident.org_id }, { write: true });
  if (incident.assignee_id === actor.userId || atLeast(role, 'admin')) return incident;
  if (pagedMay && (await ctx.escalation.wasPaged(ctx.db, incident.id, actor.userId))) return incident;
  throw forbidden();
}

/** A request's own way: a session is the web app, a key (or a tracker's token) the API. */
const viaOf = (actor: Actor): AckVia => (actor.via === 'session' ? 'web' : 'api');

/**
 * Acknowledges once (modules/incidents, acknowledgeIncident): the first call sets
 * `acknowledged_at/by`, stops escalation and moves `open` to `in_progress`; later calls change nothing.
 */
export async function acknowledge(ctx: AppContext, actor: Actor, id: number): Promise<Incident> {
  const incident = await responderAccess(ctx, actor, id, true);
  if (incident.acknowledged_at !== null) return toIncident(ctx, incident);
  return toIncident(ctx, await ctx.transaction((tx) => acknowledgeIncident(ctx, tx, incident, { userId: actor.userId, via: viaOf(actor) })));
}

/**
 * "En route" or "on scene", with the phone's position when it has one: a timeline event. The
 * assignee reporting progress has evidently seen the incident, so it also acknowledges it.
 */
export async function reportProgress(ctx: AppContext, actor: Actor, id: number, input: ProgressBody, idem?: EffectRecorder | null): Promise<TimelineEvent> {
  const incident = await responderAccess(ctx, actor, id);
  return ctx.transaction(async (tx) => {
    if (incident.acknowledged_at === null && incident.assignee_id === actor.userId) await acknowledgeIncident(ctx, tx, incident, { userId: actor.userId, via: viaOf(actor) });
    const position = { lat: input.lat ?? null, lng: input.lng ?? null, accuracy: input.accuracy ?? null };
    const event = await recordTimeline(ctx, tx, incident, input.state, actor.userId, position);
    await touchIncident(ctx, tx, incident);
    return recorded(tx, idem, event);
  });
}
