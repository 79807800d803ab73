import { badRequest, coordinate, compact, timestamp, type Fix } from './fix.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const n = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** Whether a JSON body is the Transistorsoft schema newer Traccar Client versions send. */
export function isTraccarJson(body: unknown): boolean {
  const first: unknown = Array.isArray(body) ? (body as unknown[])[0] : body;
  return obj(first)?.location !== undefined;
}

/**
 * The Transistorsoft location (Traccar Client's locationTemplate): `{timestamp, coords: {latitude,
 * longitude, accuracy, speed (m/s), heading, altitude}, battery: {level (0..1), is_charging},
 * is_moving, event, extras}`. Negative speed or heading means unknown there, so they are dropped.
 */
function locationFix(loc: Json, i: number): Fix {
  const coords = obj(loc.coords) ?? {};
  const battery = obj(loc.battery);
  const extras = obj(loc.extras);
  const level = typeof battery?.level === 'number' && battery.level >= 0 ? Math.round(battery.level * 100) : undefined;
  return {
    lat: coordinate(coords.latitude as number | undefined, `location[${i}].coords.latitude`),
    lng: coordinate(coords.longitude as number | undefined, `location[${i}].coords.longitude`),
    at: timestamp(typeof loc.timestamp === 'string' || typeof loc.timestamp === 'number' ? loc.timestamp : undefined, `location[${i}].timestamp`),
    accuracy: n(coords.accuracy) ?? null,
    alarm: typeof extras?.alarm === 'string' ? extras.alarm : null,
    meta: compact({
      speed: n(coords.speed),
      heading: n(coords.heading),
      altitude: typeof coords.altitude === 'number' ? coords.altitude : undefined,
      battery: level,
      charging: typeof battery?.is_charging === 'boolean' ? battery.is_charging : undefined,
      moving: typeof loc.is_moving === 'boolean' ? loc.is_moving : undefined,
      event: typeof loc.event === 'string' && loc.event !== '' ? loc.event : undefined,
    }),
  };
}

/**
 * `{device_id, location}`, where location is one object or (batch sync) an array, or an array
 * of such bodies (a buffered upload). Every body must name the same device.
 */
export function traccarJson(body: unknown): { token: string | undefined; fixes: () => Fix[] } {
  const bodies = Array.isArray(body) ? body : [body];
  if (bodies.length === 0) throw badRequest('location', 'is required');
  const tokens = new Set<unknown>();
  const locations: Json[] = [];
  for (const b of bodies) {
    const o = obj(b);
    if (!o) throw badRequest('location', 'must be an object');
    tokens.add(o.device_id);
    for (const l of Array.isArray(o.location) ? o.location : [o.location]) {
      const loc = obj(l);
      if (!loc) throw badRequest('location', 'must be an object');
      locations.push(loc);
    }
  }
  const [token] = [...tokens];
  // Read after the token is checked: a wrong token is 401 whatever the body holds.
  return { token: tokens.size === 1 && typeof token === 'string' ? token : undefined, fixes: () => locations.map(locationFix) };
}
