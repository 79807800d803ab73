import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { unauthorized } from '../../lib/errors.js';
import { TOKEN_PATTERN } from '../devices/index.js';
import type { CachedDevice } from '../devices/index.js';
import { touchDevice, type DeviceRow } from '../devices/index.js';
import { createSignal, postBeacon, type SignalGuard } from '../signals/index.js';
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
  const entry = await ctx.deviceCache.byTokenText(token);
  if (!entry) throw unauthorized();
  return entry;
}

/** The device of a token the cache knows (valid, fresh), synchronously; undefined: call authenticate. */
export const knownDevice = (ctx: AppContext, token: string | undefined): CachedDevice | undefined =>
  token === undefined ? undefined : ctx.deviceCache.known(token);

export const modeOf = (d: DeviceRow): Mode => (d.livemode === 1 ? 'live' : 'test');

/** The device posts as its owner, in its own org and mode (a test-mode device stays in test mode). */
const actorOf = (d: DeviceRow): Actor => ({ userId: d.user_id, mode: modeOf(d), via: 'device' });

/**
 * Refuses the signal when the device was revoked since it was authenticated: at once when the
 * cache heard of it (an access notice), and in the transaction of a stored signal or of a turn-on,
 * where the device's row is written and locked (a revoke running at the same time waits for it,
 * then switches the device off, or wins and the fix is refused).
 */
class NotRevoked implements SignalGuard {
  constructor(
    private readonly ctx: AppContext,
    private readonly entry: CachedDevice,
  ) {}

  check(): void {
    if (!this.entry.valid) throw unauthorized();
  }

  async inTx(tx: Tx): Promise<void> {
    if (!this.entry.valid || !(await touchDevice(tx.db, this.entry.device.id, iso(this.ctx.clock.now())))) throw unauthorized();
  }
}

/** The field a bad fix is reported under: `lat` for a single fix, `2.lat` for the third of a batch. */
const fieldOf = (i: number, f: string) => (i === 0 ? f : `${i}.${f}`);

function check(fix: Fix, i: number, now: Date): Date {
  if (fix.lat < -90 || fix.lat > 90) throw badRequest(fieldOf(i, 'lat'), 'must be between -90 and 90');
  if (fix.lng < -180 || fix.lng > 180) throw badRequest(fieldOf(i, 'lon'), 'must be between -180 and 180');
  if (fix.accuracy !== null && !(fix.accuracy >= 0 && fix.accuracy <= 1_000_000)) fix.accuracy = null;
  const at = fix.at ?? now;
  if (at.getTime() > now.getTime() + MAX_CLOCK_SKEW_MS) throw badRequest(fieldOf(i, 'timestamp'), 'is in the future');
  return at;
}

/** The beacon's meta: device and protocol first, then a non-SOS alarm, then the fix's own values (in the app's order). */
function metaOf(device: DeviceRow, protocol: Protocol, fix: Fix): Record<string, unknown> {
  const meta: Record<string, unknown> = { device_id: device.device_id, protocol };
  if (fix.alarm && fix.alarm !== 'sos') meta.alarm = fix.alarm;
  const own = fix.meta;
  for (const k in own) meta[k] = own[k];
  return meta;
}

/**
 * Turns the fixes of one request into signals through the same path as POST /v1/signals. Only
 * the newest becomes a beacon (an hour of buffered fixes moves the marker once, to the last
 * one; the store keeps no history), and the beacon store never moves a marker back to an older
 * fix than it shows. Each `alarm=sos` also becomes an alert signal. Any bad fix refuses the request.
 * The beacon goes straight to the beacon path (postBeacon): the fix is already checked, so no
 * generic signal is built and validated again.
 */
export async function ingest(ctx: AppContext, entry: CachedDevice, protocol: Protocol, fixes: Fix[]): Promise<void> {
  if (fixes.length === 0) throw badRequest('location', 'no position');
  const now = ctx.clock.now();
  const ats: Date[] = [];
  let newest = 0;
  let sos = false;
  for (let i = 0; i < fixes.length; i++) {
    const fix = fixes[i]!;
    const at = check(fix, i, now);
    ats.push(at);
    // The newest wins; of equal times, the later in the request.
    if (at.getTime() >= ats[newest]!.getTime()) newest = i;
    if (fix.alarm === 'sos') sos = true;
  }
  const device = entry.device;
  const actor = actorOf(device);
  const guard = new NotRevoked(ctx, entry);
  if (sos) {
    const base = { org_id: device.org_id, lat: 0, lng: 0 };
    for (let i = 0; i < fixes.length; i++) {
      const fix = fixes[i]!;
      if (fix.alarm !== 'sos') continue;
      const note = `SOS from ${device.name}`;
      await createSignal(ctx, actor, { ...base, type: 'alert', lat: fix.lat, lng: fix.lng, note, meta: { device_id: device.device_id, protocol, alarm: 'sos' } as Meta, recorded_at: iso(ats[i]!) }, null, guard);
    }
  }
  const fix = fixes[newest]!;
  const at = ats[newest]!;
  const atIso = iso(at);
  await postBeacon(ctx, actor, device.org_id, { lat: fix.lat, lng: fix.lng, accuracy: fix.accuracy, meta: metaOf(device, protocol, fix), at: atIso, now: at === now ? atIso : iso(now) }, guard);
}
