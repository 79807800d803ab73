import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { flag, type Priority } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { forbidden, invalidField, notFound } from '../../lib/errors.js';
import { actorScope, atLeast, orgAccess, targetOrg } from '../orgs/index.js';
import { findMember } from '../orgs/index.js';
import { listMemberOrgs } from '../orgs/index.js';
import { listEvents } from './event-log.repository.js';
import { retimeHeartbeat, stateOf } from './heartbeats.js';
import { findHeartbeat, heartbeatsOf, insertHeartbeat, type HeartbeatRow } from './heartbeats.repository.js';
import * as repo from './integrations.repository.js';
import type { IntegrationRow } from './integrations.repository.js';
import type { IntegrationKeyCache, Keyed } from './key-cache.js';
import type { CreateIntegrationBody, Integration, UpdateIntegrationBody } from './integrations.schemas.js';

export type Severity = 'critical' | 'error' | 'warning' | 'info';
export const DEFAULT_PRIORITIES: Readonly<Record<Severity, Priority>> = { critical: 'urgent', error: 'high', warning: 'normal', info: 'low' };

export function priorityMapOf(row: IntegrationRow): Record<Severity, Priority> {
  return { ...DEFAULT_PRIORITIES, ...(row.priority_map ?? {}) };
}

/** The inbound address of an integration, when inbound email is configured. */
export function emailAddressOf(ctx: AppContext, row: IntegrationRow): string | null {
  return ctx.config.inboundEmailDomain ? `${row.email_token}@${ctx.config.inboundEmailDomain}` : null;
}

export function toIntegration(ctx: AppContext, row: IntegrationRow, heartbeat?: HeartbeatRow): Integration {
  return {
    id: row.id,
    name: row.name,
    org_id: row.org_id,
    livemode: row.livemode === 1,
    redacted_key: `...${row.last4}`,
    email_address: emailAddressOf(ctx, row),
    default_assignee_id: row.default_assignee_id,
    priority_map: priorityMapOf(row),
    allowed_senders: row.allowed_senders,
    escalation_policy_id: row.escalation_policy_id,
    type: heartbeat ? 'heartbeat' : 'alerts',
    heartbeat: heartbeat
      ? {
          interval_seconds: heartbeat.interval_seconds,
          grace_seconds: heartbeat.grace_seconds,
          status: stateOf(heartbeat, ctx.clock.now()),
          last_ping_at: heartbeat.last_ping_at,
          due_at: heartbeat.due_at,
          incident_id: heartbeat.incident_id,
        }
      : null,
    created_at: row.created_at,
  };
}

/** The URLs that carry the key, for tools that can only be given a URL. */
export function urlsOf(ctx: AppContext, key: string, heartbeat = false) {
  const base = `${ctx.config.publicUrl}/v1/integrations/${key}`;
  return { events_url: `${base}/events`, alertmanager_url: `${base}/alertmanager`, grafana_url: `${base}/grafana`, ...(heartbeat ? { heartbeat_url: `${base}/heartbeat` } : {}) };
}

async function checkAssignee(ctx: AppContext, orgId: number, id: number | null | undefined): Promise<void> {
  if (id !== undefined && id !== null && !(await findMember(ctx.db, orgId, id))) throw invalidField('default_assignee_id', 'is not a member of this org');
}

function settingsPatch(input: UpdateIntegrationBody): repo.IntegrationPatch {
  const patch: repo.IntegrationPatch = {};
  if (input.name !== undefined) patch.name = input.name.trim();
  if (input.default_assignee_id !== undefined) patch.default_assignee_id = input.default_assignee_id;
  if (input.priority_map !== undefined) patch.priority_map = input.priority_map;
  if (input.escalation_policy_id !== undefined) patch.escalation_policy_id = input.escalation_policy_id;
  if (input.allowed_senders !== undefined) patch.allowed_senders = input.allowed_senders === null ? null : input.allowed_senders.map((d) => d.toLowerCase());
  return patch;
}

/**
 * The org of a new integration. Without `org_id` Muster does not guess among several shared orgs
 * (an integration in the wrong org pages the wrong people, or nobody): one shared org is taken,
 * several answer 422 naming `org_id`, none leaves the primary (personal) org.
 */
async function integrationOrg(ctx: AppContext, actor: Actor, orgId: number | undefined) {
  if (orgId !== undefined) return targetOrg(ctx, actor, orgId);
  const shared = (await listMemberOrgs(ctx.db, actor.userId)).filter((o) => o.personal === 0);
  if (shared.length > 1) {
    const names = shared.map((o) => `${o.id} (${o.name})`).join(', ');
    throw invalidField('org_id', `is required: you belong to ${shared.length} organizations, choose one of ${names}`);
  }
  return targetOrg(ctx, actor, shared[0]?.id);
}

