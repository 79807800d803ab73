import type { Kysely } from 'kysely';
import type { BeaconStatesTable, DB } from '../../db/schema.js';
import { flag, type Mode } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type BeaconState = BeaconStatesTable;
export interface DeviceKey {
  mode: Mode;
  userId: number;
  deviceKey: string;
}

const byKey = (k: DeviceKey) => ({ livemode: flag(k.mode === 'live'), user_id: k.userId, device_key: k.deviceKey });

export interface Ping {
  orgId: number;
  deviceId: string | null;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: string;
  positionAt: string;
  now: string;
}

/**
 * Records a beacon. Every step is a conditional write, so concurrent pings of one device (on one
 * instance or several) agree: exactly one of them turns the device on, and a position taken
 * before the stored one never replaces it.
 */
export async function recordPing(db: Kysely<DB>, k: DeviceKey, p: Ping): Promise<{ turnedOn: boolean; moved: boolean }> {
  const key = byKey(k);
  const position = { org_id: p.orgId, device_id: p.deviceId, lat: p.lat, lng: p.lng, accuracy: p.accuracy, meta: p.meta, position_at: p.positionAt };
  const inserted = await db
    .insertInto('beacon_states')
    .values({ ...key, ...position, active: 1, last_seen_at: p.now })
    .onConflict((oc) => oc.columns(['livemode', 'user_id', 'device_key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { turnedOn: true, moved: true };

  const on = await db
    .updateTable('beacon_states')
    .set({ active: 1, org_id: p.orgId })
    .where('livemode', '=', key.livemode)
    .where('user_id', '=', key.user_id)
    .where('device_key', '=', key.device_key)
    .where('active', '=', 0)
    .executeTakeFirst();
  const turnedOn = Number(on.numUpdatedRows) === 1;
  const moved = await db
    .updateTable('beacon_states')
    .set({ ...position, last_seen_at: p.now })
    .where('livemode', '=', key.livemode)
    .where('user_id', '=', key.user_id)
    .where('device_key', '=', key.device_key)
    .where('position_at', '<=', p.positionAt)
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 0) {
    await db
      .updateTable('beacon_states')
      .set({ last_seen_at: p.now })
      .where('livemode', '=', key.livemode)
      .where('user_id', '=', key.user_id)
      .where('device_key', '=', key.device_key)
      .execute();
  }
  return { turnedOn, moved: turnedOn || Number(moved.numUpdatedRows) === 1 };
}

/**
 * Switches a device off; returns its state when this call did it (so beacon_off is written once).
 * With `silentBefore`, only a device not seen since then (a ping that came after the sweeper
 * listed it keeps it on).
 */
export async function switchOff(db: Kysely<DB>, k: DeviceKey, silentBefore?: string): Promise<BeaconState | undefined> {
  const key = byKey(k);
  let q = db
    .updateTable('beacon_states')
    .set({ active: 0 })
    .where('livemode', '=', key.livemode)
    .where('user_id', '=', key.user_id)
    .where('device_key', '=', key.device_key)
    .where('active', '=', 1);
  if (silentBefore !== undefined) q = q.where('last_seen_at', '<', silentBefore);
  return q.returningAll().executeTakeFirst();
}

/** Active devices of the scope with their owner's name: the live map's first paint. */
export async function activeBeacons(db: Kysely<DB>, scope: Scope) {
  return db
    .selectFrom('beacon_states')
    .innerJoin('users', 'users.id', 'beacon_states.user_id')
    .selectAll('beacon_states')
    .select('users.name as user_name')
    .where('beacon_states.active', '=', 1)
    .$call(scoped(scope, 'beacon_states'))
    .orderBy('beacon_states.last_seen_at', 'desc')
    .execute();
}

/** Active devices not heard from since `beforeIso`. */
export async function silentBeacons(db: Kysely<DB>, beforeIso: string, limit: number): Promise<BeaconState[]> {
  return db.selectFrom('beacon_states').selectAll().where('active', '=', 1).where('last_seen_at', '<', beforeIso).limit(limit).execute();
}

export interface DevicePosition {
  user_id: number;
  device_id: string | null;
  lat: number;
  lng: number;
  last_seen_at: string;
}

/** A latitude/longitude rectangle (the responder search's prefilter). */
export interface Box {
  minLat: number;
  maxLat: number;
  minLng: number;
  maxLng: number;
}

/** Active, recently seen devices of one org and mode that have a position (one indexed range read). */
export async function devicePositions(db: Kysely<DB>, orgId: number, mode: Mode, seenSince: string, box?: Box): Promise<DevicePosition[]> {
  let q = db
    .selectFrom('beacon_states')
    .select(['user_id', 'device_id', 'lat', 'lng', 'last_seen_at'])
    .where('org_id', '=', orgId)
    .where('livemode', '=', flag(mode === 'live'))
    .where('active', '=', 1)
    .where('last_seen_at', '>=', seenSince)
    .where('lat', 'is not', null)
    .where('lng', 'is not', null);
  if (box) q = q.where('lat', '>=', box.minLat).where('lat', '<=', box.maxLat).where('lng', '>=', box.minLng).where('lng', '<=', box.maxLng);
  return (await q.execute()) as DevicePosition[];
}
