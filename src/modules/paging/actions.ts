import type { AppContext } from '../../context.js';
import { notFound } from '../../lib/errors.js';
// The incident's own change paths (no public surface of incidents or dispatch yet): acknowledging
// and resolving through them keeps the timeline, counters, escalation and broadcasts right.
import { acknowledgeIncident, applyChange, incidentById, type IncidentRow } from '../incidents/index.js';
import { findMember } from '../orgs/index.js';
import { readActionToken, type ActionClaims } from './action-tokens.js';

export type PageAction = 'acknowledge' | 'resolve';
export type ActionOutcome = 'acknowledged' | 'already_acknowledged' | 'resolved' | 'already_resolved';

const isDone = (status: string) => status === 'resolved' || status === 'closed';

export interface Target {
  claims: ActionClaims;
  incident: IncidentRow;
  /** Paged by a `nearest` target: how far they were (metres), which a call reads out. */
  distanceM?: number | null;
}

/**
 * The incident a token acts on, for the person it was made for: undefined (404 to the caller) for
 * a forged, altered or expired token, a notification or incident since deleted, or a person no
 * longer in the incident's org.
 */
export async function targetOf(ctx: AppContext, token: string): Promise<Target | undefined> {
  const claims = readActionToken(ctx, token);
  if (!claims) return undefined;
  const n = await ctx.db
    .selectFrom('paging_notifications')
    .select(['id', 'distance_m'])
    .where('id', '=', claims.notificationId)
    .where('incident_id', '=', claims.incidentId)
    .where('user_id', '=', claims.userId)
    .where('channel', '=', claims.channel)
    .executeTakeFirst();
  if (!n) return undefined;
  const incident = await incidentById(ctx.db, claims.incidentId);
  if (!incident || !(await findMember(ctx.db, incident.org_id, claims.userId))) return undefined;
  return { claims, incident, distanceM: n.distance_m ?? null };
}

/**
 * Acts as the person paged, through the incident's own acknowledge or resolve path, with the
 * channel that reached them recorded (`acknowledged {via}`); every notification of the incident not
 * yet sent is cancelled in the same transaction. An incident already resolved answers so (not an
 * error): the token is useless then, and a second acknowledgement changes nothing.
 */
export async function act(ctx: AppContext, target: Target, action: PageAction): Promise<{ outcome: ActionOutcome; incident: IncidentRow }> {
  const { claims } = target;
  return ctx.transaction(async (tx) => {
    // Read again in the transaction: the page may be minutes old.
    const incident = (await incidentById(tx.db, claims.incidentId, ctx.database.dialect === 'postgres')) ?? target.incident;
    if (isDone(incident.status)) return { outcome: 'already_resolved', incident };
    if (action === 'resolve') {
      // Cancels the pending notifications itself (resolving stops them).
      const after = await applyChange(ctx, tx, incident, { status: 'resolved' }, claims.userId);
      return { outcome: 'resolved', incident: after };
    }
    if (incident.acknowledged_at !== null) return { outcome: 'already_acknowledged', incident };
    // Cancels the pending notifications itself (acknowledging stops them).
    const after = await acknowledgeIncident(ctx, tx, incident, { userId: claims.userId, via: claims.channel });
    return { outcome: after.acknowledged_by === claims.userId ? 'acknowledged' : 'already_acknowledged', incident: after };
  });
}

/** POST /v1/actions/:token as JSON. */
export async function actByToken(ctx: AppContext, token: string, action: PageAction) {
  const target = await targetOf(ctx, token);
  if (!target) throw notFound();
  const { outcome, incident } = await act(ctx, target, action);
  return { action, outcome, incident: actionIncident(incident) };
}

export function actionIncident(i: IncidentRow) {
  return {
    id: i.id,
    title: i.title,
    priority: i.priority,
    status: i.status,
    location_name: i.location_name,
    acknowledged_at: i.acknowledged_at,
    acknowledged_by: i.acknowledged_by,
  };
}