/** Org admins and owners; the key's mode decides live or test. The key is shown once. */
export async function createIntegration(ctx: AppContext, actor: Actor, input: CreateIntegrationBody) {
  const { org, role } = await integrationOrg(ctx, actor, input.org_id);
  if (!atLeast(role, 'admin')) throw forbidden();
  const heartbeat = input.type === 'heartbeat';
  if (heartbeat && input.interval_seconds === undefined) throw invalidField('interval_seconds', 'is required for a heartbeat (30..86400)');
  if (!heartbeat && (input.interval_seconds !== undefined || input.grace_seconds !== undefined)) {
    throw invalidField(input.interval_seconds !== undefined ? 'interval_seconds' : 'grace_seconds', 'is for a heartbeat only (type: "heartbeat")');
  }
  await checkAssignee(ctx, org.id, input.default_assignee_id);
  await ctx.escalation.checkPolicyRef(ctx.db, org.id, input.escalation_policy_id, 'escalation_policy_id');
  const key = randomToken(24);
  const { row, beat } = await ctx.transaction(async ({ db }) => {
    const row = await repo.insertIntegration(db, {
    org_id: org.id,
    livemode: flag(actor.mode === 'live'),
    name: input.name.trim(),
    key_hash: sha256(key),
    last4: key.slice(-4),
    // Lower-case hex: mail systems may fold the case of an address.
    email_token: `in-${randomBytes(12).toString('hex')}`,
    created_by: actor.userId,
    default_assignee_id: null,
    priority_map: null,
    allowed_senders: null,
    escalation_policy_id: null,
    created_at: iso(ctx.clock.now()),
    ...settingsPatch({ ...input, name: undefined }),
    });
    const beat = heartbeat ? await insertHeartbeat(db, row.id, input.interval_seconds!, input.grace_seconds ?? 0) : undefined;
    return { row, beat };
  });
  changed(ctx, org.id);
  return { ...toIntegration(ctx, row, beat), key, ...urlsOf(ctx, key, heartbeat) };
}

/** The integrations of the orgs the caller administers, in the caller's mode. */
export async function listIntegrations(ctx: AppContext, actor: Actor, orgId?: number) {
  const scope = await actorScope(ctx, actor, orgId);
  const admin = new Set(await repo.adminOrgIds(ctx.db, actor.userId));
  if (orgId !== undefined && !admin.has(orgId)) throw forbidden();
  const rows = await repo.listIntegrations(ctx.db, { ...scope, orgIds: scope.orgIds.filter((id) => admin.has(id)) });
  const beats = await heartbeatsOf(ctx.db, rows.map((r) => r.id));
  return { integrations: rows.map((r) => toIntegration(ctx, r, beats.get(r.id))) };
}

async function managed(ctx: AppContext, actor: Actor, id: number): Promise<IntegrationRow> {
  const row = await repo.findIntegration(ctx.db, await actorScope(ctx, actor), id);
  if (!row) throw notFound();
  await orgAccess(ctx, actor, { id: row.org_id }, { role: 'admin' });
  return row;
}

export async function updateIntegration(ctx: AppContext, actor: Actor, id: number, input: UpdateIntegrationBody) {
  const row = await managed(ctx, actor, id);
  let beat = await findHeartbeat(ctx.db, row.id);
  if (!beat && (input.interval_seconds !== undefined || input.grace_seconds !== undefined)) {
    throw invalidField(input.interval_seconds !== undefined ? 'interval_seconds' : 'grace_seconds', 'is for a heartbeat only');
  }
  await checkAssignee(ctx, row.org_id, input.default_assignee_id);
  await ctx.escalation.checkPolicyRef(ctx.db, row.org_id, input.escalation_policy_id, 'escalation_policy_id');
  if (beat && (input.interval_seconds !== undefined || input.grace_seconds !== undefined)) {
    beat = await retimeHeartbeat(ctx, beat, input.interval_seconds ?? beat.interval_seconds, input.grace_seconds ?? beat.grace_seconds);
  }
  const patch = settingsPatch(input);
  // Unknown fields only (they are ignored): nothing to change.
  if (Object.keys(patch).length === 0) return toIntegration(ctx, row, beat);
  const updated = await repo.updateIntegration(ctx.db, row.id, patch);
  changed(ctx, row.org_id);
  return toIntegration(ctx, updated, beat);
}

/** Revoked at once: its URLs answer 401 and mail to it bounces. */
export async function revokeIntegration(ctx: AppContext, actor: Actor, id: number) {
  const row = await managed(ctx, actor, id);
  if (!(await repo.revokeIntegration(ctx.db, row.id, iso(ctx.clock.now())))) throw notFound();
  changed(ctx, row.org_id);
  return { id: row.id, revoked: true };
}

/** An integration's event log (admins and owners of its org), newest first. */
export async function integrationEvents(ctx: AppContext, actor: Actor, id: number) {
  const row = await managed(ctx, actor, id);
  const events = await listEvents(ctx.db, row.id);
  return {
    events: events.map((e) => ({
      id: e.id,
      at: e.created_at,
      source: e.source,
      outcome: e.outcome,
      reason: e.reason,
      incident_id: e.incident_id,
      alerts: e.results,
      body: e.body,
      body_truncated: e.body_truncated === 1,
    })),
  };
}

/** The active integration a presented key names with its heartbeat (null: not one), or undefined (a wrong or revoked key). */
export async function integrationByKey(ctx: AppContext, keys: IntegrationKeyCache, key: string | undefined): Promise<Keyed | undefined> {
  if (!key || key.length > 200) return undefined;
  return keys.byHash(ctx.db, sha256(key));
}

/** Every instance's key cache drops the org's integrations once the change is committed (key-cache.ts). */
const changed = (ctx: AppContext, orgId: number) => ctx.events.endAccess({ integrationsOf: orgId });
