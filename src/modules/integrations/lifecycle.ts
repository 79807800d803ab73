import type { AppContext } from '../../context.js';
import type { IncidentSource, IntegrationTool, Priority } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { timeOrderedToken } from '../../lib/crypto.js';
import { queueDelivery, queuePhoneAlert } from '../deliveries/outbox.js';
import { claimAcknowledgement } from '../dispatch/acknowledge.repository.js';
import { ackDeadline } from '../dispatch/settings.js';
import { recordTimeline } from '../dispatch/timeline.js';
import { insertOrRepeat, type Placed } from '../incidents/dedup.js';
import { findOpenByRef, type IncidentRow } from '../incidents/incidents.repository.js';
import { applyChange, CHANNEL, toIncident } from '../incidents/incidents.service.js';
import { slaTimes } from '../incidents/sla.js';
import { findUserById } from '../users/users.repository.js';
import { cancelPending } from '../paging/index.js';
import type { IntegrationRow } from './integrations.repository.js';

/** What any tool's trigger comes down to. */
export interface Trigger {
  ref: string;
  title: string;
  description: string | null;
  priority: Priority;
  source: IncidentSource;
  /** What posted it (shown with the integration's name on the incident). */
  tool: IntegrationTool;
  /** Kept on the timeline of a repeat (what the tool said this time). */
  data?: Record<string, unknown>;
}

const lockRows = (ctx: AppContext) => ctx.database.dialect === 'postgres';
const refOf = (i: IntegrationRow, ref: string) => ({ org_id: i.org_id, livemode: i.livemode, source_ref: ref });

/**
 * Opens an incident for the integration's org and mode, or appends `alert_repeated` to the open
 * one of the same ref. A new incident goes to the default assignee, who gets the push and phone
 * alert a creator gets from POST /v1/tickets; there is no user behind a tool (actor null).
 */
export async function trigger(ctx: AppContext, integration: IntegrationRow, t: Trigger, tx0?: Tx): Promise<Placed> {
  const now = ctx.clock.now();
  const { dueAt, warnAt } = slaTimes(now, t.priority);
  const run = async (tx: Tx): Promise<Placed> => {
    const placed = await insertOrRepeat(
      ctx,
      tx,
      {
        org_id: integration.org_id,
        livemode: integration.livemode,
        title: t.title.trim().slice(0, 200) || 'Alert',
        description: t.description,
        status: 'open',
        priority: t.priority,
        source: t.source,
        source_ref: t.ref,
        lat: null,
        lng: null,
        location_name: null,
        assignee_id: integration.default_assignee_id,
        creator_id: null,
        customer_token: timeOrderedToken(now.getTime()),
        sla_due_at: iso(dueAt),
        sla_warn_at: iso(warnAt),
        sla_warned_at: null,
        sla_breached_at: null,
        resolved_at: null,
        created_at: iso(now),
        updated_at: iso(now),
        escalate_at: await ackDeadline(tx.db, integration.org_id, t.priority, now),
        integration_id: integration.id,
        integration_name: integration.name,
        integration_tool: t.tool,
      },
      null,
      { integration_id: integration.id, ...t.data },
    );
    if (placed.created) await announce(ctx, tx, integration, placed.incident);
    return placed;
  };
  return tx0 ? run(tx0) : ctx.transaction(run);
}

async function announce(ctx: AppContext, tx: Tx, integration: IntegrationRow, incident: IncidentRow): Promise<void> {
  const mode = incident.livemode === 1 ? 'live' : 'test';
  ctx.events.publish(tx, { channel: CHANNEL, orgId: incident.org_id, mode, type: 'incident.created', payload: toIncident(ctx, incident) });
  await recordTimeline(ctx, tx, incident, 'created', null, {
    title: incident.title,
    priority: incident.priority,
    source: incident.source,
    integration_id: integration.id,
    integration_name: integration.name,
    integration_tool: incident.integration_tool,
  });
  const assignee = incident.assignee_id;
  if (assignee === null) return;
  const note = { title: `New ${incident.priority} incident`, body: incident.title, url: `${ctx.config.publicUrl}/app/incidents/${incident.id}`, incident_id: incident.id };
  const base = { topic: 'incident.created', mode, userId: assignee, orgId: incident.org_id } as const;
  await queueDelivery(ctx, tx, { ...base, kind: 'push', recipient: `user:${assignee}`, payload: note });
  const user = await findUserById(tx.db, assignee);
  await queuePhoneAlert(ctx, tx, { ...base, phone: user?.phone ?? null, payload: note });
}

/**
 * `acknowledge`: the open incident of the ref is acknowledged (`acknowledged_at` set once, by no
 * user, which stops its escalation, as the dispatch acknowledgement does) with an `acknowledged`
 * timeline event, and goes from open to in_progress. Dropped (undefined) when none is open, as
 * PagerDuty drops it.
 */
export async function acknowledge(ctx: AppContext, integration: IntegrationRow, ref: string): Promise<IncidentRow | undefined> {
  return ctx.transaction(async (tx) => {
    const open = await findOpenByRef(tx.db, lockRows(ctx), refOf(integration, ref));
    if (!open) return undefined;
    const claimed = await claimAcknowledgement(tx.db, open.id, null, iso(ctx.clock.now()));
    if (claimed) {
      await recordTimeline(ctx, tx, claimed, 'acknowledged', null, { source: 'integration', integration_id: integration.id });
      await cancelPending(ctx, tx, claimed.id, 'acknowledged');
    }
    const current = claimed ?? open;
    return current.status === 'open' ? applyChange(ctx, tx, current, { status: 'in_progress' }, null) : current;
  });
}

/** `resolve`: through the incidents service's own change path; dropped when nothing is open. */
export async function resolve(ctx: AppContext, integration: IntegrationRow, ref: string): Promise<IncidentRow | undefined> {
  return ctx.transaction(async (tx) => {
    const open = await findOpenByRef(tx.db, lockRows(ctx), refOf(integration, ref));
    return open ? applyChange(ctx, tx, open, { status: 'resolved' }, null) : undefined;
  });
}
