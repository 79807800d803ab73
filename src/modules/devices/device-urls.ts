import type { DeviceRow } from './devices.repository.js';

/** How a token appears in the URLs of a listed device: the secret itself is shown only once. */
export const TOKEN_PLACEHOLDER = '{token}';

/**
 * GPSLogger replaces each `%NAME` placeholder of its custom URL before sending (its
 * CustomUrlManager.getFormattedTextblock); these are the ones Muster reads.
 */
const GPSLOGGER_QUERY = 'lat=%LAT&lon=%LON&time=%TIME&acc=%ACC&alt=%ALT&spd=%SPD&dir=%DIR&batt=%BATT&aid=%AID&hdop=%HDOP&ischarging=%ISCHARGING';

/** The address each app is given. The token is URL-safe base64, so it needs no escaping. */
export function deviceUrls(baseUrl: string, token: string) {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    osmand_url: `${base}/v1/trackers/osmand?id=${token}`,
    owntracks_url: `${base}/v1/trackers/owntracks?token=${token}`,
    gpslogger_url: `${base}/v1/trackers/gpslogger?token=${token}&${GPSLOGGER_QUERY}`,
    traccar_json_url: `${base}/v1/trackers/traccar`,
  };
}

/** Two letters for OwnTracks' map marker (its `tid`): the initials of the device's name. */
export function trackerId(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? `${words[0]![0]}${words[1]![0]}` : (words[0] ?? 'MU').slice(0, 2);
  return letters.toUpperCase().padEnd(2, 'X');
}

/**
 * OwnTracks' configuration (an .otrc file; its `owntracks:///config?inline=` link is the QR
 * code): HTTP mode (`mode` 3) against the device's URL, the token as the basic-auth password.
 */
export function owntracksConfig(baseUrl: string, device: Pick<DeviceRow, 'name' | 'device_id'>, token: string) {
  return {
    _type: 'configuration',
    mode: 3,
    url: `${baseUrl.replace(/\/+$/, '')}/v1/trackers/owntracks`,
    auth: true,
    username: device.device_id,
    password: token,
    deviceId: device.device_id,
    tid: trackerId(device.name),
  };
}
