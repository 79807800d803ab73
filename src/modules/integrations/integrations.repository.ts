import type { Kysely } from 'kysely';
import { FixedQuery } from '../../db/fixed.js';
import type { DB, IntegrationsTable } from '../../db/schema.js';
import type { IntegrationHeartbeatsTable } from './integrations.tables.js';
import { scoped, type Scope } from '../../db/scope.js';

import type { PriorityMap } from './integrations.schemas.js';

type StoredIntegration = Omit<IntegrationsTable, 'id'> & { id: number };
/** An integration as services see it: its priority map and allowed senders as values (stored as JSON text). */
export type IntegrationRow = Omit<StoredIntegration, 'priority_map' | 'allowed_senders'> & { priority_map: PriorityMap | null; allowed_senders: string[] | null };
export type IntegrationPatch = Partial<Pick<IntegrationRow, 'name' | 'default_assignee_id' | 'priority_map' | 'allowed_senders' | 'escalation_policy_id'>>;

/** A stored row read into an IntegrationRow. */
function valuesOf(r: StoredIntegration): IntegrationRow {
  return {
    ...r,
    priority_map: r.priority_map === null ? null : (JSON.parse(r.priority_map) as PriorityMap),
    allowed_senders: r.allowed_senders === null ? null : (JSON.parse(r.allowed_senders) as string[]),
  };
}

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

/** The stored form of the fields given. */
function stored<T extends Partial<IntegrationRow>>(row: T): Omit<T, 'priority_map' | 'allowed_senders'> & Partial<Pick<StoredIntegration, 'priority_map' | 'allowed_senders'>> {
  const { priority_map, allowed_senders, ...rest } = row;
  return { ...rest, ...(priority_map === undefined ? {} : { priority_map: json(priority_map) }), ...(allowed_senders === undefined ? {} : { allowed_senders: json(allowed_senders) }) };
}

const maybe = (r: StoredIntegration | undefined) => (r === undefined ? undefined : valuesOf(r));

export async function insertIntegration(db: Kysely<DB>, row: Omit<IntegrationRow, 'id' | 'revoked_at'>): Promise<IntegrationRow> {
  return valuesOf(await db.insertInto('integrations').values({ ...(stored(row) as Omit<StoredIntegration, 'id' | 'revoked_at'>), revoked_at: null }).returningAll().executeTakeFirstOrThrow());
}

/** Active integrations of these orgs and mode, newest first. */
export async function listIntegrations(db: Kysely<DB>, scope: Scope): Promise<IntegrationRow[]> {
  return (await db.selectFrom('integrations').selectAll().$call(scoped(scope, 'integrations')).where('revoked_at', 'is', null).orderBy('id', 'desc').execute()).map(valuesOf);
}

export async function findIntegration(db: Kysely<DB>, scope: Scope, id: number): Promise<IntegrationRow | undefined> {
  return maybe(await db.selectFrom('integrations').selectAll().$call(scoped(scope, 'integrations')).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst());
}

export async function updateIntegration(db: Kysely<DB>, id: number, patch: IntegrationPatch): Promise<IntegrationRow> {
  return valuesOf(await db.updateTable('integrations').set(stored(patch)).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
}

/** Revokes; false when it was already revoked (a concurrent DELETE). */
export async function revokeIntegration(db: Kysely<DB>, id: number, nowIso: string): Promise<boolean> {
  const r = await db.updateTable('integrations').set({ revoked_at: nowIso }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The active integration of an inbound address's local part. */
export async function findByEmailToken(db: Kysely<DB>, token: string): Promise<IntegrationRow | undefined> {
  return maybe(await db.selectFrom('integrations').selectAll().where('email_token', '=', token).where('revoked_at', 'is', null).executeTakeFirst());
}

/** The orgs where this user may manage integrations (admins and owners). */
export async function adminOrgIds(db: Kysely<DB>, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).where('role', 'in', ['owner', 'admin']).execute();
  return rows.map((r) => r.org_id);
}

/** By id, revoked or not: mail accepted before a revocation is still processed. */
export async function findIntegrationById(db: Kysely<DB>, id: number): Promise<IntegrationRow | undefined> {
  return maybe(await db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst());
}

/** By ids, revoked or not. */
export async function findIntegrationsByIds(db: Kysely<DB>, ids: number[]): Promise<Map<number, IntegrationRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('integrations').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, valuesOf(r)]));
}

const BY_KEY_HASH = new FixedQuery<{ keyHash: string }>((db, mark) =>
  db
    .selectFrom('integrations')
    .leftJoin('integration_heartbeats as h', 'h.integration_id', 'integrations.id')
    .selectAll('integrations')
    .select(['h.integration_id as hb_id', 'h.interval_seconds as hb_interval', 'h.grace_seconds as hb_grace', 'h.status as hb_status', 'h.last_ping_at as hb_last_ping_at', 'h.due_at as hb_due_at', 'h.incident_id as hb_incident_id', 'h.down_at as hb_down_at'])
    .where('integrations.key_hash', '=', mark('keyHash'))
    .where('integrations.revoked_at', 'is', null),
);
/** A row of BY_KEY_HASH: the integration and its heartbeat's columns (null: not a heartbeat). */
type KeyedRow = StoredIntegration & { [K in 'hb_id' | 'hb_interval' | 'hb_grace']: number | null } & {
  hb_status: IntegrationHeartbeatsTable['status'] | null;
  hb_last_ping_at: string | null;
  hb_due_at: string | null;
  hb_incident_id: number | null;
  hb_down_at: string | null;
};

/**
 * The active integration of a key with its heartbeat (null: not a heartbeat), in one read: every
 * request of a tool, and every ping, starts here.
 */
export async function findByKeyHashWithHeartbeat(db: Kysely<DB>, keyHash: string): Promise<{ integration: IntegrationRow; heartbeat: IntegrationHeartbeatsTable | null } | undefined> {
  const row = (await BY_KEY_HASH.execute<KeyedRow>(db, { keyHash })).rows[0];
  if (!row) return undefined;
  const { hb_id, hb_interval, hb_grace, hb_status, hb_last_ping_at, hb_due_at, hb_incident_id, hb_down_at, ...integration } = row;
  const heartbeat =
    hb_id === null || hb_interval === null || hb_grace === null || hb_status === null
      ? null
      : { integration_id: hb_id, interval_seconds: hb_interval, grace_seconds: hb_grace, status: hb_status, last_ping_at: hb_last_ping_at, due_at: hb_due_at, incident_id: hb_incident_id, down_at: hb_down_at };
  return { integration: valuesOf(integration), heartbeat };
}

/**
 * The org's active integrations that are not heartbeats, by key hash: what the key cache holds
 * (key-cache.ts). A heartbeat's row changes with every ping, so heartbeats are read each time.
 */
export async function keyedIntegrationsOfOrg(db: Kysely<DB>, orgId: number): Promise<ReadonlyMap<string, IntegrationRow>> {
  const rows = await db
    .selectFrom('integrations')
    .leftJoin('integration_heartbeats as h', 'h.integration_id', 'integrations.id')
    .selectAll('integrations')
    .where('integrations.org_id', '=', orgId)
    .where('integrations.revoked_at', 'is', null)
    .where('h.integration_id', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.key_hash, valuesOf(r)]));
}
