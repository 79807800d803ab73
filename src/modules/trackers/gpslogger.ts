import { coordinate, compact, num, text, timestamp, type Fix, type Params } from './fix.js';

/**
 * GPSLogger's custom URL (its CustomUrlManager fills `%LAT`, `%LON`, `%TIME` (ISO 8601),
 * `%TIMESTAMP` (epoch s), `%ACC`, `%ALT`, `%SPD` (m/s), `%DIR`, `%BATT`, `%AID`, `%HDOP`,
 * `%ISCHARGING`...): any of them may be empty, which reads as absent. The names are the ones of
 * Muster's gpslogger_url and of its `%ALL` body (`hdop`, `ischarging` as `true`/`false`, kept as
 * the meta's `hdop` and `charging`), plus the long forms people type (latitude, longitude, ...).
 */
export function gpsloggerFix(params: Params): Fix {
  return {
    lat: coordinate(num(params, 'lat', 'latitude') ?? text(params, 'lat', 'latitude'), 'lat'),
    lng: coordinate(num(params, 'lon', 'lng', 'longitude') ?? text(params, 'lon', 'lng', 'longitude'), 'lon'),
    at: timestamp(text(params, 'time', 'timestamp'), 'time'),
    accuracy: num(params, 'acc', 'accuracy') ?? null,
    alarm: null,
    meta: compact({
      speed: num(params, 'spd', 'speed'),
      heading: num(params, 'dir', 'bearing'),
      altitude: num(params, 'alt', 'altitude'),
      battery: num(params, 'batt', 'battery'),
      charging: flagOf(text(params, 'ischarging')),
      hdop: num(params, 'hdop'),
      android_id: text(params, 'aid'),
      provider: text(params, 'prov'),
    }),
  };
}

/** GPSLogger's `%ISCHARGING`: `true` or `false` (anything else, or empty, is absent). */
function flagOf(t: string | undefined): boolean | undefined {
  const v = t?.toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : undefined;
}
