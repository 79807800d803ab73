import { haversineM } from '../dispatch/index.js';

// The geometry of sites, small and exact enough for geofences of a few metres to tens of
// kilometres. Longitudes of a polygon are normalised relative to its first vertex (each taken within
// 180 degrees of it), and so is a point tested against it: a polygon across the antimeridian
// (179.9 and -179.9) is one small polygon, not one spanning the globe.

/** A GeoJSON position: [longitude, latitude]. */
export type Position = [number, number];

const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

/** `lng` moved by whole turns to within 180 degrees of `ref`. */
export function nearLng(lng: number, ref: number): number {
  let d = lng - ref;
  while (d > 180) d -= 360;
  while (d < -180) d += 360;
  return ref + d;
}

/** The ring with its longitudes normalised relative to its first vertex. */
export function normalisedRing(ring: readonly Position[]): Position[] {
  const ref = ring[0]![0];
  return ring.map(([lng, lat]) => [nearLng(lng, ref), lat]);
}

export { haversineM };

/** What is wrong with a ring (a closed GeoJSON linear ring), or undefined. */
export function ringProblem(ring: readonly (readonly number[])[]): string | undefined {
  if (ring.length < 4) return 'a polygon needs at least 4 positions (the first repeated last)';
  if (ring.length > 1000) return 'a polygon has at most 1000 positions';
  for (const p of ring) {
    if (p.length !== 2 || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) return 'each position is [longitude, latitude]';
    if (p[0]! < -180 || p[0]! > 180) return 'a longitude is out of -180..180';
    if (p[1]! < -90 || p[1]! > 90) return 'a latitude is out of -90..90';
  }
  const first = ring[0]!;
  const last = ring[ring.length - 1]!;
  if (first[0] !== last[0] || first[1] !== last[1]) return 'the polygon is not closed (the last position must repeat the first)';
  const pts = normalisedRing(ring as Position[]);
  if (new Set(pts.slice(0, -1).map((p) => `${p[0]},${p[1]}`)).size < 3) return 'a polygon needs at least 3 distinct positions';
  if (selfIntersects(pts)) return 'the polygon intersects itself';
  return undefined;
}

type P = readonly [number, number];
const orient = (a: P, b: P, c: P) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
const onSegment = (a: P, b: P, c: P) => Math.min(a[0], b[0]) <= c[0] && c[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= c[1] && c[1] <= Math.max(a[1], b[1]);

/** Whether segments ab and cd share a point (touching counts). */
export function segmentsIntersect(a: P, b: P, c: P, d: P): boolean {
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (o1 === 0 && onSegment(a, b, c)) || (o2 === 0 && onSegment(a, b, d)) || (o3 === 0 && onSegment(c, d, a)) || (o4 === 0 && onSegment(c, d, b));
}

/**
 * Whether two edges of a closed ring that are not neighbours meet (O(n²): at most 1000 positions).
 * Neighbouring edges share their vertex; they intersect only when they fold back on each other.
 */
export function selfIntersects(ring: readonly P[]): boolean {
  const n = ring.length - 1; // edges
  for (let i = 0; i < n; i++) {
    const a = ring[i]!;
    const b = ring[i + 1]!;
    for (let j = i + 1; j < n; j++) {
      const c = ring[j]!;
      const d = ring[j + 1]!;
      const neighbours = j === i + 1 || (i === 0 && j === n - 1);
      if (neighbours) {
        // Sharing a vertex is fine; folding back (collinear and overlapping beyond it) is not.
        const shared = j === i + 1 ? b : a;
        const other = j === i + 1 ? d : c;
        const mine = j === i + 1 ? a : b;
        if (orient(mine, shared, other) === 0 && (onSegment(mine, shared, other) || onSegment(shared, other, mine))) return true;
        continue;
      }
      if (segmentsIntersect(a, b, c, d)) return true;
    }
  }
  return false;
}

/** Whether a point is inside a ring (even-odd rule; the ring as normalised, the point normalised to it). */
export function insideRing(ring: readonly Position[], lat: number, lng: number): boolean {
  const x = nearLng(lng, ring[0]![0]);
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > lat !== yj > lat && x < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * Metres from a point to the nearest edge of a ring, on a plane tangent at the point (exact enough for
 * a site's size: the error is far below a fix's accuracy for rings of tens of kilometres).
 */
export function distanceToRingM(ring: readonly Position[], lat: number, lng: number): number {
  const x0 = nearLng(lng, ring[0]![0]);
  const kx = Math.cos(lat * RAD) * EARTH_RADIUS_M * RAD;
  const ky = EARTH_RADIUS_M * RAD;
  let best = Infinity;
  for (let i = 0; i + 1 < ring.length; i++) {
    const ax = (ring[i]![0] - x0) * kx;
    const ay = (ring[i]![1] - lat) * ky;
    const bx = (ring[i + 1]![0] - x0) * kx;
    const by = (ring[i + 1]![1] - lat) * ky;
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2));
    best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
  }
  return best;
}
