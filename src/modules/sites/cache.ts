import type { Kysely } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import type { AccessNotice } from '../../events/access.js';
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

/** An entry is read again after this long even without a notice (one lost while Redis was away). */
const MAX_AGE_MS = 30_000;
/** Orgs kept at most (the oldest go first). */
const MAX_ORGS = 10_000;

/**
 * Each org's sites (both modes) in memory, so that a fix costs no query. Every change of an org's
 * sites publishes a `{sitesOf}` notice (events/access.ts), which reaches this instance at once and
 * the others through the Redis bus: the org's entry is dropped. While the bus may be missing notices
 * nothing is served from memory, and when hearing resumes everything held is dropped; an entry is
 * also read again after 30 s. (The same scheme as the subscription cache of modules/subscriptions.)
 */
export class SiteCache {
  private readonly byOrg = new Map<number, { sites: readonly WatchedSite[]; at: number }>();
  private readonly invalidated = new Map<number, number>();
  private seq = 0;
  private floor = 0;
  private epoch: number | undefined = 0;
  readonly stop: () => void;

  constructor(
    private readonly bus: EventBus,
    private readonly now: () => number = Date.now,
  ) {
    this.stop = bus.subscribeAccess((n) => this.onNotice(n));
  }

  /** The org's sites of one mode. */
  async ofOrg(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<readonly WatchedSite[]> {
    return (await this.allOf(db, orgId)).filter((s) => s.livemode === livemode);
  }

  private async allOf(db: Kysely<DB>, orgId: number): Promise<readonly WatchedSite[]> {
    const usable = this.usable();
    const hit = usable ? this.byOrg.get(orgId) : undefined;
    if (hit && this.now() - hit.at < MAX_AGE_MS) return hit.sites;
    const started = this.seq;
    const sites = (await allSitesOfOrg(db, orgId)).map(watched);
    if (usable && this.usable() && started >= this.floor && (this.invalidated.get(orgId) ?? -1) <= started) {
      if (this.byOrg.size >= MAX_ORGS) this.byOrg.delete(this.byOrg.keys().next().value!);
      this.byOrg.set(orgId, { sites, at: this.now() });
    }
    return sites;
  }

  private usable(): boolean {
    const epoch = this.bus.accessEpoch ? this.bus.accessEpoch() : 0;
    if (epoch !== this.epoch) {
      this.byOrg.clear();
      this.epoch = epoch;
      this.floor = ++this.seq;
    }
    return epoch !== undefined;
  }

  private onNotice(n: AccessNotice): void {
    const orgId = n.sitesOf ?? (n.userId === undefined && n.deviceId === undefined && n.subscriptionsOf === undefined ? n.orgId : undefined);
    if (orgId === undefined) return;
    this.byOrg.delete(orgId);
    this.invalidated.set(orgId, ++this.seq);
    if (this.invalidated.size > MAX_ORGS) {
      this.invalidated.clear();
      this.floor = ++this.seq;
    }
  }
}
