import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { flag, type Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { AppError } from '../../lib/errors.js';
import type { ActiveBeacon, BeaconStore, DevicePosition, PingOptions, TurnOffHook } from './beacon-store.js';
import { activeBeacon, type BeaconState, type Box, type DeviceKey } from './beacons.repository.js';

// Keys (P = REDIS_PREFIX):
//   P beacon:<mode>:<user>:<device key>   hash: on, org, dev, hasdev, lat, lng, acc, meta, pos, seen, seenms
//   P beacons:seen                        sorted set of active devices by last ping (ms): the silence sweep
//   P beacons:org:<mode>:<org>            set of the org's active devices: the live map's first paint
// A member is `<mode>:<user>:<device key>`; the device key comes last, so it may hold any character.
// Each step is one Lua script, so concurrent pings on any number of instances agree. The scripts
// build the org set's key from the prefix, so this is for one Redis (or a primary with replicas),
// not Redis Cluster.

/** A switched-off device's hash is kept this long (a ping after that is a new run anyway). */
const OFF_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const PING = `
local h = KEYS[1]
local on = redis.call('HGET', h, 'on')
local oldOrg = redis.call('HGET', h, 'org')
local turnedOn = 0
local moved = 0
local exists = oldOrg ~= false
if on ~= '1' then
  turnedOn = 1
  redis.call('HSET', h, 'on', '1', 'org', ARGV[2])
end
local pos = redis.call('HGET', h, 'pos')
if (not exists) or pos <= ARGV[9] then
  moved = 1
  redis.call('HSET', h, 'org', ARGV[2], 'dev', ARGV[3], 'hasdev', ARGV[4], 'lat', ARGV[5], 'lng', ARGV[6], 'acc', ARGV[7], 'meta', ARGV[8], 'pos', ARGV[9])
end
redis.call('HSET', h, 'seen', ARGV[10], 'seenms', ARGV[11])
redis.call('PERSIST', h)
local org = redis.call('HGET', h, 'org')
if oldOrg and oldOrg ~= org then redis.call('SREM', ARGV[12] .. oldOrg, ARGV[1]) end
redis.call('SADD', ARGV[12] .. org, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[11], ARGV[1])
if turnedOn == 1 then moved = 1 end
return {turnedOn, moved}
`;

const SWITCH_OFF = `
local h = KEYS[1]
if redis.call('HGET', h, 'on') ~= '1' then return false end
if ARGV[3] ~= '' and tonumber(redis.call('HGET', h, 'seenms')) >= tonumber(ARGV[3]) then return false end
redis.call('HSET', h, 'on', '0')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', ARGV[2] .. redis.call('HGET', h, 'org'), ARGV[1])
redis.call('PEXPIRE', h, ARGV[4])
return redis.call('HGETALL', h)
`;

type Script = (hash: string, seen: string, ...args: string[]) => Promise<unknown>;
const num = (v: string | undefined) => (v === undefined || v === '' ? null : Number(v));

/** Active, recently seen devices of the org with a position (inside `box` when given), from HMGET replies. */
function positionsOf(members: string[], rows: (string | null)[][], orgId: number, since: number, box: Box | undefined): DevicePosition[] {
  const out: DevicePosition[] = [];
  const org = String(orgId);
  for (let i = 0; i < rows.length; i++) {
    const [on, o, latS, lngS, seenms, hasdev, dev] = rows[i]!;
    if (on !== '1' || o !== org || !latS || !lngS || Number(seenms) < since) continue;
    const lat = Number(latS);
    const lng = Number(lngS);
    if (box && (lat < box.minLat || lat > box.maxLat || lng < box.minLng || lng > box.maxLng)) continue;
    const m = members[i]!;
    const user = m.split(':', 2)[1]!;
    out.push({ user_id: Number(user), device_id: hasdev === '1' ? (dev ?? '') : null, lat, lng, last_seen_at: new Date(Number(seenms)).toISOString() });
  }
  return out;
}

type Transaction = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

export function createRedisBeaconStore(redis: Redis, prefix: string, log: FastifyBaseLogger, transaction: Transaction): BeaconStore {
  redis.defineCommand('musterBeaconPing', { numberOfKeys: 2, lua: PING });
  redis.defineCommand('musterBeaconOff', { numberOfKeys: 2, lua: SWITCH_OFF });
  const scripts = redis as unknown as { musterBeaconPing: Script; musterBeaconOff: Script };
  const seenKey = `${prefix}beacons:seen`;
  const orgSetPrefix = (mode: Mode) => `${prefix}beacons:org:${mode}:`;
  const memberOf = (k: DeviceKey) => `${k.mode}:${k.userId}:${k.deviceKey}`;
  const hashOf = (member: string) => `${prefix}beacon:${member}`;
  const keyOf = (member: string): DeviceKey => {
    const [mode, user] = member.split(':', 2) as [Mode, string];
    return { mode, userId: Number(user), deviceKey: member.slice(mode.length + user.length + 2) };
  };
  const stateOf = (k: DeviceKey, f: Record<string, string>): BeaconState => ({
    livemode: flag(k.mode === 'live'),
    user_id: k.userId,
    device_key: k.deviceKey,
    device_id: f.hasdev === '1' ? (f.dev ?? '') : null,
    org_id: Number(f.org),
    active: flag(f.on === '1'),
    lat: num(f.lat),
    lng: num(f.lng),
    accuracy: num(f.acc),
    meta: f.meta ?? '{}',
    position_at: f.pos ?? '',
    last_seen_at: f.seen ?? '',
  });
  const unreachable = (err: unknown, what: string) =>
    log.warn({ err: err instanceof Error ? err.message : String(err) }, `redis unreachable: ${what}`);

  return {
    kind: 'redis',
    /**
     * While Redis is unreachable a ping is still accepted and broadcast, but the device state is
     * not updated: turning on (and its beacon_on) waits for the first ping once Redis is back,
     * rather than risking a second beacon_on for a device that was already on.
     */
    recordPing: async (_db, k, p, opts: PingOptions = {}) => {
      const member = memberOf(k);
      const args = [member, String(p.orgId), p.deviceId ?? '', p.deviceId === null ? '0' : '1', String(p.lat ?? ''), String(p.lng ?? ''), String(p.accuracy ?? ''), p.meta, p.positionAt, p.now, String(Date.parse(p.now)), orgSetPrefix(k.mode)];
      let result: { turnedOn: boolean; moved: boolean };
      opts.check?.();
      try {
        const [turnedOn, moved] = (await scripts.musterBeaconPing(hashOf(member), seenKey, ...args)) as [number, number];
        result = { turnedOn: turnedOn === 1, moved: moved === 1 };
      } catch (err) {
        unreachable(err, 'beacon state not updated');
        return { turnedOn: false, moved: true };
      }
      if (result.turnedOn && opts.onTurnOn) {
        const onTurnOn = opts.onTurnOn;
        try {
          await transaction(onTurnOn);
        } catch (err) {
          // The turn-on was refused (a revoked tracker) or not recorded: the device goes back off, so
          // the next ping turns it on (and writes beacon_on) again.
          await scripts.musterBeaconOff(hashOf(member), seenKey, member, orgSetPrefix(k.mode), '', String(OFF_TTL_MS)).catch((e: unknown) => unreachable(e, 'refused turn-on not undone'));
          throw err;
        }
      }
      return result;
    },
    switchOff: async (_db, k, silentBefore, onOff?: TurnOffHook) => {
      const member = memberOf(k);
      const silent = silentBefore === undefined ? '' : String(Date.parse(silentBefore));
      let state: BeaconState;
      try {
        const flat = (await scripts.musterBeaconOff(hashOf(member), seenKey, member, orgSetPrefix(k.mode), silent, String(OFF_TTL_MS))) as string[] | null;
        if (!flat) return undefined;
        const f: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
        state = stateOf(k, f);
      } catch (err) {
        unreachable(err, 'device not switched off');
        return undefined;
      }
      if (onOff) await transaction((tx) => onOff(tx, state));
      return state;
    },
    active: async (db, scope) => {
      let members: string[][];
      let hashes: Record<string, string>[];
      try {
        const sets = await redis.pipeline(scope.orgIds.map((org) => ['smembers', `${orgSetPrefix(scope.mode)}${org}`])).exec();
        members = (sets ?? []).map(([err, m]) => {
          if (err) throw err;
          return m as string[];
        });
        const all = members.flat();
        const got = all.length === 0 ? [] : await redis.pipeline(all.map((m) => ['hgetall', hashOf(m)])).exec();
        hashes = (got ?? []).map(([err, h]) => {
          if (err) throw err;
          return h as Record<string, string>;
        });
      } catch (err) {
        unreachable(err, 'active devices unknown');
        throw new AppError(503, 'not_ready', 'Live device state is unavailable for a moment; try again shortly');
      }
      const orgs = new Set(scope.orgIds);
      const states = members
        .flat()
        .map((m, i) => stateOf(keyOf(m), hashes[i]!))
        .filter((s) => s.active === 1 && orgs.has(s.org_id));
      const userIds = [...new Set(states.map((s) => s.user_id))];
      const names = new Map(
        userIds.length === 0 ? [] : (await db.selectFrom('users').select(['id', 'name']).where('id', 'in', userIds).execute()).map((u) => [u.id, u.name] as const),
      );
      return states
        .filter((s) => names.has(s.user_id))
        .map((s): ActiveBeacon => activeBeacon(s, names.get(s.user_id)!))
        .sort((a, b) => (a.last_seen_at < b.last_seen_at ? 1 : a.last_seen_at > b.last_seen_at ? -1 : 0));
    },
    positions: async (_db, orgId, mode, seenSince, box) => {
      const since = Date.parse(seenSince);
      let rows: (string | null)[][];
      try {
        const members = await redis.smembers(`${orgSetPrefix(mode)}${orgId}`);
        // One pipelined round trip for every device, reading only the six fields the search needs.
        const got = members.length === 0 ? [] : await redis.pipeline(members.map((m) => ['hmget', hashOf(m), 'on', 'org', 'lat', 'lng', 'seenms', 'hasdev', 'dev'])).exec();
        rows = (got ?? []).map(([err, h]) => {
          if (err) throw err;
          return h as (string | null)[];
        });
        return positionsOf(members, rows, orgId, since, box);
      } catch (err) {
        unreachable(err, 'active devices unknown');
        throw new AppError(503, 'not_ready', 'Live device state is unavailable for a moment; try again shortly');
      }
    },
    lookup: async (keys) => {
      if (keys.length === 0) return [];
      try {
        const got = await redis.pipeline(keys.map((k) => ['hgetall', hashOf(memberOf(k))])).exec();
        return (got ?? []).map(([err, h], i) => {
          if (err) throw err;
          const f = h as Record<string, string>;
          return f.org === undefined ? undefined : stateOf(keys[i]!, f);
        });
      } catch (err) {
        unreachable(err, 'device states unknown');
        return keys.map(() => undefined);
      }
    },
    ready: () => Promise.resolve(),
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
    silent: async (_db, beforeIso, limit) => {
      try {
        const members = await redis.zrangebyscore(seenKey, '-inf', `(${Date.parse(beforeIso)}`, 'LIMIT', 0, limit);
        return members.map(keyOf);
      } catch (err) {
        unreachable(err, 'silent devices not swept');
        return [];
      }
    },
  };
}
