import { sql, type Kysely } from 'kysely';
import type { BeaconStatesTable, DB } from '../../db/schema.js';
import type { Mode } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type BeaconState = BeaconStatesTable;

/** An active device as the device list reads it: its owner's name, its meta as a value (kept as JSON text). */
export type ActiveBeacon = Omit<BeaconState, 'meta'> & { user_name: string; meta: Record<string, unknown> };

/** A device's state with its owner's name, read into an ActiveBeacon (both beacon stores answer it). */
export const activeBeacon = (s: BeaconState, userName: string): ActiveBeacon => ({ ...s, user_name: userName, meta: JSON.parse(s.meta) as Record<string, unknown> });
export interface DeviceKey {
  mode: Mode;
  userId: number;
  deviceKey: string;
}

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

// The memory store's writes (beacon-memory.ts): the state row of a transition, written in the
// transition's transaction, and the batched positions of the devices that moved since the last flush.

/** A device turning on: its row becomes active with the ping's position (inserted when new). */
export async function writeOn(db: Kysely<DB>, s: BeaconState): Promise<void> {
  const { device_id, org_id, active, lat, lng, accuracy, meta, position_at, last_seen_at } = s;
  await db
    .insertInto('beacon_states')
    .values(s)
    .onConflict((oc) => oc.columns(['livemode', 'user_id', 'device_key']).doUpdateSet({ device_id, org_id, active, lat, lng, accuracy, meta, position_at, last_seen_at }))
    .execute();
}

/** A device switched off: its row is inactive, with the last position and time it had. */
export async function writeOff(db: Kysely<DB>, s: BeaconState): Promise<void> {
  const { livemode, user_id, device_key, device_id, org_id, lat, lng, accuracy, meta, position_at, last_seen_at } = s;
  await db
    .updateTable('beacon_states')
    .set({ device_id, org_id, lat, lng, accuracy, meta, position_at, last_seen_at, active: 0 })
    .where('livemode', '=', livemode)
    .where('user_id', '=', user_id)
    .where('device_key', '=', device_key)
    .execute();
}

/** Rows per statement of a batched flush: 12 parameters each stays far below both engines' limits. */
const FLUSH_CHUNK = 500;

/**
 * Writes the positions and last-seen times of active devices, a multi-row upsert per 500 rows.
 * `active` is left as it is (transitions own it), and a row is never moved back to an older
 * last-seen time (a transition that committed meanwhile wrote newer values).
 */
export async function writePositions(db: Kysely<DB>, rows: BeaconState[]): Promise<void> {
  for (let i = 0; i < rows.length; i += FLUSH_CHUNK) {
    await db
      .insertInto('beacon_states')
      .values(rows.slice(i, i + FLUSH_CHUNK))
      .onConflict((oc) =>
        oc
          .columns(['livemode', 'user_id', 'device_key'])
          .doUpdateSet({
            org_id: sql`excluded.org_id`,
            device_id: sql`excluded.device_id`,
            lat: sql`excluded.lat`,
            lng: sql`excluded.lng`,
            accuracy: sql`excluded.accuracy`,
            meta: sql`excluded.meta`,
            position_at: sql`excluded.position_at`,
            last_seen_at: sql`excluded.last_seen_at`,
          })
          .where('beacon_states.last_seen_at', '<=', sql<string>`excluded.last_seen_at`),
      )
      .execute();
  }
}

/** Every active device: the memory store's state at start. */
export async function loadActive(db: Kysely<DB>): Promise<BeaconState[]> {
  return db.selectFrom('beacon_states').selectAll().where('active', '=', 1).execute();
}

/**
 * The names of the registered tracker devices (src/modules/devices) behind beacons: a beacon's
 * `meta.device_id` is the device's `device_id`, and one unrevoked device exists per (user, mode,
 * device_id). Keyed `${user_id}:${device_id}`; devices outside the scope are not named.
 */
export async function deviceNames(db: Kysely<DB>, scope: Scope, keys: readonly { user_id: number; device_id: string }[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('devices')
    .select(['user_id', 'device_id', 'name'])
    .where('revoked_at', 'is', null)
    .where('device_id', 'in', [...new Set(keys.map((k) => k.device_id))])
    .where('user_id', 'in', [...new Set(keys.map((k) => k.user_id))])
    .$call(scoped(scope, 'devices'))
    .execute();
  return new Map(rows.map((r) => [`${r.user_id}:${r.device_id}`, r.name] as const));
}
