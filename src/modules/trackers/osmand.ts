import { KNOT, coordinate, compact, num, text, timestamp, type Fix, type Params } from './fix.js';

/** A request carries an OsmAnd fix when it names a device and a position (the root route's test). */
export function isOsmAndRequest(params: Params): boolean {
  return text(params, 'id', 'deviceid') !== undefined && (text(params, 'lat') !== undefined || text(params, 'location') !== undefined);
}

/**
 * The OsmAnd protocol's parameters (Traccar's OsmAndProtocolDecoder): `id`/`deviceid`, `lat` and
 * `lon` or `location=lat,lon`, `timestamp`, `speed` in knots, `bearing`/`heading`, `altitude`,
 * `accuracy`, `hdop`, `batt`, `charge`, `alarm`. The id is the device's token here.
 */
export function osmandFix(params: Params): Fix {
  let lat: number | string | undefined = num(params, 'lat');
  let lon: number | string | undefined = num(params, 'lon');
  const location = text(params, 'location');
  if ((lat === undefined || lon === undefined) && location !== undefined) [lat, lon] = location.split(',');
  const speed = num(params, 'speed');
  const charge = text(params, 'charge');
  return {
    lat: coordinate(lat ?? text(params, 'lat'), 'lat'),
    lng: coordinate(lon ?? text(params, 'lon'), 'lon'),
    at: timestamp(text(params, 'timestamp')),
    accuracy: num(params, 'accuracy') ?? null,
    alarm: text(params, 'alarm') ?? null,
    meta: compact({
      speed: speed === undefined ? undefined : speed * KNOT,
      heading: num(params, 'bearing', 'heading'),
      altitude: num(params, 'altitude'),
      hdop: num(params, 'hdop'),
      battery: num(params, 'batt'),
      charging: charge === undefined ? undefined : charge === 'true' || charge === '1',
    }),
  };
}

/** The device token of an OsmAnd request: `id` or `deviceid` (the first that looks like a token when repeated). */
export function osmandToken(params: Params, pattern: RegExp): string | undefined {
  const all = ['id', 'deviceid'].flatMap((k) => {
    const v = params[k];
    return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
  });
  return all.find((x) => pattern.test(x)) ?? all[0];
}
