import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { beaconOf, createDevice, type CreatedDevice } from '../../../test/trackers-kit.js';
import { TOKEN_PATTERN } from '../devices/devices.service.js';
import { KNOT } from './fix.js';
import { isOsmAndRequest, osmandFix, osmandToken } from './osmand.js';

// Requests as the apps send them. Traccar Client for Android (traccar-client-android,
// ProtocolFormatter.kt) appends id, timestamp (epoch s), lat, lon, speed (knots), bearing,
// altitude, accuracy, batt and, from its SOS shortcut, alarm=sos to the server URL, and POSTs
// with no body (RequestManager.kt); its default server URL has no path, so the request goes to
// `/`. Traccar's OsmAndProtocolDecoder reads the same names from the query, or from a form body
// when the query is empty, plus location=lat,lon, deviceid, heading, hdop, charge.
describe('OsmAnd protocol (Traccar Client, OsmAnd)', () => {
  let t: TestApp;
  let u: TestUser;
  let d: CreatedDevice;
  let stream: SseClient;
  /** Epoch seconds of the test clock (the session cookie lives on it, so it is never set to the wall clock). */
  const now = () => Math.floor(t.clock.now().getTime() / 1000);

  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Olga Driver' });
    d = await createDevice(t, { cookie: u.cookie }, { name: 'Olga van' });
    const port = await listen(t);
    stream = await connectSse(port, '/v1/signals/stream', { cookie: u.cookie });
    await stream.waitFor((f) => f.data !== undefined);
  });
  after(async () => {
    await stream.close();
    await t.close();
  });

  const osmand = (query: string, method: 'GET' | 'POST' = 'GET', url = '/v1/trackers/osmand') => t.app.inject({ method, url: `${url}?${query}` });
  const beacon = () => beaconOf(t, { cookie: u.cookie }, d.device_id);

  test("Traccar Client (Android)'s POST to the server root becomes a beacon on the list and the stream, empty 200", async () => {
    t.clock.advance(60_000);
    const ts = now() - 5;
    const query = `id=${d.token}&timestamp=${ts}&lat=48.8566&lon=2.3522&speed=10.0&bearing=90.0&altitude=35.0&accuracy=12.0&batt=87.0`;
    const res = await osmand(query, 'POST', '/');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
    const b = await beacon();
    assert.ok(b, 'on /v1/signals/beacons');
    assert.deepEqual([b.lat, b.lng, b.accuracy, b.user_id, b.org_id], [48.8566, 2.3522, 12, u.id, d.org_id]);
    assert.equal(b.created_at, new Date(ts * 1000).toISOString());
    assert.deepEqual(b.meta, { device_id: d.device_id, protocol: 'osmand', speed: 10 * 0.514444, heading: 90, altitude: 35, battery: 87 });
    const frame = await stream.waitForEvent('signal.beacon', (p) => (p.meta as { device_id?: string }).device_id === d.device_id);
    assert.equal((frame.data as { payload: { lat: number } }).payload.lat, 48.8566);
  });

  test('GET on the protocol URL, location=lat,lon, ISO and millisecond timestamps, deviceid', async () => {
    t.clock.advance(60_000);
    const iso = new Date(t.clock.now().getTime() - 1000).toISOString();
    assert.equal((await osmand(`deviceid=${d.token}&location=40.4168,-3.7038&timestamp=${iso}&hdop=0.9&charge=true`)).statusCode, 200);
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.lng, b?.created_at], [40.4168, -3.7038, iso]);
    assert.equal(b?.meta.charging, true);
    assert.equal(b?.meta.hdop, 0.9);
    const ms = t.clock.now().getTime();
    assert.equal((await osmand(`id=${d.token}&lat=41&lon=-3&timestamp=${ms}`)).statusCode, 200);
    assert.equal((await beacon())?.created_at, new Date(ms).toISOString());
  });

  test('a form body (application/x-www-form-urlencoded) is read when the query is empty', async () => {
    t.clock.advance(60_000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/trackers/osmand',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `id=${d.token}&lat=59.3293&lon=18.0686&timestamp=${now()}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await beacon())?.lat, 59.3293);
  });

  test('a form body with location=lat,lon (the OsmAnd protocol’s own field) is a fix, not Traccar Client’s JSON object', async () => {
    for (const url of ['/v1/trackers/osmand', '/']) {
      t.clock.advance(60_000);
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
        payload: `id=${d.token}&location=60.1699,24.9384&timestamp=${now()}&hdop=1.2`,
      });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      const b = await beacon();
      assert.deepEqual([b?.lat, b?.lng, b?.meta.hdop, b?.meta.protocol], [60.1699, 24.9384, 1.2, 'osmand'], url);
    }
    // The same field in a JSON body is Traccar Client's `location`, which must be an object there.
    const json = await t.app.inject({ method: 'POST', url: '/v1/trackers/osmand', payload: { device_id: d.token, location: '60.1,24.9' } });
    assert.equal(json.statusCode, 400, json.body);
  });

  test('an older fix arriving late never moves the marker back', async () => {
    t.clock.advance(60_000);
    assert.equal((await osmand(`id=${d.token}&lat=10&lon=10&timestamp=${now()}`)).statusCode, 200);
    assert.equal((await osmand(`id=${d.token}&lat=11&lon=11&timestamp=${now() - 600}`)).statusCode, 200, 'accepted');
    assert.equal((await beacon())?.lat, 10);
  });

  test('alarm=sos makes an alert signal in the device’s org, and the fix still moves the marker', async () => {
    t.clock.advance(60_000);
    const res = await osmand(`id=${d.token}&timestamp=${now()}&lat=45.1&lon=7.6&alarm=sos`, 'POST', '/');
    assert.equal(res.statusCode, 200, res.body);
    const list = await t.app.inject({ url: '/v1/signals?type=alert', headers: { cookie: u.cookie } });
    const alert = list.json<{ signals: { org_id: number; user_id: number; note: string; lat: number; meta: Record<string, unknown> }[] }>().signals[0];
    assert.ok(alert);
    assert.deepEqual([alert.org_id, alert.user_id, alert.note, alert.lat], [d.org_id, u.id, 'SOS from Olga van', 45.1]);
    assert.deepEqual(alert.meta, { device_id: d.device_id, protocol: 'osmand', alarm: 'sos' });
    await stream.waitForEvent('signal.alert', (p) => p.note === 'SOS from Olga van');
    assert.equal((await beacon())?.lat, 45.1);
  });

  test('a plain GET / is still the dashboard redirect; with id and a position it is a fix, never HTML', async () => {
    const plain = await t.app.inject({ url: '/' });
    assert.equal(plain.statusCode, 302);
    assert.equal(plain.headers.location, '/app/');
    t.clock.advance(60_000);
    const fix = await t.app.inject({ url: `/?id=${d.token}&lat=1.5&lon=2.5` });
    assert.equal(fix.statusCode, 200);
    assert.doesNotMatch(String(fix.headers['content-type'] ?? ''), /html/);
    assert.equal((await beacon())?.lat, 1.5);
    const wrong = await t.app.inject({ url: `/?id=12345678&lat=1.5&lon=2.5` });
    assert.equal(wrong.statusCode, 401, 'a Traccar-style numeric id is not a token');
  });

  test('refusals: 401 wrong token, 400 no position, out of range, future; nothing recorded', async () => {
    t.clock.advance(60_000);
    const before = await beacon();
    const cases: [string, number, string?][] = [
      [`id=mdt_${'A'.repeat(43)}&lat=1&lon=2`, 401],
      ['lat=1&lon=2', 401],
      [`id=${d.token}`, 400, 'lat'],
      [`id=${d.token}&lat=1`, 400, 'lon'],
      [`id=${d.token}&lat=abc&lon=2`, 400, 'lat'],
      [`id=${d.token}&lat=91&lon=2`, 400, 'lat'],
      [`id=${d.token}&lat=1&lon=-181`, 400, 'lon'],
      [`id=${d.token}&lat=1&lon=2&timestamp=${now() + 3600}`, 400, 'timestamp'],
      [`id=${d.token}&lat=1&lon=2&timestamp=yesterday`, 400, 'timestamp'],
    ];
    for (const [query, status, field] of cases) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await osmand(query, method);
        assert.equal(res.statusCode, status, `${method} ${query}: ${res.body}`);
        if (field) assert.equal(res.json<{ code: string; details: { field: string }[] }>().details[0]?.field, field, query);
      }
    }
    assert.deepEqual(await beacon(), before);
  });
});

