import type { AppContext } from '../../context.js';
import type { IncidentSource, IntegrationTool, Priority } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { acknowledgeIncident, applyChange, creationNotice, findOpenByRef, placeIncident, type IncidentRow, type Placed } from '../incidents/index.js';
import { findUserById } from '../users/index.js';
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
/** `run` in the caller's transaction `tx0` when given (it writes more there), else in one of its own. */
const within = <T>(ctx: AppContext, tx0: Tx | undefined, run: (tx: Tx) => Promise<T>): Promise<T> => (tx0 ? run(tx0) : ctx.transaction(run));
const refOf = (i: IntegrationRow, ref: string) => ({ org_id: i.org_id, livemode: i.livemode, source_ref: ref });

/**
 * Opens an incident for the integration's org and mode, or appends `alert_repeated` to the open
 * one of the same ref. A new incident goes to the default assignee, who gets the push and phone
 * alert a creator gets from POST /v1/tickets; there is no user behind a tool (actor null).
 */
export async function trigger(ctx: AppContext, integration: IntegrationRow, t: Trigger, tx0?: Tx): Promise<Placed> {
  const run = async (tx: Tx): Promise<Placed> => {
    const placed = await placeIncident(ctx, tx, {
      orgId: integration.org_id,
      livemode: integration.livemode,
      title: t.title.trim().slice(0, 200) || 'Alert',
      description: t.description,
      priority: t.priority,
      source: t.source,
      sourceRef: t.ref,
      assigneeId: integration.default_assignee_id,
      // Its own policy, else the org's default (undefined).
      escalationPolicyId: integration.escalation_policy_id ?? undefined,
      creatorId: null,
      integration: { id: integration.id, name: integration.name, tool: t.tool },
      repeat: { integration_id: integration.id, ...t.data },
    });
    const assignee = placed.incident.assignee_id;
    if (placed.created && assignee !== null) {
      const user = await findUserById(tx.db, assignee);
      await creationNotice(ctx, tx, placed.incident, { userId: assignee, phone: user?.phone ?? null });
    }
    return placed;
  };
  return within(ctx, tx0, run);
}

/**
 * `acknowledge`: the open incident of the ref is acknowledged (`acknowledged_at` set once, by no
 * user, which stops its escalation, as the dispatch acknowledgement does) with an `acknowledged`
 * timeline event, and goes from open to in_progress. Dropped (undefined) when none is open, as
 * PagerDuty drops it. In `tx0` when given (the caller writes more in the same transaction).
 */
export async function acknowledge(ctx: AppContext, integration: IntegrationRow, ref: string, tx0?: Tx): Promise<IncidentRow | undefined> {
  const run = async (tx: Tx) => {
    const open = await findOpenByRef(tx.db, lockRows(ctx), refOf(integration, ref));
    if (!open) return undefined;
    return acknowledgeIncident(ctx, tx, open, { userId: null, data: { source: 'integration', integration_id: integration.id } });
  };
  return within(ctx, tx0, run);
}

/** `resolve`: through the incidents service's own change path; dropped when nothing is open. In `tx0` when given. */
export async function resolve(ctx: AppContext, integration: IntegrationRow, ref: string, tx0?: Tx): Promise<IncidentRow | undefined> {
  const run = async (tx: Tx) => {
    const open = await findOpenByRef(tx.db, lockRows(ctx), refOf(integration, ref));
    return open ? applyChange(ctx, tx, open, { status: 'resolved' }, null) : undefined;
  };
  return within(ctx, tx0, run);
}
