import type { Insertable, Kysely } from 'kysely';
import type { CalendarConnectionsTable, DB } from '../../db/schema.js';
import type { Interval } from './expand.js';

export type ConnectionRow = Omit<CalendarConnectionsTable, 'id'> & { id: number };

export async function insertConnection(db: Kysely<DB>, row: Insertable<CalendarConnectionsTable>): Promise<ConnectionRow> {
  return db.insertInto('calendar_connections').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function listConnections(db: Kysely<DB>, userId: number): Promise<ConnectionRow[]> {
  return db.selectFrom('calendar_connections').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

/** One connection; with `userId`, only if it is that user's. */
export async function findConnection(db: Kysely<DB>, id: number, userId?: number): Promise<ConnectionRow | undefined> {
  let q = db.selectFrom('calendar_connections').selectAll().where('id', '=', id);
  if (userId !== undefined) q = q.where('user_id', '=', userId);
  return q.executeTakeFirst();
}

export async function updateConnection(db: Kysely<DB>, id: number, patch: Partial<Omit<ConnectionRow, 'id'>>): Promise<ConnectionRow | undefined> {
  return db.updateTable('calendar_connections').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteConnection(db: Kysely<DB>, id: number, userId: number): Promise<boolean> {
  const r = await db.deleteFrom('calendar_connections').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Takes the connection's sync lease unless another sync (a request, the job, another instance) holds it. */
export async function claimSync(db: Kysely<DB>, id: number, nowIso: string, untilIso: string): Promise<boolean> {
  const r = await db
    .updateTable('calendar_connections')
    .set({ sync_lease_until: untilIso })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('sync_lease_until', 'is', null), eb('sync_lease_until', '<', nowIso)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Connections not synced since `beforeIso` (never synced first), oldest first. */
export async function dueConnections(db: Kysely<DB>, beforeIso: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('calendar_connections')
    .select('id')
    .where((eb) => eb.or([eb('last_synced_at', 'is', null), eb('last_synced_at', '<', beforeIso)]))
    .orderBy('last_synced_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Replaces what a connection contributes to its host's busy time (in the caller's transaction). */
export async function replaceBusy(db: Kysely<DB>, connectionId: number, userId: number, intervals: Interval[]): Promise<void> {
  await db.deleteFrom('calendar_busy').where('connection_id', '=', connectionId).execute();
  const rows = intervals.map((i) => ({ connection_id: connectionId, user_id: userId, start_time: new Date(i.start).toISOString(), end_time: new Date(i.end).toISOString() }));
  // Batches keep each statement under SQLite's and PostgreSQL's parameter limits.
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('calendar_busy').values(rows.slice(i, i + 500)).execute();
}

/** The busy intervals a user's calendars contribute to `[fromIso, toIso)`, with their connection. */
export async function busyOfUser(db: Kysely<DB>, userId: number, fromIso: string, toIso: string) {
  return db
    .selectFrom('calendar_busy')
    .select(['connection_id', 'start_time', 'end_time'])
    .where('user_id', '=', userId)
    .where('start_time', '<', toIso)
    .where('end_time', '>', fromIso)
    .orderBy('start_time')
    .execute();
}

/** The host's connection that receives bookings, if any (the oldest, should several have one). */
export async function writeConnectionOf(db: Kysely<DB>, userId: number) {
  return db
    .selectFrom('calendar_connections')
    .select(['id', 'write_calendar'])
    .where('user_id', '=', userId)
    .where('write_calendar', 'is not', null)
    .orderBy('id')
    .executeTakeFirst();
}

/** How far ahead the host can be booked: the longest max_advance_days of their own and their teams' event types. */
export async function maxAdvanceDays(db: Kysely<DB>, userId: number): Promise<number | null> {
  const row = await db
    .selectFrom('event_types')
    .select((eb) => eb.fn.max('max_advance_days').as('days'))
    .where((eb) => eb.or([eb('owner_id', '=', userId), eb('team_id', 'in', eb.selectFrom('team_members').select('team_id').where('user_id', '=', userId))]))
    .executeTakeFirst();
  return row?.days === null || row?.days === undefined ? null : Number(row.days);
}
