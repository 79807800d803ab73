import type { AppContext } from '../../context.js';
import { flag, type Flag, type IncidentSource, type IntegrationTool, type Priority } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { timeOrderedToken } from '../../lib/crypto.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import { actorScope, orgAccess, targetOrgWrite } from '../orgs/index.js';
import { findMember } from '../orgs/index.js';
import { cachedUser } from '../users/index.js';
import { openingDefaultsCache } from './defaults-cache.js';
import { escalationPatch, openingEscalation } from './escalation.js';
import { escalationView } from './escalation-view.js';
import * as repo from './incidents.repository.js';
import type { IncidentRow, IncidentViewRow } from './incidents.repository.js';
import { countByStatus, type ListExtras } from './list-filters.js';
import type { CreateIncidentBody, Incident, IncidentList, ListIncidentsQuery, UpdateIncidentBody } from './incidents.schemas.js';
import { creationNotice, notifyAssignee } from './notices.js';
import { publishIncident } from './publish.js';
import { isDone, nextSlaChange, slaState, slaTimes } from './sla.js';
import { insertOrRepeat, refTaken, type Placed } from './dedup.js';
import { recordTimeline } from './timeline.js';

/**
 * The answer's view of an incident. Written out property by property (a spread inside the literal
 * costs a hidden-class transition per property after it); `now` is the SLA clock's instant, read
 * once for a whole list.
 */
export function toIncident(ctx: AppContext, i: IncidentViewRow, now: Date = ctx.clock.now()): Incident {
  const sla = slaState(i, now);
  return {
    Id: i.id,
    org_id: i.org_id,
    livemode: i.livemode === 1,
    title: i.title,
    description: i.description,
    status: i.status,
    priority: i.priority,
    source: i.source,
    source_ref: i.source_ref,
    sla_due_at: i.sla_due_at,
    sla_status: sla.sla_status,
    sla_breached: sla.sla_breached,
    customer_token: i.customer_token,
    customer_status_url: `${ctx.config.publicUrl}/incidents/status/${i.customer_token}`,
    lat: i.lat,
    lng: i.lng,
    location_name: i.location_name,
    arrival_radius_m: i.arrival_radius_m,
    assignee_id: i.assignee_id,
    created_at: i.created_at,
    updated_at: i.updated_at,
    resolved_at: i.resolved_at,
    acknowledged_at: i.acknowledged_at,
    acknowledged_by: i.acknowledged_by,
    integration: i.integration_id === null ? null : { id: i.integration_id, name: i.integration_name ?? '', tool: i.integration_tool },
    escalation: escalationView(i),
  };
}

/** What opens an incident, whoever opens it (the API, an alert signal, an integration, an email). */
export interface Opening {
  orgId: number;
  livemode: Flag;
  title: string;
  description: string | null;
  priority: Priority;
  source: IncidentSource;
  /** The dedup key (dedup.ts): a trigger with the ref of an open incident repeats that one. */
  sourceRef: string | null;
  lat?: number | null;
  lng?: number | null;
  locationName?: string | null;
  /** Default 150. */
  arrivalRadiusM?: number;
  assigneeId?: number | null;
  /** The user who opened it; null for a tool. Also the actor of its `created` (or `alert_repeated`) event. */
  creatorId: number | null;
  /** The creator's name when the caller has read it (the timeline event then needs no read-back). */
  creatorName?: string;
  integration?: { id: number; name: string; tool: IntegrationTool };
  /** Kept on the timeline of a repeat (`alert_repeated`), with the trigger count. */
  repeat: Record<string, unknown>;
  /** The escalation policy copied onto the incident as it opens (modules/paging); undefined: the org's default; null: none. */
  escalationPolicyId?: number | null | undefined;
}

/**
 * Writes a new incident in the caller's transaction: the one place its row is built, with its SLA
 * and escalation clocks, the `incident.created` broadcast and the `created` timeline event. With a
 * `sourceRef` that an open incident of the org and mode holds, it appends `alert_repeated` to that
 * one instead (dedup.ts). Whom to tell is the caller's (creationNotice).
 */
