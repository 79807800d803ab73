import { boundingBox } from '../dispatch/index.js';
import type { WatchedSite } from './cache.js';

// Which sites a fix can be inside, without testing all of them. A fix can only enter a site it is
// inside (a circle: within its radius; a polygon: in its ring), and only leave one the device is
// recorded inside; every other site's verdict changes nothing. So the watcher tests the sites whose
// bounding box holds the fix (from a grid of cells of CELL_DEG degrees) and the ones the device is
// inside, instead of each of the org's up to 1,000 sites per fix (issue #38's benchmark: 180 us a fix
// with 1,000 sites, most of the beacon path's time).

/** The grid's cell, in degrees of latitude and of longitude (about 2.2 km by 1.4 km at 50 degrees). */
const CELL_DEG = 0.02;
/** A site whose box covers more cells than this is tested at every fix instead (a very large site, or one near a pole). */
const MAX_CELLS = 1024;

const cellOf = (deg: number) => Math.floor(deg / CELL_DEG);
/** One number per cell: latitude cells -4500..4500, longitude cells -9000..9000. */
const keyOf = (i: number, j: number) => (i + 5000) * 20_000 + (j + 10_000);

interface Placed {
  site: WatchedSite;
  /** Its cells, inclusive; undefined: tested at every fix. */
  cells: { i0: number; i1: number; j0: number; j1: number } | undefined;
}

/**
 * The bounding box of a site in plain degrees, within -180..180 of longitude, or undefined when it has
 * none there: a polygon normalised across the antimeridian, or a circle whose box reaches it (such a
 * site is tested at every fix, as all were before the grid).
 */
function boxOf(site: WatchedSite): { minLat: number; maxLat: number; minLng: number; maxLng: number } | undefined {
  if (site.circle) {
    // A metre's margin: the box holds the circle exactly; floating point should not decide a fix on its edge.
    const b = boundingBox(site.circle.lat, site.circle.lng, site.circle.radiusM + 1);
    return b.minLng <= -180 || b.maxLng >= 180 ? undefined : b;
  }
  if (!site.ring) return undefined;
  let minLat = Infinity;
  let maxLat = -Infinity;
  let minLng = Infinity;
  let maxLng = -Infinity;
  for (const [lng, lat] of site.ring) {
    minLat = Math.min(minLat, lat);
    maxLat = Math.max(maxLat, lat);
    minLng = Math.min(minLng, lng);
    maxLng = Math.max(maxLng, lng);
  }
  // Inside the ring, a point's longitude taken near the first vertex (insideRing) is its own only when the ring stays off the antimeridian.
  return minLng <= -180 || maxLng >= 180 ? undefined : { minLat, maxLat, minLng, maxLng };
}

const NONE: readonly WatchedSite[] = Object.freeze([]);

/** An org's sites of one mode, indexed by the cells their boxes cover. Built once per cache entry. */
export class SiteGrid {
  readonly size: number;
  /** Sites tested at every fix (no box, or too many cells). */
  readonly everywhere: readonly WatchedSite[];
  private readonly cells = new Map<number, WatchedSite[]>();
  private readonly byId = new Map<number, Placed>();

  constructor(sites: readonly WatchedSite[]) {
    this.size = sites.length;
    const everywhere: WatchedSite[] = [];
    for (const site of sites) {
      const box = boxOf(site);
      const cells = box && { i0: cellOf(box.minLat), i1: cellOf(box.maxLat), j0: cellOf(box.minLng), j1: cellOf(box.maxLng) };
      if (!cells || (cells.i1 - cells.i0 + 1) * (cells.j1 - cells.j0 + 1) > MAX_CELLS) {
        everywhere.push(site);
        this.byId.set(site.id, { site, cells: undefined });
        continue;
      }
      this.byId.set(site.id, { site, cells });
      for (let i = cells.i0; i <= cells.i1; i++) {
        for (let j = cells.j0; j <= cells.j1; j++) {
          const k = keyOf(i, j);
          const list = this.cells.get(k);
          if (list) list.push(site);
          else this.cells.set(k, [site]);
        }
      }
    }
    this.everywhere = everywhere;
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  get(id: number): WatchedSite | undefined {
    return this.byId.get(id)?.site;
  }

  /** The sites with a box whose cell holds the point (everywhere's apart): every site the point is inside is here or in everywhere. */
  near(lat: number, lng: number): readonly WatchedSite[] {
    return this.cells.get(keyOf(cellOf(lat), cellOf(lng))) ?? NONE;
  }

  /** Whether near(lat, lng) or everywhere lists the site (so a caller going through both already tested it). */
  listed(id: number, lat: number, lng: number): boolean {
    const p = this.byId.get(id);
    if (!p) return false;
    if (!p.cells) return true;
    const i = cellOf(lat);
    const j = cellOf(lng);
    return i >= p.cells.i0 && i <= p.cells.i1 && j >= p.cells.j0 && j <= p.cells.j1;
  }
}