// The parameter reading on its own (each parameter read once, the meta built as it goes): the same
// answers as the generic text/num/compact reading it replaced, edge cases included.
describe('OsmAnd parameters', () => {
  const token = `mdt_${'a'.repeat(43)}`;

  test('every parameter, with the meta in a fixed order and only the values given', () => {
    const fix = osmandFix({ id: token, lat: ' 52.5 ', lon: '13.4', timestamp: '1700000000', speed: '10', bearing: '90', altitude: '35', accuracy: '8', hdop: '0.9', batt: '87', charge: '1', alarm: 'general' });
    assert.deepEqual(fix, {
      lat: 52.5,
      lng: 13.4,
      at: new Date(1_700_000_000_000),
      accuracy: 8,
      alarm: 'general',
      meta: { speed: 10 * KNOT, heading: 90, altitude: 35, hdop: 0.9, battery: 87, charging: true },
    });
    assert.deepEqual(Object.keys(fix.meta), ['speed', 'heading', 'altitude', 'hdop', 'battery', 'charging']);
    assert.deepEqual(osmandFix({ lat: '1', lon: '2' }), { lat: 1, lng: 2, at: null, accuracy: null, alarm: null, meta: {} });
  });

  test('empty, blank and non-numeric values are left out; the first non-empty of a repeated key counts', () => {
    const fix = osmandFix({ lat: ['', '1.5'], lon: '2', speed: '', bearing: 'north', heading: '45', altitude: 'x', batt: '  ', charge: 'no', accuracy: ['', ' 4 '] });
    assert.deepEqual(fix.meta, { charging: false }, '`bearing` has a value, so `heading` is not read; the rest are not numbers');
    assert.deepEqual([fix.lat, fix.accuracy], [1.5, 4]);
    assert.deepEqual(osmandFix({ lat: '1', lon: '2', heading: '45' }).meta, { heading: 45 }, 'heading when there is no bearing');
  });

  test('location=lat,lon when lat or lon is missing or not a number; errors name the field', () => {
    assert.deepEqual([osmandFix({ location: '40.4,-3.7' }).lat, osmandFix({ location: '40.4,-3.7' }).lng], [40.4, -3.7]);
    assert.deepEqual([osmandFix({ lat: '1', location: '40.4,-3.7' }).lat, osmandFix({ lat: '1', location: '40.4,-3.7' }).lng], [40.4, -3.7]);
    const field = (params: Record<string, unknown>) => {
      try {
        osmandFix(params);
        return 'none';
      } catch (err) {
        return (err as { extra?: { details?: { field: string }[] } }).extra?.details?.[0]?.field;
      }
    };
    assert.equal(field({ location: '40.4' }), 'lon');
    assert.equal(field({ lat: 'abc', lon: '2' }), 'lat');
    assert.equal(field({ lat: '1' }), 'lon');
    assert.equal(field({ lat: '1', lon: '2', timestamp: 'yesterday' }), 'timestamp');
  });

  test('the token: id before deviceid, the first that looks like a token when repeated, else the first text', () => {
    const other = `mdt_${'b'.repeat(43)}`;
    assert.equal(osmandToken({ id: token, deviceid: other }, TOKEN_PATTERN), token);
    assert.equal(osmandToken({ id: 'phone-1', deviceid: other }, TOKEN_PATTERN), other);
    assert.equal(osmandToken({ id: ['phone-1', token] }, TOKEN_PATTERN), token);
    assert.equal(osmandToken({ id: ['phone-1', 'phone-2'], deviceid: 'phone-3' }, TOKEN_PATTERN), 'phone-1');
    assert.equal(osmandToken({ id: 7 }, TOKEN_PATTERN), undefined);
    assert.equal(osmandToken({}, TOKEN_PATTERN), undefined);
  });

  test('an OsmAnd request names a device and a position', () => {
    assert.equal(isOsmAndRequest({ id: token, lat: '1' }), true);
    assert.equal(isOsmAndRequest({ deviceid: 'x', location: '1,2' }), true);
    assert.equal(isOsmAndRequest({ id: ' ', lat: '1' }), false);
    assert.equal(isOsmAndRequest({ id: token }), false);
    assert.equal(isOsmAndRequest({ lat: '1', lon: '2' }), false);
  });
});
