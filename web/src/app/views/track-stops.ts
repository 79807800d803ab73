// Stops of a track, found in the page from its points (the API's track says only how many stops of
// 3 minutes it kept; the page marks the longer ones, docs/dispatch.md "Tracks in the dashboard").
// A stop: consecutive points within STOP_RADIUS_M of the stop's first point for at least STOP_MIN_MS.
// The API thins a track keeping the first and last point of every such stop, so the thinned points
// still show each stop's start and end.

export interface TrackPoint {
  lat: number;
  lng: number;
  accuracy: number | null;
  at: string;
}

export interface Stop {
  /** Index of its first and last point. */
  from: number;
  to: number;
  lat: number;
  lng: number;
  start: string;
  end: string;
  minutes: number;
}

export const STOP_RADIUS_M = 50;
export const STOP_MIN_MS = 5 * 60_000;

const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance in metres. */
export function distanceM(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function findStops(points: readonly TrackPoint[]): Stop[] {
  const out: Stop[] = [];
  let i = 0;
  while (i < points.length) {
    let j = i;
    while (j + 1 < points.length && distanceM(points[i]!, points[j + 1]!) <= STOP_RADIUS_M) j += 1;
    const ms = Date.parse(points[j]!.at) - Date.parse(points[i]!.at);
    if (j > i && ms >= STOP_MIN_MS) {
      // Drawn at the mean of its points: where the person stood, not where they first slowed down.
      const span = points.slice(i, j + 1);
      out.push({
        from: i,
        to: j,
        lat: span.reduce((s, p) => s + p.lat, 0) / span.length,
        lng: span.reduce((s, p) => s + p.lng, 0) / span.length,
        start: points[i]!.at,
        end: points[j]!.at,
        minutes: Math.round(ms / 60_000),
      });
      i = j + 1;
    } else {
      i += 1;
    }
  }
  return out;
}