export async function placeIncident(ctx: AppContext, tx: Tx, o: Opening): Promise<Placed> {
  const now = ctx.clock.now();
  const { dueAt, warnAt } = slaTimes(now, o.priority);
  const integration = o.integration;
  // The opening's policy, else the org's default (its dispatch settings, which also hold the
  // built-in escalation's timeouts, from memory: defaults-cache.ts); its copy is taken now.
  const opening = async (defaults?: Parameters<typeof openingEscalation>[5]) => {
    const start = await openingEscalation(tx.db, o.orgId, o.escalationPolicyId, o.priority, now, defaults);
    return { start, policy: start.policyId === null ? undefined : await ctx.escalation.policyCopy(tx.db, o.orgId, start.policyId) };
  };
  const held = openingDefaultsCache(ctx.events.bus);
  const { start, policy } = await opening((db, orgId) => held.of(db, orgId)).catch((err: unknown) => {
    // The default from memory may name a policy deleted on another instance before its notice
    // arrived here: the settings as stored decide, never a 422 for a policy the caller did not name.
    if (o.escalationPolicyId !== undefined) throw err;
    return opening();
  });
  const placed = await insertOrRepeat(
    ctx,
    tx,
    {
      org_id: o.orgId,
      livemode: o.livemode,
      title: o.title,
      description: o.description,
      status: 'open',
      priority: o.priority,
      source: o.source,
      source_ref: o.sourceRef,
      lat: o.lat ?? null,
      lng: o.lng ?? null,
      location_name: o.locationName ?? null,
      arrival_radius_m: o.arrivalRadiusM ?? 150,
      assignee_id: o.assigneeId ?? null,
      creator_id: o.creatorId,
      customer_token: timeOrderedToken(now.getTime()),
      sla_due_at: iso(dueAt),
      sla_warn_at: iso(warnAt),
      sla_warned_at: null,
      sla_breached_at: null,
      resolved_at: null,
      created_at: iso(now),
      updated_at: iso(now),
      escalate_at: start.escalateAt,
      integration_id: integration?.id ?? null,
      integration_name: integration?.name ?? null,
      integration_tool: integration?.tool ?? null,
      escalation_policy_id: policy?.escalation_policy_id ?? null,
      escalation_snapshot: policy?.escalation_snapshot ?? null,
    },
    o.creatorId,
    o.repeat,
  );
  if (!placed.created) return placed;
  const incident = placed.incident;
  // Level 1 of its policy is due now: the walk fires it right after the commit (the sweep would, later).
  if (policy) tx.onCommit(() => ctx.escalation.wake(ctx));
  // The same view answers the request (createIncident): nothing changes it after this.
  placed.view = toIncident(ctx, incident);
  publishIncident(ctx, tx, incident, 'incident.created', placed.view);
  const created = integration
    ? { title: incident.title, priority: incident.priority, source: incident.source, integration_id: integration.id, integration_name: integration.name, integration_tool: integration.tool }
    : { title: incident.title, priority: incident.priority, source: incident.source };
  await recordTimeline(ctx, tx, incident, 'created', o.creatorId, created, o.creatorName);
  return placed;
}

/** The opening of a person's incident (the API's, an alert signal's) in their org and mode. */
function personOpening(actor: Actor, orgId: number, input: Omit<CreateIncidentBody, 'org_id'>, creatorName?: string): Opening {
  const source = input.source ?? 'api';
  return {
    orgId,
    livemode: flag(actor.mode === 'live'),
    title: input.title.trim(),
    description: input.description ?? null,
    priority: input.priority ?? 'normal',
    source,
    sourceRef: input.source_ref ?? null,
    lat: input.lat,
    lng: input.lng,
    locationName: input.location_name,
    ...(input.arrival_radius_m !== undefined ? { arrivalRadiusM: input.arrival_radius_m } : {}),
    creatorId: actor.userId,
    ...(creatorName === undefined ? {} : { creatorName }),
    repeat: { source },
    escalationPolicyId: input.escalation_policy_id,
  };
}

/** A new incident (no dedup key): how an alert signal opens one. */
export async function openIncident(ctx: AppContext, tx: Tx, actor: Actor, orgId: number, input: Omit<CreateIncidentBody, 'org_id' | 'source_ref'>): Promise<IncidentRow> {
  return (await placeIncident(ctx, tx, personOpening(actor, orgId, input))).incident;
}

/**
 * Creates an incident in the caller's org (default the primary one), queues the creator's push and
 * phone alert. `created` is false for a repeat of an open incident's `source_ref` (dedup.ts), which
 * answers that incident (POST answers it with 200, a creation with 201).
 */
