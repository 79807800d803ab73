import type { Insertable, Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.js';
import { flag } from '../../db/schema.js';
import type { PositionTracksTable } from './tracks.tables.js';

export type TrackRow = Insertable<PositionTracksTable>;

/** Rows per INSERT: 8 values each stays under SQLite's 32,766 bound parameters. */
const INSERT_CHUNK = 2_000;

/** One multi-row insert (more only past INSERT_CHUNK rows); no transaction of its own. */
export async function appendPositions(db: Kysely<DB>, rows: readonly TrackRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) await db.insertInto('position_tracks').values(rows.slice(i, i + INSERT_CHUNK)).execute();
}

/** The rows whose user and org still exist. */
export async function stillKnown(db: Kysely<DB>, rows: readonly TrackRow[]): Promise<TrackRow[]> {
  const users = new Set((await db.selectFrom('users').select('id').where('id', 'in', [...new Set(rows.map((r) => r.user_id))]).execute()).map((r) => r.id));
  const orgs = new Set((await db.selectFrom('orgs').select('id').where('id', 'in', [...new Set(rows.map((r) => r.org_id))]).execute()).map((r) => r.id));
  return rows.filter((r) => users.has(r.user_id) && orgs.has(r.org_id));
}

/** Orgs that keep tracks, with their days. */
export async function orgsKeepingTracks(db: Kysely<DB>): Promise<{ org_id: number; tracks_days: number }[]> {
  return db.selectFrom('retention_settings').select(['org_id', 'tracks_days']).where('tracks_days', '>', 0).execute();
}

export interface TrackScope {
  mode: Mode;
  userId: number;
  deviceId: string;
  /** The orgs whose points the reader may see; undefined: all (the person themself). */
  orgIds?: readonly number[];
}

export async function trackPoints(db: Kysely<DB>, s: TrackScope, from: string, to: string) {
  let q = db
    .selectFrom('position_tracks')
    .select(['lat', 'lng', 'accuracy', 'recorded_at'])
    .where('livemode', '=', flag(s.mode === 'live'))
    .where('user_id', '=', s.userId)
    .where('device_id', '=', s.deviceId)
    .where('recorded_at', '>=', from)
    .where('recorded_at', '<=', to);
  if (s.orgIds) {
    if (s.orgIds.length === 0) return [];
    q = q.where('org_id', 'in', s.orgIds);
  }
  return q.orderBy('recorded_at').orderBy('id').execute();
}

/** Up to `limit` ids of an org's positions older than `before`. */
export async function oldTrackIds(db: Kysely<DB>, orgId: number, mode: Mode, before: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('position_tracks')
    .select('id')
    .where('org_id', '=', orgId)
    .where('livemode', '=', flag(mode === 'live'))
    .where('recorded_at', '<', before)
    .orderBy('recorded_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function deleteTrackIds(db: Kysely<DB>, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.deleteFrom('position_tracks').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Every position of a person (their export), oldest first. */
export async function positionsOf(db: Kysely<DB>, userId: number, mode: Mode) {
  return db
    .selectFrom('position_tracks')
    .select(['org_id', 'livemode', 'device_id', 'lat', 'lng', 'accuracy', 'recorded_at'])
    .where('user_id', '=', userId)
    .where('livemode', '=', flag(mode === 'live'))
    .orderBy('recorded_at')
    .orderBy('id')
    .execute();
}

export async function deletePositionsOf(db: Kysely<DB>, userId: number): Promise<number> {
  const r = await db.deleteFrom('position_tracks').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * The field terminals of some orgs in one mode: devices known by their beacon state or their stored
 * track (a `meta.device_id` that is not a registered tracker app of its user), with their owner.
 */
export async function fieldTerminals(db: Kysely<DB>, mode: Mode, orgIds: readonly number[]) {
  if (orgIds.length === 0) return { states: [], tracked: [] };
  const live = flag(mode === 'live');
  const states = await db
    .selectFrom('beacon_states as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['b.user_id', 'u.name as user_name', 'b.device_key', 'b.org_id', 'b.active', 'b.lat', 'b.lng', 'b.accuracy', 'b.position_at', 'b.last_seen_at'])
    .where('b.livemode', '=', live)
    .where('b.org_id', 'in', orgIds)
    .where('b.device_key', '<>', 'user')
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('devices as d').select('d.id').whereRef('d.user_id', '=', 'b.user_id').whereRef('d.device_id', '=', 'b.device_key').where('d.livemode', '=', live))),
    )
    .execute();
  const tracked = await db
    .selectFrom('position_tracks as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select(['p.user_id', 'u.name as user_name', 'p.device_id', 'p.org_id'])
    .select((eb) => eb.fn.max('p.recorded_at').as('last_at'))
    .where('p.livemode', '=', live)
    .where('p.org_id', 'in', orgIds)
    .where('p.device_id', '<>', 'user')
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('devices as d').select('d.id').whereRef('d.user_id', '=', 'p.user_id').whereRef('d.device_id', '=', 'p.device_id').where('d.livemode', '=', live))),
    )
    .groupBy(['p.user_id', 'u.name', 'p.device_id', 'p.org_id'])
    .execute();
  return { states, tracked };
}

/** Which user and orgs a device id stands for in one mode, among some orgs (beacon states, tracks, tracker apps). */
export async function ownersOfDeviceId(db: Kysely<DB>, mode: Mode, deviceId: string, orgIds: readonly number[]) {
  if (orgIds.length === 0) return [];
  const live = flag(mode === 'live');
  const a = await db.selectFrom('beacon_states').select(['user_id', 'org_id']).where('livemode', '=', live).where('device_key', '=', deviceId).where('org_id', 'in', orgIds).execute();
  const b = await db.selectFrom('position_tracks').select(['user_id', 'org_id']).distinct().where('livemode', '=', live).where('device_id', '=', deviceId).where('org_id', 'in', orgIds).execute();
  const c = await db.selectFrom('devices').select(['user_id', 'org_id']).where('livemode', '=', live).where('device_id', '=', deviceId).where('org_id', 'in', orgIds).execute();
  return [...a, ...b, ...c];
}

export async function trackerApp(db: Kysely<DB>, mode: Mode, id: number, orgIds: readonly number[]) {
  if (orgIds.length === 0) return undefined;
  return db
    .selectFrom('devices')
    .select(['id', 'user_id', 'org_id', 'device_id'])
    .where('id', '=', id)
    .where('livemode', '=', flag(mode === 'live'))
    .where('org_id', 'in', orgIds)
    .executeTakeFirst();
}
