import { sql, type Kysely } from 'kysely';
import type { BookingStatus, BookingsTable, DB, Flag } from '../../db/schema.js';

export type BookingRow = BookingsTable;

/** The longest a booking can last (event types allow at most 1440 minutes). */
const MAX_BOOKING_MS = 24 * 60 * 60 * 1000;

export async function insertBooking(db: Kysely<DB>, row: BookingRow): Promise<void> {
  await db.insertInto('bookings').values(row).execute();
}

export async function findBooking(db: Kysely<DB>, id: string): Promise<BookingRow | undefined> {
  return db.selectFrom('bookings').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A half-open range of ISO times. */
export interface IsoRange {
  from: string;
  to: string;
}

/**
 * Confirmed and pending bookings of all the given hosts that touch `bookings`, and the busy
 * intervals their external calendars contributed that touch `calendar` (`event_type_id` null, no
 * buffers of their own, so a caller needs them only where a slot could meet them), in one query
 * (never one per host, never one per source): the busy time of a whole team.
 */
export async function busyBookings(db: Kysely<DB>, hostIds: number[], livemode: Flag, bookings: IsoRange, calendar: IsoRange = bookings, excludeId?: string) {
  if (hostIds.length === 0) return [];
  // A booking lasts at most a day (duration_minutes <= 1440), and calendar intervals are stored
  // cut into pieces of at most a day: one that starts a day before the window cannot reach it.
  // This lower bound turns each index scan into a range of a few rows.
  const earliest = (from: string) => new Date(Date.parse(from) - MAX_BOOKING_MS).toISOString();
  let q = db
    .selectFrom('bookings')
    .select(['id', 'host_id', 'event_type_id', 'start_time', 'end_time', 'buffer_before_minutes', 'buffer_after_minutes'])
    .where('host_id', 'in', hostIds)
    .where('livemode', '=', livemode)
    .where('status', 'in', ['confirmed', 'pending'])
    .where('start_time', '<', bookings.to)
    .where('start_time', '>=', earliest(bookings.from))
    .where('end_time', '>', bookings.from);
  if (excludeId) q = q.where('id', '!=', excludeId);
  // A live calendar is busy in both modes: a test-mode booking must not land on a real meeting
  // either. A calendar a test key connected counts in test mode only: it never blocks live bookings.
  let external = db
    .selectFrom('calendar_busy')
    .select([
      sql<string>`'calendar'`.as('id'),
      'user_id as host_id',
      sql<number | null>`null`.as('event_type_id'),
      'start_time',
      'end_time',
      sql<number>`0`.as('buffer_before_minutes'),
      sql<number>`0`.as('buffer_after_minutes'),
    ])
    .where('user_id', 'in', hostIds)
    .where('start_time', '<', calendar.to)
    .where('start_time', '>=', earliest(calendar.from))
    .where('end_time', '>', calendar.from);
  if (livemode === 1) external = external.where('livemode', '=', 1);
  return q.unionAll(external).execute();
}

/** When each host of a team was last given a booking of the team (round robin picks the oldest). */
export async function lastTeamBookings(db: Kysely<DB>, teamId: number): Promise<Map<number, { last: string; count: number }>> {
  const rows = await db
    .selectFrom('bookings')
    .select(['host_id', (eb) => eb.fn.max('created_at').as('last'), (eb) => eb.fn.countAll<number>().as('n')])
    .where('team_id', '=', teamId)
    .groupBy('host_id')
    .execute();
  return new Map(rows.map((r) => [r.host_id, { last: String(r.last), count: Number(r.n) }]));
}

export interface BookingFilter {
  event_type_id?: number | undefined;
  status?: BookingStatus | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export async function listHostBookings(db: Kysely<DB>, hostId: number, livemode: Flag, f: BookingFilter, limit: number, offset: number) {
  let q = db.selectFrom('bookings').selectAll().where('host_id', '=', hostId).where('livemode', '=', livemode);
  if (f.event_type_id !== undefined) q = q.where('event_type_id', '=', f.event_type_id);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.from) q = q.where('start_time', '>=', f.from);
  if (f.to) q = q.where('start_time', '<', f.to);
  return q.orderBy('start_time').orderBy('id').limit(limit).offset(offset).execute();
}

export async function updateBooking(db: Kysely<DB>, id: string, patch: Partial<BookingRow>): Promise<BookingRow> {
  return db.updateTable('bookings').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Moves a booking's status only from one of `from`; undefined when another request moved it first. */
export async function transition(db: Kysely<DB>, id: string, from: BookingStatus[], patch: Partial<BookingRow>) {
  return db.updateTable('bookings').set(patch).where('id', '=', id).where('status', 'in', from).returningAll().executeTakeFirst();
}
