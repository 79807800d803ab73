// The sites grid may only skip sites a fix cannot enter: whatever a brute-force test of every site says
// a fix is inside must be among the sites the grid lists for it (cells, or the ones tested everywhere).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WatchedSite } from './cache.js';
import { normalisedRing, type Position } from './geometry.js';
import { SiteGrid } from './grid.js';
import { verdict } from './presence.js';

/** Deterministic (mulberry32): a failure repeats. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const circle = (id: number, lat: number, lng: number, radiusM: number): WatchedSite => ({ id, orgId: 1, livemode: 1, name: `c${id}`, circle: { lat, lng, radiusM }, ring: null });
const polygon = (id: number, ring: Position[]): WatchedSite => ({ id, orgId: 1, livemode: 1, name: `p${id}`, circle: null, ring: normalisedRing([...ring, ring[0]!]) });
const wrap = (lng: number) => ((((lng + 180) % 360) + 360) % 360) - 180;

/** Sites around `lat`, `lng`: circles of 10 m to 50 km and star-shaped polygons, some across the antimeridian when lng is near it. */
function sitesAround(rnd: () => number, lat: number, lng: number, n: number): WatchedSite[] {
  return Array.from({ length: n }, (_, id) => {
    const cLat = Math.max(-89.9, Math.min(89.9, lat + (rnd() - 0.5) * 0.6));
    const cLng = wrap(lng + (rnd() - 0.5) * 0.6);
    if (id % 4 !== 0) return circle(id + 1, cLat, cLng, 10 * 5000 ** rnd());
    const r = 0.0005 + 0.05 * rnd();
    const k = 3 + Math.floor(rnd() * 10);
    const ring = Array.from({ length: k }, (_, v): Position => {
      const a = (2 * Math.PI * (v + 0.8 * rnd())) / k;
      const d = r * (0.5 + 0.5 * rnd());
      return [wrap(cLng + d * Math.cos(a)), Math.max(-90, Math.min(90, cLat + d * Math.sin(a)))];
    });
    return polygon(id + 1, ring);
  });
}

describe('the sites grid', () => {
  test('lists every site a point is inside, wherever on the globe (mid-latitudes, the antimeridian, near a pole), and far fewer than all', () => {
    const rnd = random(38);
    let inside = 0;
    let listed = 0;
    let points = 0;
    for (const [lat, lng] of [[52.37, 4.9], [-16.5, 179.99], [-16.5, -179.99], [89.5, 10], [-89.7, -120], [0, 0], [37.77, -122.42]] as const) {
      const sites = sitesAround(rnd, lat, lng, 200);
      const grid = new SiteGrid(sites);
      assert.equal(grid.size, 200);
      for (let p = 0; p < 1000; p++) {
        const pLat = Math.max(-90, Math.min(90, lat + (rnd() - 0.5) * 0.8));
        const pLng = wrap(lng + (rnd() - 0.5) * 0.8);
        const candidates = new Set([...grid.near(pLat, pLng), ...grid.everywhere].map((s) => s.id));
        for (const s of sites) {
          assert.equal(grid.listed(s.id, pLat, pLng), candidates.has(s.id), `listed(${s.id}) at ${pLat}, ${pLng}`);
          if (verdict(s, pLat, pLng, 0) !== 'in') continue;
          inside++;
          assert.ok(candidates.has(s.id), `site ${s.id} (${JSON.stringify(s.circle ?? s.ring)}) holds ${pLat}, ${pLng} but is not listed`);
        }
        listed += candidates.size;
        points++;
      }
    }
    assert.ok(inside > 10_000, `${inside} (point, site) pairs inside: the test must exercise the grid`);
    assert.ok(listed / points < 50, `${(listed / points).toFixed(1)} sites listed per point, of 200`);
  });

  test('an empty grid lists nothing; get and has know its sites by id', () => {
    const empty = new SiteGrid([]);
    assert.deepEqual([empty.size, empty.near(1, 1).length, empty.everywhere.length, empty.has(1)], [0, 0, 0, false]);
    const grid = new SiteGrid([circle(7, 1, 1, 100)]);
    assert.equal(grid.get(7)?.name, 'c7');
    assert.equal(grid.has(8), false);
    assert.deepEqual(grid.near(1, 1).map((s) => s.id), [7]);
    assert.deepEqual(grid.near(2, 2).map((s) => s.id), []);
  });
});
