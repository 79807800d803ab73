import type { Box } from '../signals/index.js';

const EARTH_RADIUS_M = 6_371_008.8; // mean radius (IUGG)
const RAD = Math.PI / 180;

/** Great-circle distance in metres (haversine). */
export function haversineM(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLng = (lng2 - lng1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * The latitude/longitude rectangle that holds every point within `radiusM` of a centre: a cheap
 * prefilter (an index range in SQL, two comparisons in memory) before the exact distance. Near a
 * pole or across the antimeridian the longitude range is left open rather than wrapped.
 */
export function boundingBox(lat: number, lng: number, radiusM: number): Box {
  const dLat = radiusM / EARTH_RADIUS_M / RAD;
  const minLat = Math.max(-90, lat - dLat);
  const maxLat = Math.min(90, lat + dLat);
  const cos = Math.cos(Math.max(Math.abs(minLat), Math.abs(maxLat)) * RAD);
  const dLng = cos < 1e-9 ? 360 : dLat / cos;
  if (lng - dLng < -180 || lng + dLng > 180) return { minLat, maxLat, minLng: -180, maxLng: 180 };
  return { minLat, maxLat, minLng: lng - dLng, maxLng: lng + dLng };
}
