import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.js';
import { flag } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { ActiveBeacon, BeaconStore, DevicePosition, PingOptions, TurnOffHook } from './beacon-store.js';
import * as repo from './beacons.repository.js';
import type { BeaconState, DeviceKey, Ping } from './beacons.repository.js';

/**
 * The state of beaconing devices in this process's memory, for one instance without Redis.
 *
 * - Transitions are durable before they are answered: turning a device on writes its row (active,
 *   with the ping's position) and `beacon_on` in one transaction; switching it off writes the row
 *   (inactive, last position) and `beacon_off` in one. While one is under way, other calls for the
 *   same device wait for it, so exactly one ping turns a device on and one switch-off returns it.
 * - A ping of a device that is on changes memory only, and marks the device dirty. Every
 *   `flushMs` one transaction writes the positions of every dirty device (multi-row upserts), so
 *   a crash loses at most the positions of the last `flushMs` (the devices stay on, with the
 *   position of the flush before); a graceful stop flushes.
 * - The active rows of `beacon_states` are loaded on the store's first use (any call), not when it is
 *   made: a start reads nothing that grows with the devices (issue #40), and the map and the
 *   responders list still come back after a restart. Every call waits for the load; a failed load
 *   fails the calls waiting for it, and the next call tries again.
 */
export interface MemoryStoreOptions {
  db: Kysely<DB>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  log: FastifyBaseLogger;
  flushMs: number;
}

type State = BeaconState;

const idOf = (k: { mode: Mode; userId: number; deviceKey: string }) => `${k.mode}:${k.userId}:${k.deviceKey}`;
const modeOf = (s: State): Mode => (s.livemode === 1 ? 'live' : 'test');
const orgIndexOf = (mode: Mode, orgId: number) => `${mode}:${orgId}`;
const keyOfState = (s: State): DeviceKey => ({ mode: modeOf(s), userId: s.user_id, deviceKey: s.device_key });

export interface MemoryBeaconStore extends BeaconStore {
  /** Devices changed since the last flush (tests and diagnostics). */
  dirtyCount(): number;
}

