import type { Insertable, Kysely } from 'kysely';
import { FixedQuery } from '../../db/fixed.js';
import type { DB, Flag } from '../../db/schema.js';
import type { MaintenanceWindowsTable } from './integrations.tables.js';

type Stored = Omit<MaintenanceWindowsTable, 'id'> & { id: number };
/** A maintenance window as a value: the integrations it covers parsed from their JSON column (null: all of the org's). */
export type WindowRow = Omit<Stored, 'integration_ids'> & { integration_ids: number[] | null };

const valueOf = (w: Stored): WindowRow => ({ ...w, integration_ids: w.integration_ids === null ? null : (JSON.parse(w.integration_ids) as number[]) });
const idsText = (ids: number[] | null) => (ids === null ? null : JSON.stringify(ids));

/** Read on every trigger of every tool: compiled once. */
const ACTIVE = new FixedQuery<{ orgId: number; livemode: Flag; at: string }>((db, mark) =>
  db.selectFrom('maintenance_windows').selectAll().where('org_id', '=', mark('orgId')).where('livemode', '=', mark('livemode')).where('ends_at', '>', mark('at')).where('starts_at', '<=', mark('at')).orderBy('ends_at', 'desc'),
);

/** The org's windows in a mode that have begun and not ended at `at`, the one ending last first. */
export async function activeWindows(db: Kysely<DB>, orgId: number, livemode: Flag, at: string): Promise<WindowRow[]> {
  const { rows } = await ACTIVE.execute<Stored>(db, { orgId, livemode, at });
  return rows.map(valueOf);
}

/** The org's windows of both modes that end after `from` and begin before `until`, the one ending last first; at most `limit`. */
export async function windowsBetween(db: Kysely<DB>, orgId: number, from: string, until: string, limit: number): Promise<WindowRow[]> {
  const rows = await db.selectFrom('maintenance_windows').selectAll().where('org_id', '=', orgId).where('ends_at', '>', from).where('starts_at', '<', until).orderBy('ends_at', 'desc').orderBy('id').limit(limit).execute();
  return rows.map(valueOf);
}

/** Windows ending after `from` (and, with `to`, starting before it), by start. */
export async function listWindowRows(db: Kysely<DB>, orgId: number, livemode: Flag, from: string, to?: string): Promise<WindowRow[]> {
  let query = db.selectFrom('maintenance_windows').selectAll().where('org_id', '=', orgId).where('livemode', '=', livemode).where('ends_at', '>', from);
  if (to) query = query.where('starts_at', '<', to);
  return (await query.orderBy('starts_at').orderBy('id').limit(200).execute()).map(valueOf);
}

export async function findWindow(db: Kysely<DB>, orgId: number, livemode: Flag, id: number): Promise<WindowRow | undefined> {
  const row = await db.selectFrom('maintenance_windows').selectAll().where('id', '=', id).where('org_id', '=', orgId).where('livemode', '=', livemode).executeTakeFirst();
  return row && valueOf(row);
}

export async function insertWindow(db: Kysely<DB>, row: Omit<Insertable<MaintenanceWindowsTable>, 'integration_ids'> & { integration_ids: number[] | null }): Promise<WindowRow> {
  return valueOf(await db.insertInto('maintenance_windows').values({ ...row, integration_ids: idsText(row.integration_ids) }).returningAll().executeTakeFirstOrThrow());
}

export async function updateWindowRow(db: Kysely<DB>, id: number, patch: Partial<Pick<WindowRow, 'starts_at' | 'ends_at' | 'description' | 'integration_ids' | 'updated_at'>>): Promise<WindowRow> {
  const { integration_ids, ...rest } = patch;
  const set = integration_ids === undefined ? rest : { ...rest, integration_ids: idsText(integration_ids) };
  return valueOf(await db.updateTable('maintenance_windows').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
}

export async function deleteWindowRow(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('maintenance_windows').where('id', '=', id).execute();
}