export async function createIncident(ctx: AppContext, actor: Actor, input: CreateIncidentBody, idem?: EffectRecorder | null): Promise<{ view: Incident; created: boolean }> {
  // Membership and lock from the credential cache (the org row is read for nothing else), and the
  // creator's name and phone from the user cache: both dropped on every instance when they change.
  const { orgId } = await targetOrgWrite(ctx, actor, input.org_id);
  const creator = await cachedUser(ctx, actor.userId);
  return ctx.transaction(async (tx) => {
    const { incident, created, view: placedView } = await placeIncident(ctx, tx, personOpening(actor, orgId, input, creator?.name));
    const view = placedView ?? toIncident(ctx, incident);
    if (created) await creationNotice(ctx, tx, incident, { userId: actor.userId, phone: creator?.phone ?? null });
    return { view: await recorded(tx, idem, view), created };
  });
}

/**
 * A page of the list: the bytes of a page the cache holds (list-cache.ts), or the page built now
 * with `keep` to hand the cache its serialised bytes (the route serialises with its schema).
 */
export type ListAnswer = { body: Buffer; view?: undefined } | { body?: undefined; view: IncidentList; keep: (serialised: string) => Buffer };

export async function listIncidents(ctx: AppContext, actor: Actor, q: ListIncidentsQuery): Promise<ListAnswer> {
  const scope = await actorScope(ctx, actor, q.org_id);
  const unassigned = q.assignee_id === 'none';
  const filter = {
    status: q.status,
    priority: q.priority,
    assigneeId: unassigned ? undefined : assigneeOf(actor, q.assignee_id),
    source_ref: q.source_ref,
    ...consoleFilters(q, unassigned),
  };
  // The version before the rows: a write committed in between makes the entry look old, never the rows.
  const cache = ctx.listCache;
  const key = JSON.stringify([scope.mode, scope.orgIds, filter.status, filter.priority, filter.assigneeId, filter.source_ref, filter.search, filter.source, unassigned, filter.sort, q.limit, q.page, q.with_counts === true]);
  const version = await repo.listVersion(ctx.db, scope);
  const now = ctx.clock.now();
  const builtAt = now.getTime();
  const cached = cache.get(key, version, builtAt);
  if (cached !== undefined) return { body: cached };

  const [rows, total, counts] = await Promise.all([
    repo.listIncidents(ctx.db, scope, filter, q.limit, (q.page - 1) * q.limit),
    repo.countIncidents(ctx.db, scope, filter),
    q.with_counts === true ? countByStatus(ctx.db, scope, filter) : undefined,
  ]);
  const tickets = rows.map((r) => toIncident(ctx, r, now));
  let expiresAt = Infinity;
  for (const r of rows) expiresAt = Math.min(expiresAt, nextSlaChange(r, builtAt));
  const view = counts ? { tickets, total, page: q.page, limit: q.limit, counts } : { tickets, total, page: q.page, limit: q.limit };
  return {
    view,
    keep: (serialised) => {
      const body = Buffer.from(serialised);
      cache.set(key, version, body, builtAt, expiresAt);
      return body;
    },
  };
}

/** The dispatcher's console filters (list-filters.ts). */
function consoleFilters(q: ListIncidentsQuery, unassigned: boolean): ListExtras {
  return { search: q.q?.trim(), source: q.source, unassigned, sort: q.sort };
}

/** `assignee_id=me` is the caller; ids past the database's integer range are a 422, not a 500. */
function assigneeOf(actor: Actor, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === 'me') return actor.userId;
  const id = Number(value);
  if (id > 2_147_483_647) throw invalidField('assignee_id', 'must be at most 2147483647');
  return id;
}

/** An incident of the caller's orgs and mode; anything else is 404. */
export async function findVisible(ctx: AppContext, actor: Actor, id: number): Promise<IncidentRow> {
  const incident = await repo.findIncident(ctx.db, await actorScope(ctx, actor), id);
  if (!incident) throw notFound();
  return incident;
}

export async function getIncident(ctx: AppContext, actor: Actor, id: number): Promise<Incident> {
  return toIncident(ctx, await findVisible(ctx, actor, id));
}

/**
 * Status, priority, description, assignee. A priority change recomputes the SLA from creation;
 * resolving or closing freezes it, reopening thaws it. Any status may follow any status.
 */
