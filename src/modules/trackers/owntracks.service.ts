import type { AppContext } from '../../context.js';
import { findUserById } from '../users/index.js';
import { trackerId } from '../devices/index.js';
import type { CachedDevice } from '../devices/index.js';
import type { DeviceRow } from '../devices/index.js';
import { ingest, modeOf } from './ingest.js';
import { friends, owntracksFix } from './owntracks.js';
import { userSlugs } from './trackers.repository.js';

/** At most this many teammates go back to a phone per post (the answer stays small on a mobile link). */
const MAX_FRIENDS = 200;

/**
 * One OwnTracks post. `location` becomes a beacon and is answered with the team; every other
 * `_type` (transition, waypoint(s), lwt, card, status, steps, encrypted...) and the empty body
 * OwnTracks posts when a friend is deleted are accepted and ignored, answered with `[]`.
 */
export async function owntracksPost(ctx: AppContext, entry: CachedDevice, body: unknown): Promise<Record<string, unknown>[]> {
  const msg = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  if (msg?._type !== 'location') return [];
  const fix = owntracksFix(msg);
  await ingest(ctx, entry, 'owntracks', [fix]);
  return teamOf(ctx, entry.device, typeof msg.tid === 'string' ? msg.tid : undefined);
}

/** The last positions of the other active devices of the device's org, in its mode only. */
async function teamOf(ctx: AppContext, device: DeviceRow, ownTid: string | undefined) {
  // The live state (most recently seen first), without the asking device's own (OwnTracks draws that one).
  const rows = (await ctx.beacons.active(ctx.db, { orgIds: [device.org_id], mode: modeOf(device) }))
    .filter((b) => b.lat !== null && b.lng !== null && !(b.user_id === device.user_id && b.device_key === device.device_id))
    .slice(0, MAX_FRIENDS);
  const slugs = await userSlugs(ctx.db, [...new Set(rows.map((r) => r.user_id))]);
  const self = await findUserById(ctx.db, device.user_id);
  return friends(
    rows.map((r) => ({
      device_id: r.device_key === 'user' ? `user-${slugs.get(r.user_id) ?? r.user_id}` : r.device_key,
      user_slug: slugs.get(r.user_id) ?? '',
      name: r.user_name,
      tid: trackerId(r.user_name),
      lat: r.lat!,
      lng: r.lng!,
      accuracy: r.accuracy,
      position_at: r.position_at,
    })),
    ownTid ?? (self ? trackerId(self.name) : undefined),
  );
}
