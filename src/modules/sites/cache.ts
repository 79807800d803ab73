import type { Kysely } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import { OrgCache, orgNoticeOf } from '../../events/org-cache.js';
import { normalisedRing, type Position } from './geometry.js';
import { SiteGrid } from './grid.js';
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

/** An org's sites as the watcher holds them: one grid per mode. */
interface OrgSites {
  live: SiteGrid;
  test: SiteGrid;
}

/**
 * Each org's sites (both modes) in memory, so that a fix costs no query, each mode's in a grid built once
 * per read (grid.ts), so that a fix is tested against the sites near it. Every change of an org's
 * sites publishes a `{sitesOf}` notice (events/access.ts); the org's entry is dropped on every
 * instance (events/org-cache.ts has the rules, shared with the subscription cache).
 */
export class SiteCache {
  private readonly cache: OrgCache<OrgSites>;
  readonly stop: () => void;

  constructor(bus: EventBus, now: () => number = Date.now) {
    const load = async (db: Kysely<DB>, orgId: number): Promise<OrgSites> => {
      const sites = (await allSitesOfOrg(db, orgId)).map(watched);
      return { live: new SiteGrid(sites.filter((s) => s.livemode === 1)), test: new SiteGrid(sites.filter((s) => s.livemode === 0)) };
    };
    this.cache = new OrgCache(bus, orgNoticeOf('sitesOf'), load, now);
    this.stop = this.cache.stop;
  }

  /** The org's sites of one mode when memory holds them fresh (no waiting); else undefined. */
  peekOrg(orgId: number, livemode: Flag): SiteGrid | undefined {
    const org = this.cache.peek(orgId);
    return org && (livemode === 1 ? org.live : org.test);
  }

  /** The org's sites of one mode. */
  async ofOrg(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<SiteGrid> {
    const org = await this.cache.of(db, orgId);
    return livemode === 1 ? org.live : org.test;
  }
}
