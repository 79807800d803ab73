import type { AppContext } from '../../context.js';
import { flag, type Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { actorScope } from '../orgs/index.js';
import { writeAudit } from './audit.repository.js';
import { CHANNELS } from '../../events/channels.js';
import { deviceNames, type BeaconState, type DeviceKey } from './beacons.repository.js';

/** The device key of a beacon: its `meta.device_id`, else the user (one device per user). */
export const deviceKeyOf = (deviceId: string | null | undefined) => deviceId ?? 'user';

/**
 * Switches a device off (on request or after silence): writes `beacon_off` and broadcasts it,
 * once, whichever caller gets there first. False when it was not on.
 */
export async function turnOff(ctx: AppContext, key: DeviceKey, reason: 'request' | 'silence' | 'removed', silentBefore?: string): Promise<boolean> {
  const state = await ctx.beacons.switchOff(ctx.db, key, silentBefore, async (tx, s) => {
    await audit(ctx, tx, s, key.mode, 'beacon_off', { reason });
    ctx.events.publish(tx, {
      channel: CHANNELS.signals,
      orgId: s.org_id,
      mode: key.mode,
      type: 'beacon_off',
      payload: { device_id: s.device_id, user_id: s.user_id, org_id: s.org_id },
    });
  });
  return state !== undefined;
}

export async function audit(
  ctx: AppContext,
  tx: Tx,
  s: Pick<BeaconState, 'org_id' | 'user_id' | 'device_id'>,
  mode: Mode,
  action: 'beacon_on' | 'beacon_off',
  meta: Record<string, unknown>,
) {
  await writeAudit(tx.db, {
    org_id: s.org_id,
    livemode: flag(mode === 'live'),
    action,
    user_id: s.user_id,
    device_id: s.device_id,
    meta: JSON.stringify(meta),
    created_at: iso(ctx.clock.now()),
  });
}

export async function stopBeacon(ctx: AppContext, actor: Actor, deviceId: string | undefined) {
  await turnOff(ctx, { mode: actor.mode, userId: actor.userId, deviceKey: deviceKeyOf(deviceId) }, 'request');
  return { ok: true };
}

export async function listBeacons(ctx: AppContext, actor: Actor) {
  const scope = await actorScope(ctx, actor);
  const rows = await ctx.beacons.active(ctx.db, scope);
  const names = await deviceNames(
    ctx.db,
    scope,
    rows.flatMap((b) => (b.device_id === null ? [] : [{ user_id: b.user_id, device_id: b.device_id }])),
  );
  return {
    beacons: rows.map((b) => ({
      device_id: b.device_id,
      device_name: b.device_id === null ? null : (names.get(`${b.user_id}:${b.device_id}`) ?? null),
      user_id: b.user_id,
      user_name: b.user_name,
      org_id: b.org_id,
      lat: b.lat,
      lng: b.lng,
      accuracy: b.accuracy,
      meta: b.meta,
      created_at: b.position_at,
      last_seen_at: b.last_seen_at,
    })),
  };
}

/**
 * Switches off every device a user has on in an org, in both modes (`beacon_off` with reason
 * `removed`): they were removed from the org or left it. Their fixes are refused from then on; this
 * takes them off the org's map and device list at once, as a device moved to another org is, not
 * after the silence timeout (issue #31 F12). A beacon racing the removal cannot turn one on again
 * afterwards: a turn-on checks the membership in its own transaction (signals.service.ts).
 */
export async function switchOffMember(ctx: AppContext, userId: number, orgId: number): Promise<number> {
  const store = ctx.beacons;
  let off = 0;
  for (const mode of ['live', 'test'] as const) {
    for (const s of await store.active(ctx.db, { orgIds: [orgId], mode })) {
      if (s.user_id === userId && (await turnOff(ctx, { mode, userId, deviceKey: s.device_key }, 'removed'))) off += 1;
    }
  }
  return off;
}

/** Switches off every device silent for longer than the timeout (the beacon sweeper). */
export async function sweepSilentBeacons(ctx: AppContext): Promise<number> {
  const before = iso(new Date(ctx.clock.now().getTime() - ctx.config.beaconTimeoutMs));
  let off = 0;
  for (const key of await ctx.beacons.silent(ctx.db, before, 1000)) {
    if (await turnOff(ctx, key, 'silence', before)) off += 1;
  }
  return off;
}