export function createMemoryBeaconStore(o: MemoryStoreOptions): MemoryBeaconStore {
  /** Active devices only; a device switched off leaves the map (its row keeps its last position). */
  const states = new Map<string, State>();
  const byOrg = new Map<string, Map<string, State>>();
  const dirty = new Set<string>();
  /** Transitions under way, per device; settles (never rejects) when done. */
  const pending = new Map<string, Promise<void>>();
  let flushing: Promise<void> | undefined;
  let closed = false;

  const install = (id: string, s: State) => {
    states.set(id, s);
    const k = orgIndexOf(modeOf(s), s.org_id);
    let m = byOrg.get(k);
    if (!m) byOrg.set(k, (m = new Map<string, State>()));
    m.set(id, s);
  };
  const uninstall = (id: string, s: State) => {
    states.delete(id);
    dirty.delete(id);
    const k = orgIndexOf(modeOf(s), s.org_id);
    const m = byOrg.get(k);
    m?.delete(id);
    if (m?.size === 0) byOrg.delete(k);
  };

  /** Set once the active rows are in `states` (until then every call waits for `ready()`). */
  let loaded = false;
  let loading: Promise<void> | undefined;
  /** Loads the active rows, once: on the first call that needs them. */
  const ready = (): Promise<void> =>
    (loading ??= repo.loadActive(o.db).then(
      (rows) => {
        for (const s of rows) install(idOf(keyOfState(s)), s);
        loaded = true;
        o.log.debug({ devices: rows.length }, 'beacon state loaded');
      },
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    ));

  /** A ping of a device that is on: memory only (moved only when not older than what it shows), flushed later. */
  function move(id: string, s: State, p: Ping): { turnedOn: false; moved: boolean } {
    let moved = false;
    if (s.position_at <= p.positionAt) {
      moved = true;
      if (s.org_id !== p.orgId) {
        uninstall(id, s);
        s.org_id = p.orgId;
        install(id, s);
      }
      s.device_id = p.deviceId;
      s.lat = p.lat;
      s.lng = p.lng;
      s.accuracy = p.accuracy;
      s.meta = p.meta;
      s.position_at = p.positionAt;
    }
    s.last_seen_at = p.now;
    dirty.add(id);
    return { turnedOn: false, moved };
  }

  /** Runs a transition of one device, holding the device until it settles. */
  async function transition<T>(id: string, fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    pending.set(
      id,
      new Promise<void>((r) => (release = r)),
    );
    try {
      return await fn();
    } finally {
      pending.delete(id);
      release();
    }
  }

  async function flush(): Promise<void> {
    while (flushing) await flushing;
    if (dirty.size === 0) return;
    const ids = [...dirty];
    dirty.clear();
    const rows: State[] = [];
    for (const id of ids) {
      const s = states.get(id);
      if (s) rows.push({ ...s });
    }
    flushing = o
      .transaction((tx) => repo.writePositions(tx.db, rows))
      .catch((err: unknown) => {
        for (const id of ids) if (states.has(id)) dirty.add(id);
        o.log.error({ err }, 'beacon positions not flushed; retried at the next flush');
      })
      .finally(() => (flushing = undefined));
    await flushing;
  }

  const timer = setInterval(() => void flush(), o.flushMs);
  timer.unref();

  const copy = (s: State): State => ({ ...s });

  return {
    kind: 'memory',
    ready,
    async recordPing(_db, key: DeviceKey, p: Ping, opts: PingOptions = {}) {
      await ready();
      const id = idOf(key);
      for (;;) {
        const busy = pending.get(id);
        if (busy) {
          await busy;
          continue;
        }
        // Nothing is awaited between this check and the change below: a device revoked before
        // the check is refused, one revoked after it is switched off after this ping.
        opts.check?.();
        const s = states.get(id);
        if (s) return move(id, s, p);
        const next: State = {
          livemode: flag(key.mode === 'live'),
          user_id: key.userId,
          device_key: key.deviceKey,
          device_id: p.deviceId,
          org_id: p.orgId,
          active: 1,
          lat: p.lat,
          lng: p.lng,
          accuracy: p.accuracy,
          meta: p.meta,
          position_at: p.positionAt,
          last_seen_at: p.now,
        };
        await transition(id, async () => {
          await o.transaction(async (tx) => {
            await repo.writeOn(tx.db, next);
            if (opts.onTurnOn) await opts.onTurnOn(tx);
          });
          install(id, next);
        });
        return { turnedOn: true, moved: true };
      }
    },
    pingActive(key: DeviceKey, p: Ping, guard?: { check(): void }) {
      if (!loaded) return undefined;
      const id = idOf(key);
      if (pending.has(id)) return undefined;
      const s = states.get(id);
      if (!s) return undefined;
      // As in recordPing: nothing between the check and the change.
      guard?.check();
      return move(id, s, p);
    },
    async switchOff(_db, key: DeviceKey, silentBefore?: string, onOff?: TurnOffHook) {
      await ready();
      const id = idOf(key);
      for (;;) {
        const busy = pending.get(id);
        if (busy) {
          await busy;
          continue;
        }
        const s = states.get(id);
        if (!s) return undefined;
        if (silentBefore !== undefined && s.last_seen_at >= silentBefore) return undefined;
        return transition(id, async () => {
          const off: State = { ...s, active: 0 };
          await o.transaction(async (tx) => {
            await repo.writeOff(tx.db, off);
            if (onOff) await onOff(tx, off);
          });
          uninstall(id, s);
          return off;
        });
      }
    },
    async active(db, scope) {
      await ready();
      const found: State[] = [];
      for (const org of scope.orgIds) for (const s of byOrg.get(orgIndexOf(scope.mode, org))?.values() ?? []) found.push(copy(s));
      if (found.length === 0) return [];
      const ids = [...new Set(found.map((s) => s.user_id))];
      const names = new Map((await db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute()).map((u) => [u.id, u.name] as const));
      return found
        .filter((s) => names.has(s.user_id))
        .map((s): ActiveBeacon => repo.activeBeacon(s, names.get(s.user_id)!))
        .sort((a, b) => (a.last_seen_at < b.last_seen_at ? 1 : a.last_seen_at > b.last_seen_at ? -1 : 0));
    },
    async positions(_db, orgId, mode, seenSince, box) {
      await ready();
      const out: DevicePosition[] = [];
      for (const s of byOrg.get(orgIndexOf(mode, orgId))?.values() ?? []) {
        const { lat, lng } = s;
        if (lat === null || lng === null || s.last_seen_at < seenSince) continue;
        if (box && (lat < box.minLat || lat > box.maxLat || lng < box.minLng || lng > box.maxLng)) continue;
        out.push({ user_id: s.user_id, device_id: s.device_id, lat, lng, last_seen_at: s.last_seen_at });
      }
      return out;
    },
    async silent(_db, beforeIso, limit) {
      await ready();
      const out: DeviceKey[] = [];
      for (const s of states.values()) {
        if (out.length >= limit) break;
        if (s.last_seen_at < beforeIso) out.push(keyOfState(s));
      }
      return out;
    },
    async lookup(keys) {
      await ready();
      return keys.map((k) => {
        const s = states.get(idOf(k));
        return s ? copy(s) : undefined;
      });
    },
    flush,
    dirtyCount: () => dirty.size,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      // Never loaded: nothing in memory to flush.
      if (loading) await loading.catch(() => undefined);
      await flush();
    },
  };
}
