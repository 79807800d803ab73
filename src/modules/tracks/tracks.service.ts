import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, HOUR, iso } from '../../lib/clock.js';
import { forbidden, invalidField, notFound } from '../../lib/errors.js';
import type { Mode } from '../../db/schema.js';
import { listDevices } from '../devices/index.js';
import { atLeast, listMemberOrgs } from '../orgs/index.js';
import * as repo from './tracks.repository.js';
import { thin, type TrackPoint } from './thin.js';

/** The longest range one GET .../track reads. */
const MAX_RANGE_MS = 31 * DAY;

async function orgsOf(ctx: AppContext, actor: Actor) {
  const orgs = await listMemberOrgs(ctx.db, actor.userId);
  return { all: orgs.map((o) => o.id), admin: orgs.filter((o) => atLeast(o.role, 'admin')).map((o) => o.id) };
}

/**
 * GET /v1/devices: the caller's tracker apps and field terminals, and in the orgs they administer
 * everyone's. A field terminal is a `meta.device_id` known by its beacon state or its stored track
 * that is not a registered tracker app.
 */
export async function listAllDevices(ctx: AppContext, actor: Actor) {
  const { devices } = await listDevices(ctx, actor);
  const orgs = await orgsOf(ctx, actor);
  const { states, tracked } = await repo.fieldTerminals(ctx.db, actor.mode, orgs.all);
  const visible = (r: { user_id: number; org_id: number }) => r.user_id === actor.userId || orgs.admin.includes(r.org_id);
  const byKey = new Map<string, FieldTerminal>();
  const keyOf = (userId: number, deviceId: string) => `${userId}:${deviceId}`;
  for (const s of states.filter(visible)) {
    byKey.set(keyOf(s.user_id, s.device_key), {
      device_id: s.device_key,
      user_id: s.user_id,
      user_name: s.user_name,
      org_id: s.org_id,
      livemode: actor.mode === 'live',
      active: s.active === 1,
      last_position: s.lat === null ? null : { lat: s.lat, lng: s.lng, accuracy: s.accuracy, recorded_at: s.position_at },
      last_seen_at: s.last_seen_at,
    });
  }
  for (const r of tracked.filter(visible)) {
    if (byKey.has(keyOf(r.user_id, r.device_id))) continue;
    byKey.set(keyOf(r.user_id, r.device_id), {
      device_id: r.device_id,
      user_id: r.user_id,
      user_name: r.user_name,
      org_id: r.org_id,
      livemode: actor.mode === 'live',
      active: false,
      last_position: null,
      last_seen_at: r.last_at === null ? null : String(r.last_at),
    });
  }
  const terminals = [...byKey.values()];
  // The live state (the memory store flushes positions once a second) over the stored one.
  const live = await ctx.beacons.lookup(terminals.map((f) => ({ mode: actor.mode, userId: f.user_id, deviceKey: f.device_id })));
  terminals.forEach((f, i) => {
    const s = live[i];
    if (!s) return;
    f.active = s.active === 1;
    f.last_position = s.lat === null ? f.last_position : { lat: s.lat, lng: s.lng, accuracy: s.accuracy, recorded_at: s.position_at };
    if (f.last_seen_at === null || s.last_seen_at > f.last_seen_at) f.last_seen_at = s.last_seen_at;
  });
  terminals.sort((a, b) => (a.user_id - b.user_id) || (a.device_id < b.device_id ? -1 : a.device_id > b.device_id ? 1 : 0));
  return { devices, field_terminals: terminals };
}

export interface FieldTerminal {
  device_id: string;
  user_id: number;
  user_name: string;
  org_id: number;
  livemode: boolean;
  active: boolean;
  last_position: { lat: number | null; lng: number | null; accuracy: number | null; recorded_at: string } | null;
  last_seen_at: string | null;
}

/**
 * Whose track the id names and which of its points the caller reads: a tracker app's numeric id or
 * any device's `device_id`. Another org's device is 404; a device of the caller's org that is not
 * theirs is 403 unless they administer the org (then they read its points in the orgs they administer).
 */
