import type { AppContext } from '../../context.js';
import { flag, type Flag, type Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { CHANNELS } from '../../events/channels.js';
import { iso } from '../../lib/clock.js';
import type { ObservedFix } from '../signals/index.js';
import { writeAudit } from '../signals/index.js';
import { SiteCache, type WatchedSite } from './cache.js';
import type { SiteGrid } from './grid.js';
import { distanceToRingM, haversineM, insideRing } from './geometry.js';
import { claimEnter, claimExit, sitesInside, type PresenceKey } from './sites.repository.js';

/** A polygon decides only on fixes at least this accurate (metres); a circle on fixes no less accurate than its radius. */
export const POLYGON_ACCURACY_M = 50;

/**
 * What one fix says about one site: `in`, `out`, or nothing (undefined). A missing accuracy counts
 * as 0 (the device did not say).
 * - Circle: a fix whose accuracy is worse than the radius decides nothing; inside when the distance
 *   to the centre is at most the radius; outside when it is more than radius + accuracy; between
 *   the two, nothing (hysteresis: a device at the edge does not flicker).
 * - Polygon: a fix whose accuracy is worse than 50 m decides nothing; inside when the point is in
 *   the polygon; outside when the point is outside and farther than its accuracy from the nearest
 *   edge; else nothing.
 */
export function verdict(site: Pick<WatchedSite, 'circle' | 'ring'>, lat: number, lng: number, accuracy: number | null): 'in' | 'out' | undefined {
  const acc = accuracy ?? 0;
  if (site.circle) {
    const { radiusM } = site.circle;
    if (acc > radiusM) return undefined;
    const d = haversineM(site.circle.lat, site.circle.lng, lat, lng);
    if (d <= radiusM) return 'in';
    return d > radiusM + acc ? 'out' : undefined;
  }
  if (!site.ring || acc > POLYGON_ACCURACY_M) return undefined;
  if (insideRing(site.ring, lat, lng)) return 'in';
  return distanceToRingM(site.ring, lat, lng) > acc ? 'out' : undefined;
}

/** A device entering or leaving a site, as it is recorded, streamed and handed to subscriptions. */
export interface SiteTransition {
  type: 'site.enter' | 'site.exit';
  site: { id: number; name: string };
  orgId: number;
  livemode: Flag;
  userId: number;
  deviceId: string | null;
  lat: number;
  lng: number;
  accuracy: number | null;
  /** When the fix was taken. */
  at: string;
}

interface DeviceState {
  /** The sites of this org it is inside; undefined until read from site_presence (once per instance). */
  inside: Set<number> | undefined;
  chain: Promise<void>;
  pending: number;
}

/** Fixes of one device waiting at most; more are dropped (a device sending faster than its transitions can be written). */
const MAX_PENDING = 100;
/** Devices kept in memory at most (the oldest go first: they are read again from site_presence). */
const MAX_DEVICES = 100_000;

/**
 * The sites watcher of one instance: the per-device state (which sites it is inside) in memory, the
 * org's sites from the cache, and the writes of transitions. Fixes of one device are taken in order
 * (a chain per device); different devices go in parallel.
 */
export class SiteWatcher {
  readonly cache: SiteCache;
  private readonly devices = new Map<string, DeviceState>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly ctx: AppContext) {
    this.cache = new SiteCache(ctx.events.bus);
  }

  observe(fix: ObservedFix): void {
    const key = `${fix.orgId}|${fix.mode}|${fix.userId}|${fix.deviceId ?? ''}`;
    let state = this.devices.get(key);
    // The common case decides at once, with nothing queued: the org's sites are in memory and the
    // fix changes nothing (no sites, or a device whose presence is known and stays as it is).
    const known = this.cache.peekOrg(fix.orgId, flag(fix.mode === 'live'));
    if (known && (!state || state.pending === 0)) {
      if (known.size === 0 && (!state || state.inside === undefined || state.inside.size === 0)) return;
      if (state?.inside !== undefined && transitions(state.inside, known, fix).length === 0) return;
    }
    if (!state) {
      if (this.devices.size >= MAX_DEVICES) {
        for (const [k, s] of this.devices) {
          if (s.pending === 0) {
            this.devices.delete(k);
            break;
          }
        }
      }
      state = { inside: undefined, chain: Promise.resolve(), pending: 0 };
      this.devices.set(key, state);
    }
    if (state.pending >= MAX_PENDING) {
      this.ctx.log.warn({ userId: fix.userId, deviceId: fix.deviceId }, 'sites: too many fixes of one device waiting; this one is skipped');
      return;
    }
    const s = state;
    s.pending++;
    const run = s.chain
      .then(() => this.take(s, fix))
      .catch((err: unknown) => this.ctx.log.error({ err }, 'sites: a fix could not be checked against the sites'))
      .finally(() => {
        s.pending--;
        this.running.delete(run);
      });
    s.chain = run;
    this.running.add(run);
  }

  /** Resolves when every fix handed over so far has been decided and its transitions written (tests, close). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async take(state: DeviceState, fix: ObservedFix): Promise<void> {
    const ctx = this.ctx;
    const livemode = flag(fix.mode === 'live');
    const sites = await this.cache.ofOrg(ctx.db, fix.orgId, livemode);
    if (sites.size === 0 && (state.inside === undefined || state.inside.size === 0)) return;
    const key: PresenceKey = { userId: fix.userId, deviceKey: fix.deviceId ?? 'user', livemode };
    if (state.inside === undefined) state.inside = new Set((await sitesInside(ctx.db, key)).filter((id) => sites.has(id)));
    const inside = state.inside;
    for (const id of inside) if (!sites.has(id)) inside.delete(id); // a deleted site
    const changes = transitions(inside, sites, fix);
    if (changes.length === 0) return;
    await ctx.transaction(async (tx) => {
      for (const c of changes) await record(ctx, tx, fix.mode, key, c);
    });
    // Whether this instance recorded it or another one had: the database now says so too.
    for (const c of changes) {
      if (c.type === 'site.enter') inside.add(c.site.id);
      else inside.delete(c.site.id);
    }
  }
}

const NO_CHANGES: readonly SiteTransition[] = Object.freeze([]);

/** The transition one site makes for the fix, if any (hysteresis in `verdict`). */
function transition(site: WatchedSite, was: boolean, fix: ObservedFix): SiteTransition | undefined {
  const v = verdict(site, fix.lat, fix.lng, fix.accuracy);
  if (!((v === 'in' && !was) || (v === 'out' && was))) return undefined;
  return {
    type: v === 'in' ? 'site.enter' : 'site.exit',
    site: { id: site.id, name: site.name },
    orgId: fix.orgId,
    livemode: site.livemode,
    userId: fix.userId,
    deviceId: fix.deviceId,
    lat: fix.lat,
    lng: fix.lng,
    accuracy: fix.accuracy,
    at: fix.at,
  };
}

/**
 * The transitions one fix makes for a device inside `inside`, decided in memory, in the order of the
 * sites' ids. Only two kinds of site can change: one whose box holds the fix (it may enter), and one the
 * device is inside (it may leave); the grid lists the first, `inside` the second.
 */
function transitions(inside: ReadonlySet<number>, sites: SiteGrid, fix: ObservedFix): readonly SiteTransition[] {
  let changes: SiteTransition[] | undefined;
  const add = (c: SiteTransition | undefined) => {
    if (c) (changes ??= []).push(c);
  };
  for (const site of sites.near(fix.lat, fix.lng)) add(transition(site, inside.has(site.id), fix));
  for (const site of sites.everywhere) add(transition(site, inside.has(site.id), fix));
  for (const id of inside) {
    const site = sites.get(id);
    if (site && !sites.listed(id, fix.lat, fix.lng)) add(transition(site, true, fix));
  }
  if (!changes) return NO_CHANGES;
  return changes.length > 1 ? changes.sort((a, b) => a.site.id - b.site.id) : changes;
}

/**
 * Records one transition, exactly once across instances: the conditional write of its presence row
 * claims it, and only the claim that changed the row writes the audit entry, publishes the stream
 * event and hands it to the subscriptions, all in the one transaction.
 */
async function record(ctx: AppContext, tx: Tx, mode: Mode, key: PresenceKey, c: SiteTransition): Promise<boolean> {
  const now = iso(ctx.clock.now());
  const claimed = c.type === 'site.enter' ? await claimEnter(tx.db, c.site.id, key, now) : await claimExit(tx.db, c.site.id, key, now);
  if (!claimed) return false;
  await writeAudit(tx.db, {
    org_id: c.orgId,
    livemode: c.livemode,
    action: c.type,
    user_id: c.userId,
    device_id: c.deviceId,
    meta: JSON.stringify({ site_id: c.site.id, site_name: c.site.name, lat: c.lat, lng: c.lng, accuracy: c.accuracy, at: c.at }),
    created_at: now,
  });
  ctx.events.publish(tx, {
    channel: CHANNELS.signals,
    orgId: c.orgId,
    mode,
    type: c.type,
    payload: { site_id: c.site.id, site_name: c.site.name, org_id: c.orgId, user_id: c.userId, device_id: c.deviceId, lat: c.lat, lng: c.lng, accuracy: c.accuracy, at: c.at },
  });
  await ctx.subscriptions.onSite(ctx, tx, c);
  return true;
}

/**
 * The sites watcher of an instance, built by context.ts as `ctx.sites` (its observer joins
 * `ctx.positions`); the watcher itself is made at the first fix, with the context it came with.
 * `idle` resolves when every fix handed over has been decided and written (tests, close).
 */
export function siteWatch() {
  let watcher: SiteWatcher | undefined;
  return {
    observe(ctx: AppContext, fix: ObservedFix): void {
      (watcher ??= new SiteWatcher(ctx)).observe(fix);
    },
    idle: (): Promise<void> => watcher?.idle() ?? Promise.resolve(),
    close(): void {
      watcher?.cache.stop();
    },
  };
}
export type SiteWatch = ReturnType<typeof siteWatch>;
