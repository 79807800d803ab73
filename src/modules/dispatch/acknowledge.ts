import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import type { Tx } from '../../db/transaction.js';
import { conflict, forbidden } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import { acknowledgeIncident, findVisible, incidentById, type AckVia, recordTimeline, timelineOf, toIncident, touchIncident, type Incident, type IncidentRow, type TimelineEvent } from '../incidents/index.js';
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
 * The one way progress is recorded, by a tap or by position (arrival.ts), in the caller's
 * transaction: the assignee reporting `en_route` or `on_scene` has evidently seen the incident, so it
 * also acknowledges it if nobody had; then the timeline event and `updated_at`.
 */
async function progressIn(ctx: AppContext, tx: Tx, incident: IncidentRow, userId: number, via: AckVia, state: 'en_route' | 'on_scene' | 'departed', data: Record<string, unknown>): Promise<TimelineEvent> {
  if (state !== 'departed' && incident.acknowledged_at === null && incident.assignee_id === userId) await acknowledgeIncident(ctx, tx, incident, { userId, via });
  const event = await recordTimeline(ctx, tx, incident, state, userId, data);
  await touchIncident(ctx, tx, incident);
  return event;
}

/**
 * "En route" or "on scene", with the phone's position when it has one: a timeline event. The
 * assignee reporting progress has evidently seen the incident, so it also acknowledges it.
 */
export async function reportProgress(ctx: AppContext, actor: Actor, id: number, input: ProgressBody, idem?: EffectRecorder | null): Promise<TimelineEvent> {
  const incident = await responderAccess(ctx, actor, id);
  return ctx.transaction(async (tx) => {
    const position = { lat: input.lat ?? null, lng: input.lng ?? null, accuracy: input.accuracy ?? null };
    const event = await progressIn(ctx, tx, incident, actor.userId, viaOf(actor), input.state, position);
    return recorded(tx, idem, event);
  });
}

/**
 * Arrival or departure by position (arrival.ts), in the transaction that claimed it: recorded as the
 * tap would be, with `{source: "position", lat, lng, accuracy}`, if the incident is still open and
 * assigned to them (the per-instance cache may be a moment behind). Answers the event, or null.
 */
export async function recordProgress(ctx: AppContext, tx: Tx, incidentId: number, userId: number, state: 'on_scene' | 'departed', data: Record<string, unknown>): Promise<TimelineEvent | null> {
  const incident = await incidentById(tx.db, incidentId, ctx.database.dialect === 'postgres');
  if (!incident || incident.assignee_id !== userId || (incident.status !== 'open' && incident.status !== 'in_progress')) return null;
  return progressIn(ctx, tx, incident, userId, 'position', state, data);
}

/**
 * Takes back an automatic arrival (`on_scene {source: "position"}`): the assignee (or an admin)
 * says they are not on scene after all. Records `on_scene_undone {event_id}`; 409 when the incident's
 * latest arrival is not an automatic one, or was already taken back.
 */
export async function undoArrival(ctx: AppContext, actor: Actor, id: number): Promise<TimelineEvent> {
  const incident = await responderAccess(ctx, actor, id);
  return ctx.transaction(async (tx) => {
    const locked = (await incidentById(tx.db, incident.id, ctx.database.dialect === 'postgres')) ?? incident;
    const events = await timelineOf({ ...ctx, db: tx.db }, locked.id, ['on_scene', 'on_scene_undone']);
    const last = [...events].reverse().find((e) => e.type === 'on_scene' || e.type === 'on_scene_undone');
    if (!last || last.type !== 'on_scene' || (last.data as { source?: unknown }).source !== 'position') throw conflict('No automatic arrival to undo');
    const event = await recordTimeline(ctx, tx, locked, 'on_scene_undone', actor.userId, { event_id: last.id });
    await touchIncident(ctx, tx, locked);
    return event;
  });
}
