import type { Kysely } from 'kysely';
import type { DB, DevicesTable } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type DeviceRow = Omit<DevicesTable, 'id'> & { id: number };
/** A device with its beacon state, when it has one (last position, whether it is on). */
export type ListedDevice = DeviceRow & {
  user_name: string;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  position_at: string | null;
  active: number | null;
};

export async function insertDevice(db: Kysely<DB>, row: Omit<DeviceRow, 'id'>): Promise<DeviceRow> {
  return db.insertInto('devices').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The unrevoked device a token belongs to, by the token's SHA-256. */
export async function findActiveDeviceByToken(db: Kysely<DB>, tokenHash: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('devices').selectAll().where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).executeTakeFirst();
}

/** An unrevoked device of the scope. */
export async function findDevice(db: Kysely<DB>, scope: Scope, id: number): Promise<DeviceRow | undefined> {
  return db.selectFrom('devices').selectAll().where('id', '=', id).where('revoked_at', 'is', null).$call(scoped(scope, 'devices')).executeTakeFirst();
}

/**
 * Unrevoked devices of the scope that `userId` owns, or every one of `allOf` (orgs the caller
 * administers), with their beacon state joined on its key (mode, owner, device_id); only devices
 * whose owner is still a member of the device's org.
 */
export async function listDevices(db: Kysely<DB>, scope: Scope, userId: number, allOf: readonly number[]): Promise<ListedDevice[]> {
  return db
    .selectFrom('devices')
    .innerJoin('users', 'users.id', 'devices.user_id')
    .leftJoin('beacon_states as b', (j) =>
      j.onRef('b.livemode', '=', 'devices.livemode').onRef('b.user_id', '=', 'devices.user_id').onRef('b.device_key', '=', 'devices.device_id'),
    )
    .selectAll('devices')
    .select(['users.name as user_name', 'b.lat', 'b.lng', 'b.accuracy', 'b.position_at', 'b.active'])
    .where('devices.revoked_at', 'is', null)
    .$call(scoped(scope, 'devices'))
    // A device whose owner left its org (or was removed) is no longer the org's (issue #31 F12).
    .where((eb) => eb.exists(eb.selectFrom('memberships as m').select('m.user_id').whereRef('m.org_id', '=', 'devices.org_id').whereRef('m.user_id', '=', 'devices.user_id')))
    .where((eb) => (allOf.length > 0 ? eb.or([eb('devices.user_id', '=', userId), eb('devices.org_id', 'in', [...allOf])]) : eb('devices.user_id', '=', userId)))
    .orderBy('devices.id', 'desc')
    .execute();
}

export async function updateDevice(db: Kysely<DB>, id: number, set: Partial<Pick<DeviceRow, 'name' | 'org_id' | 'updated_at'>>): Promise<DeviceRow | undefined> {
  return db.updateTable('devices').set(set).where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
}

/** Revokes a device; false when it was already revoked (a concurrent revoke won). */
export async function revokeDevice(db: Kysely<DB>, id: number, nowIso: string): Promise<boolean> {
  const r = await db.updateTable('devices').set({ revoked_at: nowIso, updated_at: nowIso }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Marks a fix of the device as seen, inside the fix's transaction. It also takes the row's lock,
 * so a revoke running at the same time either waits for the fix (and then switches the beacon
 * off) or wins (and the fix sees zero rows and is refused): a revoked device never stays on.
 */
export async function touchDevice(db: Kysely<DB>, id: number, nowIso: string): Promise<boolean> {
  const r = await db.updateTable('devices').set({ last_seen_at: nowIso }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
