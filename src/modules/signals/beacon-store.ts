import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.js';
import type { Scope } from '../../db/scope.js';
import type { Tx } from '../../db/transaction.js';
import type * as repo from './beacons.repository.js';
import type { BeaconState, DeviceKey, Ping } from './beacons.repository.js';

export type ActiveBeacon = repo.ActiveBeacon;
/** The lean form the responder search reads: one row per active device with a position. */
export type DevicePosition = repo.DevicePosition;

export interface PingOptions {
  /**
   * Called synchronously right before the ping changes the state; throws to refuse it (a
   * tracker's token revoked meanwhile). Nothing is awaited between the call and the change.
   */
  check?: () => void;
  /** Runs in the transaction that makes a turn-on durable (the `beacon_on` audit row, its event). */
  onTurnOn?: (tx: Tx) => Promise<void>;
}
/** Runs in the transaction that makes a switch-off durable (the `beacon_off` audit row, its event). */
export type TurnOffHook = (tx: Tx, state: BeaconState) => Promise<void>;

/**
 * Where the live state of beaconing devices lives: this process's memory (one instance, without
 * Redis; transitions written at once, positions flushed in batches: beacon-memory.ts), or Redis
 * when REDIS_URL is set (shared by every instance). Both make the same promises: of concurrent
 * pings of a device that is off, exactly one turns it on (and runs `onTurnOn`); of concurrent
 * switch-offs exactly one returns the state (and runs its hook); a position taken before the
 * stored one never replaces it. `db` is only read from (names of the owners).
 */
export interface BeaconStore {
  readonly kind: 'memory' | 'redis';
  /** Resolves once the state is loaded (the memory store reads the active rows on its first use; every other call waits for it). */
  ready(): Promise<void>;
  recordPing(db: Kysely<DB>, key: DeviceKey, ping: Ping, opts?: PingOptions): Promise<{ turnedOn: boolean; moved: boolean }>;
  /**
   * recordPing for a device that is on, synchronously (no promise: the hot path of a tracker or a
   * phone every few seconds): undefined, having changed nothing, when it cannot be done so (the
   * device is off, a transition of it is under way, the state is still loading), and then the caller
   * calls recordPing. `guard.check` is called as PingOptions.check is. Absent: always recordPing.
   */
  pingActive?(key: DeviceKey, ping: Ping, guard?: { check(): void }): { turnedOn: false; moved: boolean } | undefined;
  /** Switches a device off; its state when this call did it. With `silentBefore`, only if not seen since then. */
  switchOff(db: Kysely<DB>, key: DeviceKey, silentBefore?: string, onOff?: TurnOffHook): Promise<BeaconState | undefined>;
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
  /** The live state of each device (undefined: the store knows none), for the device list. */
  lookup(keys: DeviceKey[]): Promise<(BeaconState | undefined)[]>;
  /** Makes what is only in memory durable (the memory store's positions); a no-op for Redis. */
  flush(): Promise<void>;
  /** Flushes and stops (the context's close). */
  close(): Promise<void>;
}
