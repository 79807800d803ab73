import assert from 'node:assert/strict';
import type { TestApp, Headers } from './helpers.js';

// Shared by the tracker protocol tests (src/modules/trackers): devices, beacons, shared orgs.

export interface CreatedDevice {
  id: number;
  name: string;
  org_id: number;
  user_id: number;
  device_id: string;
  livemode: boolean;
  token: string;
  osmand_url: string;
  owntracks_url: string;
  gpslogger_url: string;
  traccar_json_url: string;
  owntracks_config: Record<string, unknown>;
}

export interface BeaconView {
  device_id: string | null;
  user_id: number;
  user_name: string;
  org_id: number;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: Record<string, unknown>;
  created_at: string;
  last_seen_at: string;
}

export async function createDevice(t: TestApp, headers: Headers, payload: Record<string, unknown> = {}): Promise<CreatedDevice> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: 'Van 12', ...payload } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<CreatedDevice>();
}

export async function beacons(t: TestApp, headers: Headers): Promise<BeaconView[]> {
  const res = await t.app.inject({ url: '/v1/signals/beacons', headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ beacons: BeaconView[] }>().beacons;
}

export async function beaconOf(t: TestApp, headers: Headers, deviceId: string): Promise<BeaconView | undefined> {
  return (await beacons(t, headers)).find((b) => b.device_id === deviceId);
}

/** A path relative to the app: the device URLs carry PUBLIC_URL (http://muster.test) in front. */
export const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
