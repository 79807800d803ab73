import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { flag } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import { atLeast, targetOrg } from '../orgs/index.js';
import { listMemberOrgs } from '../orgs/index.js';
import type { BeaconState } from '../signals/index.js';
import { turnOff } from '../signals/index.js';
import { findUserById } from '../users/index.js';
import { TOKEN_PLACEHOLDER, deviceUrls, owntracksConfig } from './device-urls.js';
import * as repo from './devices.repository.js';
import type { DeviceRow, ListedDevice } from './devices.repository.js';

/** `mdt_` + 32 random bytes: never the shape of an API key, so the API refuses it (401). */
export const TOKEN_PATTERN = /^mdt_[A-Za-z0-9_-]{43}$/;

/** The spec's device identity form, `dev-xxxxxx-xxxxxxxx` (lowercase hex). */
const newDeviceId = () => `dev-${randomBytes(3).toString('hex')}-${randomBytes(4).toString('hex')}`;

/** The device with its live state laid over the stored one (the memory store flushes positions once a second). */
function withLive(d: ListedDevice, live: BeaconState | undefined): ListedDevice {
  if (!live) return d;
  const seen = d.last_seen_at === null || live.last_seen_at > d.last_seen_at ? live.last_seen_at : d.last_seen_at;
  return { ...d, lat: live.lat, lng: live.lng, accuracy: live.accuracy, position_at: live.position_at, active: live.active, last_seen_at: seen };
}

function toDevice(ctx: AppContext, d: ListedDevice, token = TOKEN_PLACEHOLDER) {
  return {
    id: d.id,
    name: d.name,
    user_id: d.user_id,
    user_name: d.user_name,
    org_id: d.org_id,
    device_id: d.device_id,
    livemode: d.livemode === 1,
    ...deviceUrls(ctx.config.publicUrl, token),
    active: d.active === 1,
    last_position: d.position_at === null ? null : { lat: d.lat, lng: d.lng, accuracy: d.accuracy, recorded_at: d.position_at },
    last_seen_at: d.last_seen_at,
    created_at: d.created_at,
  };
}

const unlisted = (d: DeviceRow, userName: string): ListedDevice => ({ ...d, user_name: userName, lat: null, lng: null, accuracy: null, position_at: null, active: null });

/** Registers a tracker app for the caller in one of their orgs, in the caller's mode. The token is shown once. */
export async function createDevice(ctx: AppContext, actor: Actor, input: { name: string; org_id?: number; device_id?: string }) {
  const { org } = await targetOrg(ctx, actor, input.org_id);
  const token = `mdt_${randomToken(32)}`;
  const now = iso(ctx.clock.now());
  const user = await findUserById(ctx.db, actor.userId);
  let row: DeviceRow;
  try {
    row = await repo.insertDevice(ctx.db, {
      user_id: actor.userId,
      org_id: org.id,
      livemode: flag(actor.mode === 'live'),
      name: input.name.trim(),
      device_id: input.device_id ?? newDeviceId(),
      token_hash: sha256(token),
      created_at: now,
      updated_at: now,
      last_seen_at: null,
      revoked_at: null,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('You already have a device with this device_id');
    throw err;
  }
  return { ...toDevice(ctx, unlisted(row, user?.name ?? ''), token), token, owntracks_config: owntracksConfig(ctx.config.publicUrl, row, token) };
}

/** The orgs where the caller is an admin or owner: they see (and manage) every device there. */
async function administeredOrgs(ctx: AppContext, actor: Actor) {
  const orgs = await listMemberOrgs(ctx.db, actor.userId);
  return { all: orgs.map((o) => o.id), admin: orgs.filter((o) => atLeast(o.role, 'admin')).map((o) => o.id) };
}

export async function listDevices(ctx: AppContext, actor: Actor) {
  const orgs = await administeredOrgs(ctx, actor);
  const rows = await repo.listDevices(ctx.db, { orgIds: orgs.all, mode: actor.mode }, actor.userId, orgs.admin);
  const live = await ctx.beacons.lookup(rows.map(beaconKey));
  return { devices: rows.map((d, i) => toDevice(ctx, withLive(d, live[i]))) };
}

/** A device the caller may manage: their own, or any in an org they administer; else 404. */
async function manageable(ctx: AppContext, actor: Actor, id: number) {
  const orgs = await administeredOrgs(ctx, actor);
  const d = await repo.findDevice(ctx.db, { orgIds: orgs.all, mode: actor.mode }, id);
  if (!d || (d.user_id !== actor.userId && !orgs.admin.includes(d.org_id))) throw notFound();
  return d;
}

function beaconKey(d: DeviceRow) {
  return { mode: d.livemode === 1 ? ('live' as const) : ('test' as const), userId: d.user_id, deviceKey: d.device_id };
}
/** Renames, or moves to another org of the device's owner (only the owner moves it; the old org sees beacon_off). */
export async function updateDevice(ctx: AppContext, actor: Actor, id: number, input: { name?: string; org_id?: number }) {
  const d = await manageable(ctx, actor, id);
  const moving = input.org_id !== undefined && input.org_id !== d.org_id;
  if (moving) {
    if (d.user_id !== actor.userId) throw forbidden();
    await targetOrg(ctx, actor, input.org_id);
  }
  const set = { updated_at: iso(ctx.clock.now()), ...(input.name !== undefined ? { name: input.name.trim() } : {}), ...(moving ? { org_id: input.org_id } : {}) };
  const row = await repo.updateDevice(ctx.db, id, set);
  if (!row) throw notFound();
  // Cached tokens carry the device's org and name: every instance reads the device again.
  ctx.events.endAccess({ deviceId: id });
  if (moving) await turnOff(ctx, beaconKey(d), 'request');
  const listed = (await repo.listDevices(ctx.db, { orgIds: [row.org_id], mode: actor.mode }, row.user_id, [row.org_id])).find((x) => x.id === id);
  return toDevice(ctx, listed ?? unlisted(row, ''));
}

/** Revokes the token (401 from then on) and switches the device off, writing beacon_off. */
export async function revokeDevice(ctx: AppContext, actor: Actor, id: number) {
  const d = await manageable(ctx, actor, id);
  const revoked = await ctx.transaction(async (tx) => {
    const done = await repo.revokeDevice(tx.db, id, iso(ctx.clock.now()));
    // Every instance drops the cached token once this commits (before the device is switched off below).
    if (done) ctx.events.endAccess({ deviceId: id }, tx);
    return done;
  });
  if (!revoked) throw notFound();
  await turnOff(ctx, beaconKey(d), 'request');
  return { id, revoked: true };
}
