import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Mode } from '../../db/schema.js';
import type { Scope } from '../../db/scope.js';
import * as repo from './beacons.repository.js';
import type { BeaconState, DeviceKey, Ping } from './beacons.repository.js';
import { createRedisBeaconStore } from './redis-beacon-store.js';

export type ActiveBeacon = BeaconState & { user_name: string };
/** The lean form the responder search reads: one row per active device with a position. */
export type DevicePosition = repo.DevicePosition;

/**
 * Where the live state of beaconing devices lives: the database (one instance, or several on
 * PostgreSQL), or Redis when REDIS_URL is set (shared by every instance without a durable commit
 * per ping). Both make the same promises: of concurrent pings of a device that is off, exactly
 * one turns it on; of concurrent switch-offs exactly one returns the state; a position taken
 * before the stored one never replaces it. `db` is the caller's transaction (or the database):
 * the database store writes through it, the Redis store ignores it.
 */
export interface BeaconStore {
  readonly kind: 'database' | 'redis';
  recordPing(db: Kysely<DB>, key: DeviceKey, ping: Ping): Promise<{ turnedOn: boolean; moved: boolean }>;
  /** Switches a device off; its state when this call did it. With `silentBefore`, only if not seen since then. */
  switchOff(db: Kysely<DB>, key: DeviceKey, silentBefore?: string): Promise<BeaconState | undefined>;
  /** Active devices of the scope with their owner's name, most recently seen first. */
  active(db: Kysely<DB>, scope: Scope): Promise<ActiveBeacon[]>;
  /**
   * Active devices of one org and mode with a position, seen at `seenSince` or later, inside `box`
   * when given (a prefilter: callers measure the exact distance). No names, no meta: it is read
   * for every device of an org on each responder search.
   */
  positions(db: Kysely<DB>, orgId: number, mode: Mode, seenSince: string, box?: repo.Box): Promise<DevicePosition[]>;
  /** Active devices not heard from since `beforeIso`. */
  silent(db: Kysely<DB>, beforeIso: string, limit: number): Promise<DeviceKey[]>;
}

export const databaseBeaconStore: BeaconStore = {
  kind: 'database',
  recordPing: repo.recordPing,
  switchOff: repo.switchOff,
  positions: repo.devicePositions,
  active: async (db, scope) => (await repo.activeBeacons(db, scope)).map((b) => ({ ...b, user_name: b.user_name })),
  silent: async (db, beforeIso, limit) =>
    (await repo.silentBeacons(db, beforeIso, limit)).map((s) => ({ mode: s.livemode === 1 ? ('live' as const) : ('test' as const), userId: s.user_id, deviceKey: s.device_key })),
};

const stores = new WeakMap<AppContext, BeaconStore>();

/** The context's beacon store: Redis when the instance has a Redis connection, else the database. */
export function beaconStore(ctx: AppContext): BeaconStore {
  let store = stores.get(ctx);
  if (!store) {
    store = ctx.redis ? createRedisBeaconStore(ctx.redis, ctx.config.redisPrefix, ctx.log) : databaseBeaconStore;
    stores.set(ctx, store);
  }
  return store;
}