export async function updateIncident(ctx: AppContext, actor: Actor, id: number, input: UpdateIncidentBody): Promise<Incident> {
  const before = await findVisible(ctx, actor, id);
  await orgAccess(ctx, actor, { id: before.org_id }, { write: true });
  if (input.assignee_id !== undefined && input.assignee_id !== null && !(await findMember(ctx.db, before.org_id, input.assignee_id))) {
    throw invalidField('assignee_id', 'is not a member of this org');
  }
  return ctx.transaction(async (tx) => toIncident(ctx, await applyChange(ctx, tx, before, input, actor.userId))).catch(refTaken);
}

/**
 * The change itself in the caller's transaction, also used by integrations (resolve, acknowledge)
 * with a null actor, so every path keeps events, timeline, counters, escalation and the assignee's
 * notice right.
 */
export async function applyChange(ctx: AppContext, tx: Tx, before: IncidentRow, input: UpdateIncidentBody, actorId: number | null): Promise<IncidentRow> {
  const now = ctx.clock.now();
  const patch: repo.IncidentPatch = { updated_at: iso(now) };
  if (input.description !== undefined) patch.description = input.description;
  if (input.assignee_id !== undefined) patch.assignee_id = input.assignee_id;
  if (input.arrival_radius_m !== undefined) patch.arrival_radius_m = input.arrival_radius_m;
  if (input.escalation_policy_id !== undefined) Object.assign(patch, await ctx.escalation.policyCopy(tx.db, before.org_id, input.escalation_policy_id));
  if (input.priority !== undefined && input.priority !== before.priority) {
    const { dueAt, warnAt } = slaTimes(new Date(before.created_at), input.priority);
    Object.assign(patch, { priority: input.priority, sla_due_at: iso(dueAt), sla_warn_at: iso(warnAt) });
  }
  if (input.status !== undefined && input.status !== before.status) {
    patch.status = input.status;
    if (isDone(input.status) !== isDone(before.status)) patch.resolved_at = isDone(input.status) ? iso(now) : null;
  }
  Object.assign(patch, await escalationPatch(tx.db, before, patch, now));
  const after = await repo.updateIncident(tx.db, before, patch);
  // A policy's walk started again: level 1 fires right after the commit.
  if (after.escalation_policy_id !== null && after.escalation_level === 0 && after.escalate_at !== null && patch.escalate_at !== undefined) tx.onCommit(() => ctx.escalation.wake(ctx));
  const view = toIncident(ctx, after);
  const changed = (['status', 'priority', 'description', 'assignee_id', 'arrival_radius_m'] as const).some((k) => after[k] !== before[k]);
  if (changed) publishIncident(ctx, tx, after, 'incident.updated', view);
  await recordChanges(ctx, tx, actorId, before, after);
  // Resolving or closing stops every notification of a page not yet sent (paging).
  if (isDone(after.status) && !isDone(before.status)) await ctx.escalation.cancelPending(ctx, tx, after.id, 'resolved');
  if (after.assignee_id !== before.assignee_id) await notifyAssignee(ctx, tx, actorId, after, view);
  return after;
}

/** One timeline event per changed field (status, priority, assignee), in the update's transaction. */
async function recordChanges(ctx: AppContext, tx: Tx, actorId: number | null, before: IncidentRow, after: IncidentRow): Promise<void> {
  if (after.status !== before.status) await recordTimeline(ctx, tx, after, 'status_changed', actorId, { from: before.status, to: after.status });
  if (after.priority !== before.priority) await recordTimeline(ctx, tx, after, 'priority_changed', actorId, { from: before.priority, to: after.priority });
  if (after.assignee_id === before.assignee_id) return;
  if (after.assignee_id === null) await recordTimeline(ctx, tx, after, 'unassigned', actorId, { previous_assignee_id: before.assignee_id });
  else await recordTimeline(ctx, tx, after, 'assigned', actorId, { assignee_id: after.assignee_id, previous_assignee_id: before.assignee_id });
}

/** Org admins and owners only; the replies go with it. */
export async function deleteIncident(ctx: AppContext, actor: Actor, id: number) {
  const incident = await findVisible(ctx, actor, id);
  await orgAccess(ctx, actor, { id: incident.org_id }, { role: 'admin' });
  await ctx.transaction(({ db }) => repo.deleteIncident(db, incident));
  return { Id: incident.id, deleted: true };
}
