import type { Kysely } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import type { AccessNotice } from '../../events/access.js';
import { OrgCache } from '../../events/org-cache.js';
import { normalisedRing, type Position } from './geometry.js';
import { allSitesOfOrg, type SiteRow } from './sites.repository.js';

/** A site as the watcher tests positions against it: a circle, or a polygon's ring normalised once. */
export interface WatchedSite {
  id: number;
  orgId: number;
  livemode: Flag;
  name: string;
  circle: { lat: number; lng: number; radiusM: number } | null;
  ring: Position[] | null;
}

const watched = (s: SiteRow): WatchedSite => ({
  id: s.id,
  orgId: s.org_id,
  livemode: s.livemode,
  name: s.name,
  circle: s.kind === 'circle' ? { lat: s.lat!, lng: s.lng!, radiusM: s.radius_m! } : null,
  ring: s.kind === 'polygon' && s.area ? normalisedRing(s.area.coordinates[0]!) : null,
});

/**
 * Each org's sites (both modes) in memory, so that a fix costs no query. Every change of an org's
 * sites publishes a `{sitesOf}` notice (events/access.ts); the org's entry is dropped on every
 * instance (events/org-cache.ts has the rules, shared with the subscription cache).
 */
export class SiteCache {
  private readonly cache: OrgCache<readonly WatchedSite[]>;
  readonly stop: () => void;

  constructor(bus: EventBus, now: () => number = Date.now) {
    const orgOf = (n: AccessNotice) => n.sitesOf ?? (n.userId === undefined && n.deviceId === undefined && n.subscriptionsOf === undefined ? n.orgId : undefined);
    this.cache = new OrgCache(bus, orgOf, async (db, orgId) => (await allSitesOfOrg(db, orgId)).map(watched), now);
    this.stop = this.cache.stop;
  }

  /** The org's sites of one mode when memory holds them fresh (no waiting); else undefined. */
  peekOrg(orgId: number, livemode: Flag): readonly WatchedSite[] | undefined {
    return this.cache.peek(orgId)?.filter((s) => s.livemode === livemode);
  }

  /** The org's sites of one mode. */
  async ofOrg(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<readonly WatchedSite[]> {
    return (await this.cache.of(db, orgId)).filter((s) => s.livemode === livemode);
  }
}
