import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { findVisible } from '../incidents/incidents.service.js';
import { beaconStore, type DevicePosition } from '../signals/beacon-store.js';
import { boundingBox, haversineM } from './geo.js';
import { memberNames, openAssignments } from './responders.repository.js';
import type { Responder, RespondersQuery } from './responders.schemas.js';

interface Candidate extends DevicePosition {
  distance_m: number | null;
}

/**
 * One candidate per member: their most recently seen device (where they are now), with its
 * great-circle distance to `at`. One pass over the devices, no query per device.
 */
export function rankDevices(devices: DevicePosition[], at: { lat: number; lng: number } | null): Candidate[] {
  const latest = new Map<number, DevicePosition>();
  for (const d of devices) {
    const seen = latest.get(d.user_id);
    if (!seen || d.last_seen_at > seen.last_seen_at) latest.set(d.user_id, d);
  }
  const out: Candidate[] = [];
  for (const d of latest.values()) out.push({ ...d, distance_m: at ? haversineM(at.lat, at.lng, d.lat, d.lng) : null });
  if (at) out.sort((a, b) => a.distance_m! - b.distance_m! || a.user_id - b.user_id);
  else out.sort((a, b) => (a.last_seen_at < b.last_seen_at ? 1 : a.last_seen_at > b.last_seen_at ? -1 : a.user_id - b.user_id));
  return out;
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
  const box = at && q.within_m !== undefined ? boundingBox(at.lat, at.lng, q.within_m) : undefined;
  let ranked = rankDevices(await beaconStore(ctx).positions(ctx.db, incident.org_id, mode, seenSince, box), at);
  if (at && q.within_m !== undefined) ranked = ranked.filter((c) => c.distance_m! <= q.within_m!);

  // Names (and membership) for the best ones only, in chunks: a device of someone who left the org is skipped.
  const picked: (Candidate & { user_name: string })[] = [];
  for (let i = 0; i < ranked.length && picked.length < q.limit; i += q.limit * 2) {
    const chunk = ranked.slice(i, i + q.limit * 2);
    const names = await memberNames(ctx.db, incident.org_id, chunk.map((c) => c.user_id));
    for (const c of chunk) if (picked.length < q.limit && names.has(c.user_id)) picked.push({ ...c, user_name: names.get(c.user_id)! });
  }
  const open = await openAssignments(ctx.db, incident.org_id, mode, picked.map((p) => p.user_id));
  return {
    responders: picked.map((p) => ({
      user_id: p.user_id,
      user_name: p.user_name,
      device_id: p.device_id,
      lat: p.lat,
      lng: p.lng,
      last_seen_at: p.last_seen_at,
      distance_m: p.distance_m === null ? null : Math.round(p.distance_m),
      open_assignments: open.get(p.user_id) ?? 0,
    })),
  };
}
