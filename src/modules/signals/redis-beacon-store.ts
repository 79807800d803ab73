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
//   P beacons:geo:<mode>:<org>            geo set (GEOADD) of the org's active devices with a position: the
//                                         responder search's box (GEOSEARCH), latitude held within the geo
//                                         range (±85.05112878°; the hash keeps the true one)
// A member is `<mode>:<user>:<device key>`; the device key comes last, so it may hold any character.
// Each step is one Lua script, so concurrent pings on any number of instances agree. The scripts
// build the org set's key from the prefix, so this is for one Redis (or a primary with replicas),
// not Redis Cluster.

/** A switched-off device's hash is kept this long (a ping after that is a new run anyway). */
const OFF_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The positions a Redis geo set holds: latitudes within Web Mercator's ±85.05112878° (GEOADD refuses a
 * point beyond) and longitudes within ±180, each less a hair (0.1 m) at the top, as a point on the top
 * edge (longitude 179.99999999999997 too) gets a geohash outside every cell that GEOSEARCH never finds.
 */
const GEO_LAT_MAX = 85.05112878 - 1e-6;
const GEO_LNG_MAX = 180 - 1e-6;

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
if oldOrg and oldOrg ~= org then
  redis.call('SREM', ARGV[12] .. oldOrg, ARGV[1])
  redis.call('ZREM', ARGV[13] .. oldOrg, ARGV[1])
end
redis.call('SADD', ARGV[12] .. org, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[11], ARGV[1])
if turnedOn == 1 then moved = 1 end
if moved == 1 then
  local ll = redis.call('HMGET', h, 'lat', 'lng')
  local lat, lng = tonumber(ll[1]), tonumber(ll[2])
  if lat and lng then
    redis.call('GEOADD', ARGV[13] .. org, math.min(${GEO_LNG_MAX}, lng), math.max(-${GEO_LAT_MAX}, math.min(${GEO_LAT_MAX}, lat)), ARGV[1])
  else
    redis.call('ZREM', ARGV[13] .. org, ARGV[1])
  end
end
return {turnedOn, moved}
`;

const SWITCH_OFF = `
local h = KEYS[1]
if redis.call('HGET', h, 'on') ~= '1' then return false end
if ARGV[3] ~= '' and tonumber(redis.call('HGET', h, 'seenms')) >= tonumber(ARGV[3]) then return false end
redis.call('HSET', h, 'on', '0')
redis.call('ZREM', KEYS[2], ARGV[1])
local org = redis.call('HGET', h, 'org')
redis.call('SREM', ARGV[2] .. org, ARGV[1])
redis.call('ZREM', ARGV[5] .. org, ARGV[1])
redis.call('PEXPIRE', h, ARGV[4])
return redis.call('HGETALL', h)
`;

/**
 * The devices a search may return, read inside Redis in one command: the members of the org's geo set in
 * the search area (ARGV[1] 'geo', the area in ARGV[2..5]) or of its set of every device ('all'), each once,
 * with the fields of its hash the search needs, for those on in the org (ARGV[7]) and heard since ARGV[8]
 * (ms) with a position: a flat reply of 8 strings a device (member, on, org, lat, lng, seenms, hasdev, dev).
 * One round trip and one reply, where a pipelined HMGET a device cost the server a reply each to parse.
 */
const POSITIONS = `#!lua flags=no-writes
local members
if ARGV[1] == 'geo' then
  members = redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', ARGV[2], ARGV[3], 'BYBOX', ARGV[4], ARGV[5], 'm')
else
  members = redis.call('SMEMBERS', KEYS[1])
end
local since = tonumber(ARGV[8])
local out, seen = {}, {}
for _, m in ipairs(members) do
  if not seen[m] then
    seen[m] = true
    local f = redis.call('HMGET', ARGV[6] .. m, 'on', 'org', 'lat', 'lng', 'seenms', 'hasdev', 'dev')
    local heard = tonumber(f[5])
    if f[1] == '1' and f[2] == ARGV[7] and f[3] and f[3] ~= '' and f[4] and f[4] ~= '' and heard and heard >= since then
      local n = #out
      out[n + 1] = m
      out[n + 2] = f[1]
      out[n + 3] = f[2]
      out[n + 4] = f[3]
      out[n + 5] = f[4]
      out[n + 6] = f[5]
      out[n + 7] = f[6] or ''
      out[n + 8] = f[7] or ''
    end
  end
