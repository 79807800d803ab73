import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { beaconOf, createDevice, pathOf, type CreatedDevice } from '../../../test/trackers-kit.js';

// Newer Traccar Client (traccar/traccar-client, lib/preferences.dart) posts through the
// Transistorsoft background geolocation plugin: `params: {device_id}` beside its
// locationTemplate, under the root property `location` (an array when batch-syncing), to the
// server URL with a trailing slash. Speed is m/s, battery.level 0..1; the SOS shortcut
// (lib/quick_actions.dart) records a location with `extras: {alarm: 'sos'}`.
function location(at: Date, lat: number, lon: number, extras: Record<string, unknown> = {}) {
  return {
    timestamp: at.toISOString(),
    coords: { latitude: lat, longitude: lon, accuracy: 9.5, speed: 4.2, heading: 180.5, altitude: 12.3 },
    is_moving: true,
    odometer: 1234.5,
    event: '',
    battery: { level: 0.76, is_charging: false },
    activity: { type: 'in_vehicle' },
    extras,
    _: `&id=x&lat=${lat}&lon=${lon}&timestamp=${at.toISOString()}&`,
  };
}

describe('Traccar Client JSON (Transistorsoft schema)', () => {
  let t: TestApp;
  let u: TestUser;
  let d: CreatedDevice;
  let stream: SseClient;

  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Jay Courier' });
    d = await createDevice(t, { cookie: u.cookie }, { name: 'Jay phone' });
    stream = await connectSse(await listen(t), '/v1/signals/stream', { cookie: u.cookie });
    await stream.waitFor((f) => f.data !== undefined);
  });
  after(async () => {
    await stream.close();
    await t.close();
  });

  const post = (payload: unknown, url = '/') => t.app.inject({ method: 'POST', url, payload: payload as object });
  const ago = (s: number) => new Date(t.clock.now().getTime() - s * 1000);
  const beacon = () => beaconOf(t, { cookie: u.cookie }, d.device_id);
  const mine = (p: Record<string, unknown>) => (p.meta as { device_id?: string }).device_id === d.device_id;

  test('one location posted to / becomes a beacon with speed, heading, battery %', async () => {
    t.clock.advance(60_000);
    const at = ago(3);
    const res = await post({ location: location(at, 52.52, 13.405), device_id: d.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.lng, b?.accuracy, b?.created_at], [52.52, 13.405, 9.5, at.toISOString()]);
    assert.deepEqual(b?.meta, { device_id: d.device_id, protocol: 'traccar', speed: 4.2, heading: 180.5, altitude: 12.3, battery: 76, charging: false, moving: true });
    await stream.waitForEvent('signal.beacon', (p) => mine(p) && p.lat === 52.52);
    assert.equal((await post({ location: location(ago(1), 52.6, 13.5), device_id: d.token }, pathOf(d.traccar_json_url))).statusCode, 200);
    assert.equal((await beacon())?.lat, 52.6, 'traccar_json_url takes the same body');
    await stream.waitForEvent('signal.beacon', (p) => mine(p) && p.lat === 52.6);
  });

  test('an hour of buffered fixes sent at once, out of order: the marker ends on the newest, broadcast once', async () => {
    t.clock.advance(60_000);
    // One fix every 30 s for an hour (Traccar Client's fastest interval), shuffled.
    const fixes = Array.from({ length: 120 }, (_, i) => location(ago(3600 - i * 30), 50 + i / 1000, 8));
    const shuffled = [...fixes.slice(60), ...fixes.slice(0, 60).reverse()];
    const newest = fixes[119]!;
    const before = stream.events.filter((e) => e.type === 'signal.beacon').length;
    const res = await post({ location: shuffled, device_id: d.token });
    assert.equal(res.statusCode, 200, res.body);
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.created_at], [newest.coords.latitude, newest.timestamp]);
    await stream.waitForEvent('signal.beacon', (p) => mine(p) && p.lat === newest.coords.latitude);
    // Another device's beacon after it marks the end of what this upload published.
    const marker = await createDevice(t, { cookie: u.cookie }, { name: 'marker' });
    await t.app.inject({ url: `/v1/trackers/osmand?id=${marker.token}&lat=1&lon=1` });
    await stream.waitForEvent('signal.beacon', (p) => (p.meta as { device_id?: string }).device_id === marker.device_id);
    const published = stream.events.filter((e) => e.type === 'signal.beacon').length - before;
    assert.equal(published, 2, 'one beacon for the whole hour, one for the marker device');
  });

  test('an array of bodies is a buffered upload too; older than the marker moves nothing', async () => {
    t.clock.advance(60_000);
    const res = await post([{ location: location(ago(20), 1, 1), device_id: d.token }, { location: location(ago(10), 2, 2), device_id: d.token }]);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await beacon())?.lat, 2);
    assert.equal((await post({ location: location(ago(3000), 3, 3), device_id: d.token })).statusCode, 200);
    assert.equal((await beacon())?.lat, 2, 'a late fix is dropped');
  });

  test('extras.alarm = sos from the SOS shortcut makes an alert signal of the device’s org', async () => {
    t.clock.advance(60_000);
    const res = await post({ location: location(ago(1), 47.37, 8.54, { alarm: 'sos' }), device_id: d.token });
    assert.equal(res.statusCode, 200, res.body);
    const alerts = await t.app.inject({ url: '/v1/signals?type=alert', headers: { cookie: u.cookie } });
    const a = alerts.json<{ signals: { org_id: number; note: string; meta: Record<string, unknown> }[] }>().signals[0];
    assert.deepEqual([a?.org_id, a?.note, a?.meta.protocol], [d.org_id, 'SOS from Jay phone', 'traccar']);
  });

  test('refusals: 401 wrong or missing device_id, 400 a location without coordinates or from the future', async () => {
    t.clock.advance(60_000);
    assert.equal((await post({ location: location(ago(1), 1, 1), device_id: 'nope' })).statusCode, 401);
    assert.equal((await post({ location: location(ago(1), 1, 1) })).statusCode, 401);
    const other = await createDevice(t, { cookie: u.cookie }, { name: 'other' });
    assert.equal((await post([{ location: location(ago(1), 1, 1), device_id: d.token }, { location: location(ago(1), 1, 1), device_id: other.token }])).statusCode, 401, 'one body, one device');
    assert.equal((await post({ location: { timestamp: ago(1).toISOString(), coords: {} }, device_id: d.token })).statusCode, 400);
    assert.equal((await post({ location: location(new Date(t.clock.now().getTime() + 3_600_000), 1, 1), device_id: d.token })).statusCode, 400);
    assert.equal((await post({ location: [], device_id: d.token })).statusCode, 400);
    const malformed = await t.app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: '{"location":' });
    assert.equal(malformed.statusCode, 400);
  });
});
