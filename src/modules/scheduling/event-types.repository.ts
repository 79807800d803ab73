import { sql, type Kysely } from 'kysely';
import type { DB, EventTypesTable, Flag } from '../../db/schema.js';

import type { Schedule } from './availability.js';

type StoredEventType = Omit<EventTypesTable, 'id'> & { id: number };
/** An event type as services see it: its availability and blackout dates as values (stored as JSON text). */
export type EventTypeRow = Omit<StoredEventType, 'availability' | 'blackout_dates'> & { availability: Schedule; blackout_dates: string[] };

/** The stored form of the fields given (JSON text for the availability and the blackout dates). */
function stored(row: Partial<Omit<EventTypeRow, 'id'>>): Partial<Omit<StoredEventType, 'id'>> {
  const { availability, blackout_dates, ...rest } = row;
  return {
    ...rest,
    ...(availability === undefined ? {} : { availability: JSON.stringify(availability) }),
    ...(blackout_dates === undefined ? {} : { blackout_dates: JSON.stringify(blackout_dates) }),
  };
}
/** A row and how many of its owner's personal event types (same mode) are older (the lock rule). */
export type PositionedEventType = EventTypeRow & { position: number };

const position = sql<number>`(select count(*) from event_types e2
  where e2.owner_id = event_types.owner_id and e2.livemode = event_types.livemode
  and e2.team_id is null and event_types.team_id is null and e2.id < event_types.id)`.as('position');

const withPosition = (db: Kysely<DB>) => db.selectFrom('event_types').selectAll().select(position);
const numbered = (rows: (StoredEventType & { position: number | string })[]): PositionedEventType[] =>
  rows.map((r) => ({ ...r, availability: JSON.parse(r.availability) as Schedule, blackout_dates: JSON.parse(r.blackout_dates) as string[], position: Number(r.position) }));

export async function insertEventType(db: Kysely<DB>, row: Omit<EventTypeRow, 'id'>): Promise<number> {
  const r = await db.insertInto('event_types').values(stored(row) as Omit<StoredEventType, 'id'>).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function findEventType(db: Kysely<DB>, id: number): Promise<PositionedEventType | undefined> {
  return numbered(await withPosition(db).where('id', '=', id).execute())[0];
}

export async function findPersonalBySlug(db: Kysely<DB>, ownerId: number, slug: string, livemode: Flag) {
  return numbered(await withPosition(db).where('owner_id', '=', ownerId).where('team_id', 'is', null).where('slug', '=', slug).where('livemode', '=', livemode).execute())[0];
}

export async function findTeamBySlug(db: Kysely<DB>, teamId: number, slug: string, livemode: Flag) {
  return numbered(await withPosition(db).where('team_id', '=', teamId).where('slug', '=', slug).where('livemode', '=', livemode).execute())[0];
}

/** Personal event types of a user and those of the teams given, in one mode, oldest first. */
export async function listVisible(db: Kysely<DB>, ownerId: number, teamIds: number[], livemode: Flag): Promise<PositionedEventType[]> {
  const rows = await withPosition(db)
    .where('livemode', '=', livemode)
    .where((eb) => eb.or([eb.and([eb('owner_id', '=', ownerId), eb('team_id', 'is', null)]), ...(teamIds.length ? [eb('team_id', 'in', teamIds)] : [])]))
    .orderBy('id')
    .execute();
  return numbered(rows);
}

export async function countPersonal(db: Kysely<DB>, ownerId: number, livemode: Flag): Promise<number> {
  const r = await db
    .selectFrom('event_types')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .where('team_id', 'is', null)
    .where('livemode', '=', livemode)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function updateEventType(db: Kysely<DB>, id: number, patch: Partial<Omit<EventTypeRow, 'id'>>): Promise<void> {
  await db.updateTable('event_types').set(stored(patch)).where('id', '=', id).execute();
}

export async function deleteEventType(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('event_types').where('id', '=', id).execute();
}

/** Teams of the orgs a user belongs to (which team event types they may see). */
export async function teamIdsOfMember(db: Kysely<DB>, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('teams')
    .innerJoin('memberships', 'memberships.org_id', 'teams.org_id')
    .select('teams.id')
    .where('memberships.user_id', '=', userId)
    .execute();
  return rows.map((r) => r.id);
}
