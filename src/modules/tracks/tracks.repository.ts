import { sql, type Insertable, type Kysely } from 'kysely';
import { onSqlite } from '../../db/fixed.js';
import type { DB, Mode } from '../../db/schema.js';
import { flag } from '../../db/schema.js';
import type { PositionTracksTable } from './tracks.tables.js';

export type TrackRow = Insertable<PositionTracksTable>;

/** Rows per INSERT: 8 values each stays under SQLite's 32,766 bound parameters. */
const INSERT_CHUNK = 2_000;

/**
 * Appends to `track_staging` (a flush), no transaction of its own. SQLite: one multi-row insert
 * (more only past INSERT_CHUNK rows). PostgreSQL: one statement of eight parameters whatever the
 * number of rows, each an array of one column (`insert ... select from unnest(...)`): the same text
 * every flush, where a multi-row insert of 2,000 rows has 16,000 parameters for Node to build and
 * for PostgreSQL to parse and plan (#40: the tracks' share of the beacon path's cost with observers).
 */
export async function appendPositions(db: Kysely<DB>, rows: readonly TrackRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (!onSqlite(db)) {
    const column = <K extends keyof TrackRow>(k: K) => rows.map((r) => r[k] ?? null);
    await sql`insert into track_staging (${COLUMNS})
      select * from unnest(${column('org_id')}::int8[], ${column('livemode')}::int4[], ${column('user_id')}::int8[], ${column('device_id')}::text[],
        ${column('lat')}::float8[], ${column('lng')}::float8[], ${column('accuracy')}::float8[], ${column('recorded_at')}::text[])`.execute(db);
    return;
  }
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) await db.insertInto('track_staging').values(rows.slice(i, i + INSERT_CHUNK)).execute();
}

/** The range of staged ids, or undefined when nothing is staged. */
export async function stagedIds(db: Kysely<DB>): Promise<{ min: number; max: number } | undefined> {
  const r = await db
    .selectFrom('track_staging')
    .select((eb) => [eb.fn.min('id').as('min'), eb.fn.max('id').as('max')])
    .executeTakeFirst();
  return r?.min === null || r?.min === undefined ? undefined : { min: Number(r.min), max: Number(r.max) };
}

const COLUMNS = sql.raw('org_id, livemode, user_id, device_id, lat, lng, accuracy, recorded_at');
/** `position_tracks_device_idx`'s order: each device's staged positions land together on its pages. */
const DEVICE_ORDER = sql.raw('livemode, user_id, device_id, recorded_at');

/**
 * Moves the staged positions with ids up to `upTo` to `position_tracks`, in the device index's order;
 * answers how many moved. Each staged row moves once however many instances move at the same time:
 * on PostgreSQL one statement deletes the rows and inserts what its delete returned (a row another
 * instance deleted first is not returned); on SQLite the caller's transaction holds the write lock
 * over the insert and the delete.
 */
export async function moveStaged(db: Kysely<DB>, upTo: number): Promise<number> {
  if (!onSqlite(db)) {
    const r = await sql`with moved as (delete from track_staging where id <= ${upTo} returning ${COLUMNS})
      insert into position_tracks (${COLUMNS}) select ${COLUMNS} from moved order by ${DEVICE_ORDER}`.execute(db);
    return Number(r.numAffectedRows ?? 0);
  }
  await sql`insert into position_tracks (${COLUMNS}) select ${COLUMNS} from track_staging where id <= ${upTo} order by ${DEVICE_ORDER}, id`.execute(db);
  const r = await db.deleteFrom('track_staging').where('id', '<=', upTo).executeTakeFirst();
  return Number(r.numDeletedRows);
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

type Stored = 'position_tracks' | 'track_staging';

/** Rows of both tables in time order (a staged position may be older than a moved one: a tracker's late upload). */
function inTimeOrder<T extends { recorded_at: string }>(moved: T[], staged: T[]): T[] {
  if (staged.length === 0) return moved;
  return moved.concat(staged).sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : 0));
}

/** A device's positions in a range, oldest first: moved and still staged. */
export async function trackPoints(db: Kysely<DB>, s: TrackScope, from: string, to: string) {
  const [moved, staged] = await Promise.all([pointsIn(db, 'position_tracks', s, from, to), pointsIn(db, 'track_staging', s, from, to)]);
  return inTimeOrder(moved, staged);
}

async function pointsIn(db: Kysely<DB>, table: Stored, s: TrackScope, from: string, to: string) {
  let q = db
    .selectFrom(table as 'position_tracks')
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

/** Every position of a person (their export), oldest first: moved and still staged. */
export async function positionsOf(db: Kysely<DB>, userId: number, mode: Mode) {
  const [moved, staged] = await Promise.all([positionsIn(db, 'position_tracks', userId, mode), positionsIn(db, 'track_staging', userId, mode)]);
  return inTimeOrder(moved, staged);
}

async function positionsIn(db: Kysely<DB>, table: Stored, userId: number, mode: Mode) {
  return db
    .selectFrom(table as 'position_tracks')
    .select(['org_id', 'livemode', 'device_id', 'lat', 'lng', 'accuracy', 'recorded_at'])
    .where('user_id', '=', userId)
    .where('livemode', '=', flag(mode === 'live'))
    .orderBy('recorded_at')
    .orderBy('id')
    .execute();
}

export async function deletePositionsOf(db: Kysely<DB>, userId: number): Promise<number> {
  const staged = await db.deleteFrom('track_staging').where('user_id', '=', userId).executeTakeFirst();
  const r = await db.deleteFrom('position_tracks').where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) + Number(staged.numDeletedRows);
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
  const [moved, staged] = await Promise.all([trackedIn(db, 'position_tracks', live, orgIds), trackedIn(db, 'track_staging', live, orgIds)]);
  // A device with moved and staged positions: one entry, its latest position's time.
  const tracked = new Map<string, (typeof moved)[number]>();
  for (const r of moved.concat(staged)) {
    const k = `${r.user_id}|${r.org_id}|${r.device_id}`;
    const known = tracked.get(k);
    if (!known || String(r.last_at) > String(known.last_at)) tracked.set(k, r);
  }
  return { states, tracked: [...tracked.values()] };
}

/** The devices of a table of positions (not registered tracker apps), with their person and latest time. */
async function trackedIn(db: Kysely<DB>, table: Stored, live: 0 | 1, orgIds: readonly number[]) {
  return db
    .selectFrom(`${table} as p` as 'position_tracks as p')
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
}

/** Which user and orgs a device id stands for in one mode, among some orgs (beacon states, tracks, tracker apps). */
export async function ownersOfDeviceId(db: Kysely<DB>, mode: Mode, deviceId: string, orgIds: readonly number[]) {
  if (orgIds.length === 0) return [];
  const live = flag(mode === 'live');
  const a = await db.selectFrom('beacon_states').select(['user_id', 'org_id']).where('livemode', '=', live).where('device_key', '=', deviceId).where('org_id', 'in', orgIds).execute();
  const b = await db.selectFrom('position_tracks').select(['user_id', 'org_id']).distinct().where('livemode', '=', live).where('device_id', '=', deviceId).where('org_id', 'in', orgIds).execute();
  const staged = await db.selectFrom('track_staging').select(['user_id', 'org_id']).distinct().where('livemode', '=', live).where('device_id', '=', deviceId).where('org_id', 'in', orgIds).execute();
  const c = await db.selectFrom('devices').select(['user_id', 'org_id']).where('livemode', '=', live).where('device_id', '=', deviceId).where('org_id', 'in', orgIds).execute();
  return [...a, ...b, ...staged, ...c];
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
