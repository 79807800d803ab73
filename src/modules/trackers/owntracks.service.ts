import type { AppContext } from '../../context.js';
import { findUserById } from '../users/users.repository.js';
import { trackerId } from '../devices/device-urls.js';
import type { DeviceRow } from '../devices/devices.repository.js';
import { ingest, modeOf } from './ingest.js';
import { friends, owntracksFix } from './owntracks.js';
import { activeTeammates } from './trackers.repository.js';

/** At most this many teammates go back to a phone per post (the answer stays small on a mobile link). */
const MAX_FRIENDS = 200;

/**
 * One OwnTracks post. `location` becomes a beacon and is answered with the team; every other
 * `_type` (transition, waypoint(s), lwt, card, status, steps, encrypted...) and the empty body
 * OwnTracks posts when a friend is deleted are accepted and ignored, answered with `[]`.
 */
export async function owntracksPost(ctx: AppContext, device: DeviceRow, body: unknown): Promise<Record<string, unknown>[]> {
  const msg = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  if (msg?._type !== 'location') return [];
  const fix = owntracksFix(msg);
  await ingest(ctx, device, 'owntracks', [fix]);
  return teamOf(ctx, device, typeof msg.tid === 'string' ? msg.tid : undefined);
}

/** The last positions of the other active devices of the device's org, in its mode only. */
async function teamOf(ctx: AppContext, device: DeviceRow, ownTid: string | undefined) {
  const rows = await activeTeammates(ctx.db, device.org_id, modeOf(device), { userId: device.user_id, deviceKey: device.device_id }, MAX_FRIENDS);
  const self = await findUserById(ctx.db, device.user_id);
  return friends(
    rows.map((r) => ({
      device_id: r.device_key === 'user' ? `user-${r.slug}` : r.device_key,
      user_slug: r.slug,
      name: r.name,
      tid: trackerId(r.name),
      lat: r.lat!,
      lng: r.lng!,
      accuracy: r.accuracy,
      position_at: r.position_at,
    })),
    ownTid ?? (self ? trackerId(self.name) : undefined),
  );
}
