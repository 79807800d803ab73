/**
 * The incident's one owner: the only writer of `incidents`, their timeline (`incident_events`),
 * replies and counters. Every other module (dispatch, integrations, inbound email, signals,
 * retention, the jobs, paging) changes an incident through what this file exports, and imports
 * nothing else from this folder (docs/architecture.md, "Dependency rules").
 *
 * - open / place with dedup: placeIncident (any source; `Opening`), openIncident, createIncident
 * - change: applyChange (status, priority, description, assignee: events, timeline, counters,
 *   escalation clock and the assignee's notice), acknowledgeIncident (the one acknowledgement path)
 * - find: findVisible (the caller's orgs and mode, else 404), findIncident, findOpenByRef, incidentById
 * - view: toIncident; the timeline: recordTimeline, timelineOf; replies: recordReply
 * - escalation: the built-in one (dueEscalations, claimEscalationStep, recordEscalation) and a
 *   policy's walk (duePolicyWalks, walkById, advanceWalk, assignPaged); SLA: dueSlaMarks, claimSlaMark
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import * as repo from './incidents.repository.js';

export { acknowledgeIncident, type AckVia, type Acknowledger } from './acknowledge.js';
export type { Placed } from './dedup.js';
export { claimEscalationStep, MAX_ESCALATIONS, recordEscalation, timeoutOf, type EscalationStep } from './escalation.js';
export { DEFAULT_ACK_TIMEOUTS, dueEscalations, findAckTimeouts, saveAckTimeouts, type AckTimeouts, type DueEscalation } from './escalation.repository.js';
export { deleteClosedIncident, findIncident, findOpenByRef, listVersion, oldClosedIncidents, type IncidentRow } from './incidents.repository.js';
export { ListCache } from './list-cache.js';
export { Incident, IncidentParams, Lat, Lng, PrioritySchema, Reply } from './incidents.schemas.js';
export { applyChange, findVisible, openIncident, placeIncident, toIncident, type Opening } from './incidents.service.js';
export { creationNotice } from './notices.js';
export { recordReply } from './replies.service.js';
export { incidentOfReply, replyAddress } from './reply-address.js';
export { reporterOf } from './reporter.repository.js';
export { claimSlaMark, dueSlaMarks, type SlaMark } from './sla.repository.js';
export { recordTimeline, timelineOf, type TimelineIncident } from './timeline.js';
export { advanceWalk, assignPaged, duePolicyWalks, escalates, nextPosition, walkById, type WalkIncident, type WalkPosition } from './policy-walk.js';
export type { PolicyLevel, PolicySnapshot, PolicyTarget } from './escalation.repository.js';
export { Timeline, TimelineEvent } from './timeline.schemas.js';

/** Moves `updated_at` alone (a progress report, a reply), in the caller's transaction. */
export async function touchIncident(ctx: AppContext, tx: Tx, incident: Pick<repo.IncidentRow, 'id' | 'org_id' | 'livemode'>): Promise<void> {
  await repo.touchIncident(tx.db, incident, iso(ctx.clock.now()));
}

/**
 * An incident by id, whatever its org and mode (for callers that found it by a key of their own:
 * an email's reply address); with `lock`, locked on PostgreSQL until the transaction ends.
 */
export function incidentById(db: Kysely<DB>, id: number, lock = false): Promise<repo.IncidentRow | undefined> {
  return repo.lockIncident(db, lock, id);
}
export { incidentsRoutes } from './incidents.routes.js';
export type { IncidentsTables, IncidentStatus, Priority, IncidentSource, IncidentsTable, IntegrationTool, TimelineType, IncidentEventsTable, IncidentCountsTable, IncidentListVersionsTable, RepliesTable } from './incidents.tables.js';