async function trackScope(ctx: AppContext, actor: Actor, id: string): Promise<repo.TrackScope> {
  const orgs = await orgsOf(ctx, actor);
  let owners: { user_id: number; org_id: number; device_id: string }[];
  if (/^[1-9][0-9]{0,15}$/.test(id)) {
    const d = await repo.trackerApp(ctx.db, actor.mode, Number(id), orgs.all);
    owners = d ? [d] : [];
  } else {
    owners = (await repo.ownersOfDeviceId(ctx.db, actor.mode, id, orgs.all)).map((o) => ({ ...o, device_id: id }));
  }
  if (owners.length === 0) throw notFound();
  const own = owners.find((o) => o.user_id === actor.userId);
  if (own) return { mode: actor.mode, userId: actor.userId, deviceId: own.device_id };
  const administered = owners.find((o) => orgs.admin.includes(o.org_id));
  if (!administered) throw forbidden();
  return { mode: actor.mode, userId: administered.user_id, deviceId: administered.device_id, orgIds: orgs.admin };
}

function parseTime(field: 'from' | 'to', value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidField(field, 'must be an ISO-8601 time');
  return ms;
}

/** `from` and `to` of a range read: default the last 24 hours; at most `maxMs` long (else 422 `to`). */
export function rangeOf(ctx: AppContext, q: { from?: string | undefined; to?: string | undefined }, maxMs = MAX_RANGE_MS, defaultMs = 24 * HOUR) {
  const now = ctx.clock.now().getTime();
  const to = parseTime('to', q.to, now);
  const from = parseTime('from', q.from, to - defaultMs);
  if (to < from) throw invalidField('to', 'must not be before from');
  if (to - from > maxMs) throw invalidField('to', `the range is at most ${Math.round(maxMs / DAY)} days`);
  return { from: iso(new Date(from)), to: iso(new Date(to)) };
}

/** GET /v1/devices/:id/track: the points of the range, thinned to at most 5,000 with every stop kept. */
export async function getTrack(ctx: AppContext, actor: Actor, id: string, q: { from?: string | undefined; to?: string | undefined }) {
  const range = rangeOf(ctx, q);
  const scope = await trackScope(ctx, actor, id);
  const rows = await repo.trackPoints(ctx.db, scope, range.from, range.to);
  const points: TrackPoint[] = rows.map((r) => ({ lat: r.lat, lng: r.lng, accuracy: r.accuracy, at: r.recorded_at }));
  const thinned = thin(points);
  return { device_id: scope.deviceId, user_id: scope.userId, ...range, total_points: points.length, stops: thinned.stops, points: thinned.points };
}

export type Track = Awaited<ReturnType<typeof getTrack>>;

/** The track as GeoJSON: one Feature, a LineString ([lng, lat]), the times and accuracies in its properties. */
export function trackGeoJson(t: Track) {
  return {
    type: 'Feature' as const,
    geometry: { type: 'LineString' as const, coordinates: t.points.map((p) => [p.lng, p.lat]) },
    properties: {
      device_id: t.device_id,
      user_id: t.user_id,
      from: t.from,
      to: t.to,
      total_points: t.total_points,
      stops: t.stops,
      times: t.points.map((p) => p.at),
      accuracies: t.points.map((p) => p.accuracy),
    },
  };
}

/** A person's positions in the credential's mode, for their export (GET /v1/auth/me/export). */
export async function exportTracks(ctx: AppContext, userId: number, mode: Mode) {
  const rows = await repo.positionsOf(ctx.db, userId, mode);
  return rows.map((r) => ({ org_id: r.org_id, livemode: r.livemode === 1, device_id: r.device_id, lat: r.lat, lng: r.lng, accuracy: r.accuracy, at: r.recorded_at }));
}

export { deletePositionsOf as deleteTracksOf } from './tracks.repository.js';

/** Deletes the positions older than the org's tracks_days, in batches (the retention sweep). */
export async function sweepTracks(ctx: AppContext, orgId: number, tracksDays: number, batch: number): Promise<number> {
  // Staged positions first join the track (a tracker's late upload may already be past the retention).
  await ctx.tracks.move();
  if (tracksDays <= 0) {
    // An org that stopped keeping tracks: what it kept goes too.
    return sweepBefore(ctx, orgId, '9999-12-31T23:59:59.999Z', batch);
  }
  return sweepBefore(ctx, orgId, iso(new Date(ctx.clock.now().getTime() - tracksDays * DAY)), batch);
}

async function sweepBefore(ctx: AppContext, orgId: number, before: string, batch: number): Promise<number> {
  let total = 0;
  for (const mode of ['live', 'test'] as Mode[]) {
    for (;;) {
      const ids = await repo.oldTrackIds(ctx.db, orgId, mode, before, batch);
      if (ids.length === 0) break;
      total += await repo.deleteTrackIds(ctx.db, ids);
      if (ids.length < batch) break;
    }
  }
  return total;
}
