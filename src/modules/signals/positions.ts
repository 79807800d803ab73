import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';

/** One accepted position of a device, as the beacon path hands it to the modules that watch positions. */
export interface ObservedFix {
  orgId: number;
  mode: Mode;
  userId: number;
  /** The device's `meta.device_id` (a field terminal or a tracker app), null for a user's own beacon. */
  deviceId: string | null;
  lat: number;
  lng: number;
  /** Metres (68 % radius), null when the device did not say. */
  accuracy: number | null;
  /** When the position was taken (ISO). */
  at: string;
}

/**
 * A module that watches positions (arrival at an incident, sites, tracks: issue #38). Called
 * synchronously on the beacon path, once per accepted fix with a position, after the live state took
 * it: an observer decides in memory and returns at once; what it must write it queues itself (a
 * batch, or a transaction only when something changes) and never throws into the beacon path.
 */
export type PositionObserver = (ctx: AppContext, fix: ObservedFix) => void;

/**
 * The position observers of an instance, handed down to signals by context.ts (the watching modules
 * sit above signals in the dependency layers, so signals never imports them).
 */
export function positionPort(observers: readonly PositionObserver[] = []) {
  const list = [...observers];
  return {
    /** Adds one (context.ts, and tests that watch the beacon path). */
    add(observer: PositionObserver): void {
      list.push(observer);
    },
    observe(ctx: AppContext, fix: ObservedFix): void {
      for (const o of list) {
        try {
          o(ctx, fix);
        } catch (err) {
          ctx.log.error({ err }, 'a position observer failed');
        }
      }
    },
    get size(): number {
      return list.length;
    },
  };
}
export type PositionPort = ReturnType<typeof positionPort>;
