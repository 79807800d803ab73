// Every query of heartbeats (issue #37): their rows, the checker's bookkeeping in `settings`, and
// the claims that make a miss, a resolve and a fresh interval happen once across instances.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { findIntegrationsByIds, type IntegrationRow } from './integrations.repository.js';
import type { IntegrationHeartbeatsTable } from './integrations.tables.js';

export type HeartbeatRow = IntegrationHeartbeatsTable;
type Seen = Pick<HeartbeatRow, 'status' | 'last_ping_at' | 'due_at'>;

export async function insertHeartbeat(db: Kysely<DB>, integrationId: number, intervalSeconds: number, graceSeconds: number): Promise<HeartbeatRow> {
  return db
    .insertInto('integration_heartbeats')
    .values({ integration_id: integrationId, interval_seconds: intervalSeconds, grace_seconds: graceSeconds, status: 'new', last_ping_at: null, due_at: null, incident_id: null, down_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findHeartbeat(db: Kysely<DB>, integrationId: number): Promise<HeartbeatRow | undefined> {
  return db.selectFrom('integration_heartbeats').selectAll().where('integration_id', '=', integrationId).executeTakeFirst();
}

export async function heartbeatsOf(db: Kysely<DB>, integrationIds: number[]): Promise<Map<number, HeartbeatRow>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await db.selectFrom('integration_heartbeats').selectAll().where('integration_id', 'in', integrationIds).execute();
  return new Map(rows.map((r) => [r.integration_id, r]));
}

export async function updateHeartbeat(db: Kysely<DB>, integrationId: number, patch: Partial<Omit<HeartbeatRow, 'integration_id'>>): Promise<HeartbeatRow> {
  return db.updateTable('integration_heartbeats').set(patch).where('integration_id', '=', integrationId).returningAll().executeTakeFirstOrThrow();
}

/** A ping of a heartbeat that is not down: one conditional update; false when it is down (or gone). */
export async function pingUnlessDown(db: Kysely<DB>, integrationId: number, seen: Seen): Promise<boolean> {
  const r = await db.updateTable('integration_heartbeats').set(seen).where('integration_id', '=', integrationId).where('status', '!=', 'down').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Its status and the incident its miss opened, locked for the transaction on PostgreSQL. */
export async function lockHeartbeat(db: Kysely<DB>, integrationId: number, lock: boolean): Promise<Pick<HeartbeatRow, 'status' | 'incident_id'> | undefined> {
  const read = db.selectFrom('integration_heartbeats').select(['status', 'incident_id']).where('integration_id', '=', integrationId);
  return (lock ? read.forUpdate() : read).executeTakeFirst();
}

/** Down -> up, claimed: false when another ping brought it up first. */
export async function claimUp(db: Kysely<DB>, integrationId: number, seen: Seen): Promise<boolean> {
  const r = await db.updateTable('integration_heartbeats').set({ ...seen, incident_id: null, down_at: null }).where('integration_id', '=', integrationId).where('status', '=', 'down').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * A miss (or a window's fresh interval), claimed: still up with the due time the checker read, so a
 * ping that came meanwhile (a new due time) or another checker wins.
 */
export async function claimDue(db: Kysely<DB>, h: Pick<HeartbeatRow, 'integration_id' | 'due_at'>, set: Partial<HeartbeatRow>): Promise<boolean> {
  const r = await db.updateTable('integration_heartbeats').set(set).where('integration_id', '=', h.integration_id).where('status', '=', 'up').where('due_at', '=', h.due_at).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The heartbeats that are up, for a fresh interval. */
export async function upHeartbeats(db: Kysely<DB>): Promise<Pick<HeartbeatRow, 'integration_id' | 'interval_seconds' | 'grace_seconds' | 'due_at'>[]> {
  return db.selectFrom('integration_heartbeats').select(['integration_id', 'interval_seconds', 'grace_seconds', 'due_at']).where('status', '=', 'up').execute();
}

/** Moves a due time later, never earlier: loses to a ping that came meanwhile (a later due time). */
export async function postpone(db: Kysely<DB>, integrationId: number, dueAt: string): Promise<void> {
  await db.updateTable('integration_heartbeats').set({ due_at: dueAt }).where('integration_id', '=', integrationId).where('status', '=', 'up').where('due_at', '<', dueAt).execute();
}

/** Heartbeats up and past their due time (of integrations not revoked), oldest due first, each with its integration: two queries. */
export async function dueHeartbeats(db: Kysely<DB>, nowIso: string, limit: number): Promise<{ heartbeat: HeartbeatRow; integration: IntegrationRow }[]> {
  const due = await db
    .selectFrom('integration_heartbeats as h')
    .innerJoin('integrations as i', 'i.id', 'h.integration_id')
    .selectAll('h')
    .where('h.status', '=', 'up')
    .where('h.due_at', '<', nowIso)
    .where('i.revoked_at', 'is', null)
    .orderBy('h.due_at')
    .limit(limit)
    .execute();
  const integrations = await findIntegrationsByIds(db, due.map((h) => h.integration_id));
  return due.flatMap((heartbeat) => {
    const integration = integrations.get(heartbeat.integration_id);
    return integration ? [{ heartbeat, integration }] : [];
  });
}

/** The checker's last run (any instance) and, in the same call, now as the new last run. */
export async function swapLastCheck(db: Kysely<DB>, key: string, nowIso: string): Promise<number | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  await db
    .insertInto('settings')
    .values({ key, value: nowIso })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: nowIso }))
    .execute();
  return row ? Date.parse(row.value) : undefined;
}
