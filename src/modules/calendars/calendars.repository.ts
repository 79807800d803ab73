import type { Insertable, Kysely } from 'kysely';
import { ownedBy, type OwnerScope } from '../../db/scope.js';
import { flag, type CalendarConnectionsTable, type DB, type Flag, type Mode } from '../../db/schema.js';
import type { DavCalendar } from './dav.js';
import type { Interval } from './expand.js';

/** What discovery found on a CalDAV server (empty for an ICS feed). */
export interface DavState {
  home?: string;
  items?: DavCalendar[];
}

type StoredConnection = Omit<CalendarConnectionsTable, 'id'> & { id: number };
/** A connection as services see it: its discovered calendars and the busy pick as values (stored as JSON text). */
export type ConnectionRow = Omit<StoredConnection, 'calendars' | 'busy_calendars'> & { calendars: DavState; busy_calendars: string[] | null };
type NewConnection = Omit<Insertable<CalendarConnectionsTable>, 'calendars' | 'busy_calendars'> & Pick<ConnectionRow, 'calendars'> & Partial<Pick<ConnectionRow, 'busy_calendars'>>;

/** A stored row read into a ConnectionRow. */
const valuesOf = (r: StoredConnection): ConnectionRow => ({
  ...r,
  calendars: JSON.parse(r.calendars) as DavState,
  busy_calendars: r.busy_calendars === null ? null : (JSON.parse(r.busy_calendars) as string[]),
});
const maybe = (r: StoredConnection | undefined) => (r === undefined ? undefined : valuesOf(r));

/** The stored form of the fields given. */
function stored<T extends Partial<ConnectionRow>>(row: T): Omit<T, 'calendars' | 'busy_calendars'> & Partial<Pick<StoredConnection, 'calendars' | 'busy_calendars'>> {
  const { calendars, busy_calendars, ...rest } = row;
  return {
    ...rest,
    ...(calendars === undefined ? {} : { calendars: JSON.stringify(calendars) }),
    ...(busy_calendars === undefined ? {} : { busy_calendars: busy_calendars === null ? null : JSON.stringify(busy_calendars) }),
  };
}

export async function insertConnection(db: Kysely<DB>, row: NewConnection): Promise<ConnectionRow> {
  return valuesOf(await db.insertInto('calendar_connections').values(stored(row) as Insertable<CalendarConnectionsTable>).returningAll().executeTakeFirstOrThrow());
}

/** The owner's connections in the credential's mode. */
export async function listConnections(db: Kysely<DB>, owner: OwnerScope): Promise<ConnectionRow[]> {
  return (await db.selectFrom('calendar_connections').selectAll().$call(ownedBy(owner, 'calendar_connections')).orderBy('id').execute()).map(valuesOf);
}

/** One connection; with `owner`, only if it is that user's and of that mode. */
export async function findConnection(db: Kysely<DB>, id: number, owner?: OwnerScope): Promise<ConnectionRow | undefined> {
  let q = db.selectFrom('calendar_connections').selectAll().where('id', '=', id);
  if (owner !== undefined) q = q.$call(ownedBy(owner, 'calendar_connections'));
  return maybe(await q.executeTakeFirst());
}

export async function updateConnection(db: Kysely<DB>, id: number, patch: Partial<Omit<ConnectionRow, 'id' | 'busy_count'>>): Promise<ConnectionRow | undefined> {
  return maybe(await db.updateTable('calendar_connections').set(stored(patch)).where('id', '=', id).returningAll().executeTakeFirst());
}

export async function deleteConnection(db: Kysely<DB>, id: number, owner: OwnerScope): Promise<boolean> {
  const r = await db.deleteFrom('calendar_connections').where('id', '=', id).$call(ownedBy(owner, 'calendar_connections')).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/**
 * Takes the connection's sync lease unless another sync (a request, the job, another instance)
 * holds it. A halted connection (over a safety limit) is taken only when its owner asks
 * (`resume`), which also lifts the halt.
 */
export async function claimSync(db: Kysely<DB>, id: number, nowIso: string, untilIso: string, resume = false): Promise<boolean> {
  let q = db
    .updateTable('calendar_connections')
    .set(resume ? { sync_lease_until: untilIso, halted_at: null } : { sync_lease_until: untilIso })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('sync_lease_until', 'is', null), eb('sync_lease_until', '<', nowIso)]));
  if (!resume) q = q.where('halted_at', 'is', null);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Connections not synced since `beforeIso` (never synced first), oldest first; halted ones never. */
export async function dueConnections(db: Kysely<DB>, beforeIso: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('calendar_connections')
    .select('id')
    .where('halted_at', 'is', null)
    .where((eb) => eb.or([eb('last_synced_at', 'is', null), eb('last_synced_at', '<', beforeIso)]))
    .orderBy('last_synced_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Replaces what a connection contributes to its host's busy time (in the caller's transaction) and
 * sets the connection's `busy_count` with it: the one place that count is kept.
 */
export async function replaceBusy(db: Kysely<DB>, connectionId: number, userId: number, livemode: Flag, intervals: Interval[]): Promise<void> {
  await db.deleteFrom('calendar_busy').where('connection_id', '=', connectionId).execute();
  const rows = intervals.map((i) => ({ connection_id: connectionId, user_id: userId, livemode, start_time: new Date(i.start).toISOString(), end_time: new Date(i.end).toISOString() }));
  // Batches keep each statement under SQLite's and PostgreSQL's parameter limits.
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('calendar_busy').values(rows.slice(i, i + 500)).execute();
  await db.updateTable('calendar_connections').set({ busy_count: rows.length }).where('id', '=', connectionId).execute();
}

/** The busy intervals the owner's calendars of one mode contribute to `[fromIso, toIso)`, with their connection. */
export async function busyOfUser(db: Kysely<DB>, owner: OwnerScope, fromIso: string, toIso: string) {
  return db
    .selectFrom('calendar_busy')
    .select(['connection_id', 'start_time', 'end_time'])
    .$call(ownedBy(owner, 'calendar_busy'))
    .where('start_time', '<', toIso)
    .where('end_time', '>', fromIso)
    .orderBy('start_time')
    .execute();
}

/**
 * The host's connection that receives bookings of one mode, if any (the oldest, should several
 * have one): a live booking is written only to a live connection, never to one a test key made.
 */
export async function writeConnectionOf(db: Kysely<DB>, userId: number, mode: Mode) {
  return db
    .selectFrom('calendar_connections')
    .select(['id', 'write_calendar'])
    .where('user_id', '=', userId)
    .where('livemode', '=', flag(mode === 'live'))
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
