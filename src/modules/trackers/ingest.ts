import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { sha256 } from '../../lib/crypto.js';
import { unauthorized } from '../../lib/errors.js';
import { TOKEN_PATTERN } from '../devices/devices.service.js';
import { deviceCache, type CachedDevice } from '../devices/device-cache.js';
import { touchDevice, type DeviceRow } from '../devices/devices.repository.js';
import { createSignal, type SignalGuard } from '../signals/signals.service.js';
import { badRequest, type Fix } from './fix.js';

/** The beacon's free-form meta (its schema names only device_id). */
type Meta = { device_id: string };

export type Protocol = 'osmand' | 'traccar' | 'owntracks' | 'gpslogger';

/** A fix may come from an offline queue, but not from the future: the same skew POST /v1/signals allows. */
const MAX_CLOCK_SKEW_MS = 60_000;

/**
 * The device a token belongs to (from the device cache); 401 for a missing, malformed, unknown or
 * revoked token (in every protocol).
 */
export async function authenticate(ctx: AppContext, token: string | undefined): Promise<CachedDevice> {
  if (token === undefined || !TOKEN_PATTERN.test(token)) throw unauthorized();
  const entry = await deviceCache(ctx).byToken(sha256(token));
  if (!entry) throw unauthorized();
  return entry;
}

export const modeOf = (d: DeviceRow): Mode => (d.livemode === 1 ? 'live' : 'test');

/** The device posts as its owner, in its own org and mode (a test-mode device stays in test mode). */
const actorOf = (d: DeviceRow): Actor => ({ userId: d.user_id, mode: modeOf(d), via: 'device' });

/**
 * Refuses the signal when the device was revoked since it was authenticated: at once when the
 * cache heard of it (an access notice), and in the transaction of a stored signal or of a turn-on,
 * where the device's row is written and locked (a revoke running at the same time waits for it,
 * then switches the device off, or wins and the fix is refused).
 */
const notRevoked = (ctx: AppContext, entry: CachedDevice): SignalGuard => ({
  check: () => {
    if (!entry.valid) throw unauthorized();
  },
  inTx: async (tx) => {
    if (!entry.valid || !(await touchDevice(tx.db, entry.device.id, iso(ctx.clock.now())))) throw unauthorized();
  },
});

function check(ctx: AppContext, fix: Fix, i: number): Date {
  const field = (f: string) => (i === 0 ? f : `${i}.${f}`);
  if (fix.lat < -90 || fix.lat > 90) throw badRequest(field('lat'), 'must be between -90 and 90');
  if (fix.lng < -180 || fix.lng > 180) throw badRequest(field('lon'), 'must be between -180 and 180');
  if (fix.accuracy !== null && !(fix.accuracy >= 0 && fix.accuracy <= 1_000_000)) fix.accuracy = null;
  const now = ctx.clock.now();
  const at = fix.at ?? now;
  if (at.getTime() > now.getTime() + MAX_CLOCK_SKEW_MS) throw badRequest(field('timestamp'), 'is in the future');
  return at;
}

/**
 * Turns the fixes of one request into signals through the same path as POST /v1/signals. Only
 * the newest becomes a beacon (an hour of buffered fixes moves the marker once, to the last
 * one; the store keeps no history), and the beacon store never moves a marker back to an older
 * fix than it shows. Each `alarm=sos` also becomes an alert signal. Any bad fix refuses the request.
 */
export async function ingest(ctx: AppContext, entry: CachedDevice, protocol: Protocol, fixes: Fix[]): Promise<void> {
  if (fixes.length === 0) throw badRequest('location', 'no position');
  const dated = fixes.map((fix, i) => ({ fix, at: check(ctx, fix, i) }));
  const device = entry.device;
  const actor = actorOf(device);
  const guard = notRevoked(ctx, entry);
  const base = { org_id: device.org_id, lat: 0, lng: 0 };
  for (const { fix, at } of dated.filter((d) => d.fix.alarm === 'sos')) {
    const note = `SOS from ${device.name}`;
    await createSignal(ctx, actor, { ...base, type: 'alert', lat: fix.lat, lng: fix.lng, note, meta: { device_id: device.device_id, protocol, alarm: 'sos' } as Meta, recorded_at: iso(at) }, null, guard);
  }
  const newest = dated.reduce((a, b) => (b.at.getTime() >= a.at.getTime() ? b : a));
  const { fix, at } = newest;
  await createSignal(
    ctx,
    actor,
    {
      ...base,
      type: 'beacon',
      lat: fix.lat,
      lng: fix.lng,
      ...(fix.accuracy === null ? {} : { accuracy: fix.accuracy }),
      meta: { device_id: device.device_id, protocol, ...(fix.alarm && fix.alarm !== 'sos' ? { alarm: fix.alarm } : {}), ...fix.meta } as Meta,
      recorded_at: iso(at),
    },
    null,
    guard,
  );
}
