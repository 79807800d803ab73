import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { findVisible } from '../incidents/index.js';
import type { DevicePosition } from '../signals/index.js';
import type { Box } from '../signals/index.js';
import { boundingBox, haversineM } from './geo.js';
import { memberNames, openAssignments } from './responders.repository.js';
import type { Responder, RespondersQuery } from './responders.schemas.js';

/** A device and its distance, side by side: a copy of the device with the distance added would cost ~1 µs per device on Node 20 (docs/performance.md, "Object spread on hot paths"). */
interface Candidate {
  device: DevicePosition;
  distance_m: number | null;
}

/**
 * One candidate per member with its great-circle distance to `at`, in one pass over the devices
 * (no query per device): with a position their nearest live device, without one their most
 * recently seen. Sorted nearest first, or last seen first.
 */
export function rankDevices(devices: DevicePosition[], at: { lat: number; lng: number } | null): Candidate[] {
  const best = new Map<number, Candidate>();
  for (const d of devices) {
    const distance = at ? haversineM(at.lat, at.lng, d.lat, d.lng) : null;
    const seen = best.get(d.user_id);
    if (!seen) best.set(d.user_id, { device: d, distance_m: distance });
    else if (at ? distance! < seen.distance_m! : d.last_seen_at > seen.device.last_seen_at) {
      seen.device = d;
      seen.distance_m = distance;
    }
  }
  const out = [...best.values()];
  if (at) out.sort((a, b) => a.distance_m! - b.distance_m! || a.device.user_id - b.device.user_id);
  else
    out.sort((a, b) => {
      const x = a.device;
      const y = b.device;
      return x.last_seen_at < y.last_seen_at ? 1 : x.last_seen_at > y.last_seen_at ? -1 : x.user_id - y.user_id;
    });
  return out;
}

/** The first search radius; it grows fourfold until enough responders are inside (or it covers the globe). */
const FIRST_RADIUS_M = 5_000;
const GLOBE_M = 20_100_000;

/**
 * Candidates nearest first, read through a growing bounding box: the store reads only the devices
 * inside it (an index range on the database), so with thousands of devices spread over a region the
 * usual answer reads a few hundred. Only devices within the radius count (the box's corners are
 * farther), so the nearest `want` are exact. `complete`: every device the search could return was read.
 */
async function candidates(read: (box?: Box) => Promise<DevicePosition[]>, at: { lat: number; lng: number }, want: number, withinM?: number) {
  for (let r = withinM ?? FIRST_RADIUS_M; ; r *= 4) {
    const whole = r >= GLOBE_M;
    const ranked = rankDevices(await read(whole ? undefined : boundingBox(at.lat, at.lng, r)), at).filter((c) => c.distance_m! <= r);
    if (withinM !== undefined || whole || ranked.length >= want) return { ranked, complete: withinM !== undefined || whole };
  }
}

/** The first `limit` candidates who are still members, with their names (read in chunks, for the picked only). */
async function pick(ctx: AppContext, orgId: number, ranked: Candidate[], limit: number) {
  const picked: { candidate: Candidate; user_name: string }[] = [];
  for (let i = 0; i < ranked.length && picked.length < limit; i += limit * 2) {
    const chunk = ranked.slice(i, i + limit * 2);
    const names = await memberNames(ctx.db, orgId, chunk.map((c) => c.device.user_id));
    for (const c of chunk) {
      const name = names.get(c.device.user_id);
      if (picked.length < limit && name !== undefined) picked.push({ candidate: c, user_name: name });
    }
  }
  return picked;
}

/**
 * The incident's nearest responders: members of its org and mode whose beacon is on and was
 * heard within the beacon timeout, nearest first (by last seen when the incident has no position).
 */
export async function nearestResponders(ctx: AppContext, actor: Actor, id: number, q: RespondersQuery): Promise<{ responders: Responder[] }> {
  const incident = await findVisible(ctx, actor, id);
  const mode = incident.livemode === 1 ? 'live' : 'test';
  const seenSince = iso(new Date(ctx.clock.now().getTime() - ctx.config.beaconTimeoutMs));
  const at = incident.lat !== null && incident.lng !== null ? { lat: incident.lat, lng: incident.lng } : null;
  const read = (box?: Box) => ctx.beacons.positions(ctx.db, incident.org_id, mode, seenSince, box);
  // Twice the limit: room for devices of people who have since left the org.
  let found = at ? await candidates(read, at, q.limit * 2, q.within_m) : { ranked: rankDevices(await read(), null), complete: true };

  // Names (and membership) for the best ones only, in chunks: a device of someone who left the org is skipped.
  let picked = await pick(ctx, incident.org_id, found.ranked, q.limit);
  if (picked.length < q.limit && !found.complete) {
    // Many of the nearest have left the org: read every device once.
    found = { ranked: rankDevices(await read(), at), complete: true };
    picked = await pick(ctx, incident.org_id, found.ranked, q.limit);
  }
  const open = await openAssignments(ctx.db, incident.org_id, mode, picked.map((p) => p.candidate.device.user_id));
  return {
    responders: picked.map(({ candidate: { device: d, distance_m }, user_name }) => ({
      user_id: d.user_id,
      user_name,
      device_id: d.device_id,
      lat: d.lat,
      lng: d.lng,
      last_seen_at: d.last_seen_at,
      distance_m: distance_m === null ? null : Math.round(distance_m),
      open_assignments: open.get(d.user_id) ?? 0,
    })),
  };
}
