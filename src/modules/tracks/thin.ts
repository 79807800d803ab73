// Thinning a track to at most MAX_POINTS points without losing its stops (docs/trackers.md, "Tracks").

export interface TrackPoint {
  lat: number;
  lng: number;
  accuracy: number | null;
  at: string;
}

export const MAX_POINTS = 5_000;
/** A stop: consecutive points within STOP_RADIUS_M of the first for at least STOP_MIN_MS. */
export const STOP_RADIUS_M = 50;
export const STOP_MIN_MS = 3 * 60_000;

const R = 6_371_000;
const rad = (d: number) => (d * Math.PI) / 180;

export function distanceM(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Indexes of the points that start or end a stop, in order. */
export function stopEnds(points: readonly TrackPoint[]): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < points.length) {
    let j = i;
    while (j + 1 < points.length && distanceM(points[i]!, points[j + 1]!) <= STOP_RADIUS_M) j += 1;
    if (j > i && Date.parse(points[j]!.at) - Date.parse(points[i]!.at) >= STOP_MIN_MS) {
      out.push(i, j);
      i = j + 1;
    } else {
      i += 1;
    }
  }
  return out;
}

/** Ramer-Douglas-Peucker over [from, to] (both kept), on local metres; marks kept points in `keep`. */
function rdp(points: readonly TrackPoint[], from: number, to: number, tolerance: number, keep: Uint8Array): void {
  const lat0 = rad(points[from]!.lat);
  const xy = (p: TrackPoint) => [rad(p.lng) * Math.cos(lat0) * R, rad(p.lat) * R] as const;
  const stack: [number, number][] = [[from, to]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    if (b - a < 2) continue;
    const [ax, ay] = xy(points[a]!);
    const [bx, by] = xy(points[b]!);
    const dx = bx - ax;
    const dy = by - ay;
    const len = Math.hypot(dx, dy);
    let worst = -1;
    let at = -1;
    for (let k = a + 1; k < b; k += 1) {
      const [px, py] = xy(points[k]!);
      const d = len === 0 ? Math.hypot(px - ax, py - ay) : Math.abs(dy * px - dx * py + bx * ay - by * ax) / len;
      if (d > worst) {
        worst = d;
        at = k;
      }
    }
    if (worst > tolerance) {
      keep[at] = 1;
      stack.push([a, at], [at, b]);
    }
  }
}

function simplify(points: readonly TrackPoint[], anchors: readonly number[], tolerance: number): number[] {
  const keep = new Uint8Array(points.length);
  const fixed = [...new Set([0, points.length - 1, ...anchors])].sort((x, y) => x - y);
  for (const i of fixed) keep[i] = 1;
  for (let s = 0; s + 1 < fixed.length; s += 1) rdp(points, fixed[s]!, fixed[s + 1]!, tolerance, keep);
  const out: number[] = [];
  for (let i = 0; i < points.length; i += 1) if (keep[i]) out.push(i);
  return out;
}

/**
 * At most `max` points: every point when there are no more; else the first and last points, every
 * point that starts or ends a stop, and the points Ramer-Douglas-Peucker keeps with the smallest
 * tolerance (1 m, doubled until it fits). Should the stops' ends alone be more than `max`, they are
 * all kept (a track that stops thousands of times in the range).
 */
export function thin(points: readonly TrackPoint[], max = MAX_POINTS): { points: TrackPoint[]; tolerance_m: number; stops: number } {
  const anchors = stopEnds(points);
  if (points.length <= max) return { points: [...points], tolerance_m: 0, stops: anchors.length / 2 };
  let tolerance = 1;
  let kept = simplify(points, anchors, tolerance);
  while (kept.length > max && tolerance < 40_000_000) {
    tolerance *= 2;
    kept = simplify(points, anchors, tolerance);
  }
  return { points: kept.map((i) => points[i]!), tolerance_m: tolerance, stops: anchors.length / 2 };
}