end
return out
`;

type Script = (hash: string, seen: string, ...args: string[]) => Promise<unknown>;
type PositionsScript = (key: string, ...args: (string | number)[]) => Promise<string[]>;
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

/** Redis's own Earth radius (geohash_helper.c), in which GEOSEARCH measures a box's width and height. */
const REDIS_EARTH_M = 6372797.560856;
const RAD = Math.PI / 180;
/** Added on every side of a box, in degrees (~11 m): far more than a geo set's rounding of a position (< 1 m). */
const GEO_MARGIN = 1e-4;

/**
 * GEOSEARCH's FROMLONLAT ... BYBOX arguments for an area holding every point of the latitude/longitude
 * rectangle `box` (longitude never wrapped: boundingBox opens it to ±180 instead). BYBOX is not such a
 * rectangle: it keeps a point whose distance from the centre's meridian, measured along the point's own
 * parallel (great circle), is within half the width. That distance is at most the parallel's arc
 * R·cos(lat)·Δlng, largest at the box's latitude nearest the equator, so that arc is the half width;
 * the parts of the area outside the box are filtered out by the hashes' positions. Positions are held
 * within the geo range, as GEOADD's are (PING), so polar devices are found at its edge.
 */
function geoSearchArea(box: Box): [number, number, 'BYBOX', number, number, 'm'] {
  const clamp = (lat: number) => Math.max(-GEO_LAT_MAX, Math.min(GEO_LAT_MAX, lat));
  const lo = clamp(box.minLat);
  const hi = clamp(box.maxLat);
  const halfLat = (hi - lo) / 2 + GEO_MARGIN;
  const halfLng = (box.maxLng - box.minLng) / 2 + GEO_MARGIN;
  const nearEquator = lo - GEO_MARGIN <= 0 && hi + GEO_MARGIN >= 0 ? 0 : Math.min(Math.abs(lo - GEO_MARGIN), Math.abs(hi + GEO_MARGIN));
  const width = 2 * REDIS_EARTH_M * Math.cos(nearEquator * RAD) * halfLng * RAD;
  return [Math.min(GEO_LNG_MAX, (box.minLng + box.maxLng) / 2), (lo + hi) / 2, 'BYBOX', width, 2 * REDIS_EARTH_M * halfLat * RAD, 'm'];
}

type Transaction = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

export function createRedisBeaconStore(redis: Redis, prefix: string, log: FastifyBaseLogger, transaction: Transaction): BeaconStore {
  redis.defineCommand('musterBeaconPing', { numberOfKeys: 2, lua: PING });
  redis.defineCommand('musterBeaconOff', { numberOfKeys: 2, lua: SWITCH_OFF });
  redis.defineCommand('musterBeaconPositions', { numberOfKeys: 1, lua: POSITIONS });
  const scripts = redis as unknown as { musterBeaconPing: Script; musterBeaconOff: Script; musterBeaconPositions: PositionsScript };
  const seenKey = `${prefix}beacons:seen`;
  const orgSetPrefix = (mode: Mode) => `${prefix}beacons:org:${mode}:`;
  const geoPrefix = (mode: Mode) => `${prefix}beacons:geo:${mode}:`;
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
      const args = [member, String(p.orgId), p.deviceId ?? '', p.deviceId === null ? '0' : '1', String(p.lat ?? ''), String(p.lng ?? ''), String(p.accuracy ?? ''), p.meta, p.positionAt, p.now, String(Date.parse(p.now)), orgSetPrefix(k.mode), geoPrefix(k.mode)];
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
          await scripts.musterBeaconOff(hashOf(member), seenKey, member, orgSetPrefix(k.mode), '', String(OFF_TTL_MS), geoPrefix(k.mode)).catch((e: unknown) => unreachable(e, 'refused turn-on not undone'));
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
        const flat = (await scripts.musterBeaconOff(hashOf(member), seenKey, member, orgSetPrefix(k.mode), silent, String(OFF_TTL_MS), geoPrefix(k.mode))) as string[] | null;
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
      try {
        // With a box, only the devices of the org's geo set inside a search area that covers it (a
        // superset: the hashes' own positions are checked below); without one, every device of the org.
        // One script reads them and their hashes (POSITIONS), each member once should a search area wider
        // than half the globe reach one geohash cell from two sides.
        const [lng, lat, , width, height] = box ? geoSearchArea(box) : [0, 0, 'BYBOX', 0, 0];
        const flat = box
          ? await scripts.musterBeaconPositions(`${geoPrefix(mode)}${orgId}`, 'geo', lng, lat, width, height, `${prefix}beacon:`, String(orgId), since)
          : await scripts.musterBeaconPositions(`${orgSetPrefix(mode)}${orgId}`, 'all', 0, 0, 0, 0, `${prefix}beacon:`, String(orgId), since);
        const members: string[] = [];
        const rows: (string | null)[][] = [];
        for (let i = 0; i + 7 < flat.length; i += 8) {
          members.push(flat[i]!);
          rows.push(flat.slice(i + 1, i + 8));
        }
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
