import { KNOT, coordinate, numOf, text1, timestamp, type Fix, type Params } from './fix.js';

/** A request carries an OsmAnd fix when it names a device and a position (the root route's test). */
export function isOsmAndRequest(params: Params): boolean {
  return (text1(params, 'id') ?? text1(params, 'deviceid')) !== undefined && (text1(params, 'lat') ?? text1(params, 'location')) !== undefined;
}

/**
 * The OsmAnd protocol's parameters (Traccar's OsmAndProtocolDecoder): `id`/`deviceid`, `lat` and
 * `lon` or `location=lat,lon`, `timestamp`, `speed` in knots, `bearing`/`heading`, `altitude`,
 * `accuracy`, `hdop`, `batt`, `charge`, `alarm`. The id is the device's token here.
 * Each parameter is read once, and the meta holds only the values given (as compact() would keep).
 */
export function osmandFix(params: Params): Fix {
  const latText = text1(params, 'lat');
  const lonText = text1(params, 'lon');
  let lat: number | string | undefined = numOf(latText);
  let lon: number | string | undefined = numOf(lonText);
  if (lat === undefined || lon === undefined) {
    const location = text1(params, 'location');
    if (location !== undefined) [lat, lon] = location.split(',');
  }
  const meta: Fix['meta'] = {};
  const speed = numOf(text1(params, 'speed'));
  if (speed !== undefined) meta.speed = speed * KNOT;
  // `bearing` wins when it has a value, even one that is not a number (then no heading).
  const heading = numOf(text1(params, 'bearing') ?? text1(params, 'heading'));
  if (heading !== undefined) meta.heading = heading;
  const altitude = numOf(text1(params, 'altitude'));
  if (altitude !== undefined) meta.altitude = altitude;
  const hdop = numOf(text1(params, 'hdop'));
  if (hdop !== undefined) meta.hdop = hdop;
  const battery = numOf(text1(params, 'batt'));
  if (battery !== undefined) meta.battery = battery;
  const charge = text1(params, 'charge');
  if (charge !== undefined) meta.charging = charge === 'true' || charge === '1';
  return {
    lat: coordinate(lat ?? latText, 'lat'),
    lng: coordinate(lon ?? lonText, 'lon'),
    at: timestamp(text1(params, 'timestamp')),
    accuracy: numOf(text1(params, 'accuracy')) ?? null,
    alarm: text1(params, 'alarm') ?? null,
    meta,
  };
}

/** The device token of an OsmAnd request: `id` or `deviceid` (the first that looks like a token when repeated). */
export function osmandToken(params: Params, pattern: RegExp): string | undefined {
  let first: string | undefined;
  for (const name of TOKEN_PARAMS) {
    const v = params[name];
    if (typeof v === 'string') {
      if (pattern.test(v)) return v;
      first ??= v;
    } else if (Array.isArray(v)) {
      for (const x of v as unknown[]) {
        if (typeof x !== 'string') continue;
        if (pattern.test(x)) return x;
        first ??= x;
      }
    }
  }
  return first;
}

const TOKEN_PARAMS = ['id', 'deviceid'];
