// Issue #31, F5: times JavaScript cannot hold (a timestamp beyond its date range, a leap second)
// answer a clear 400 or 422 on every door, never a 500, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createKey, signUp, type TestUser } from './factories.js';
import { body, buildTestApp, type TestApp } from './helpers.js';
import { basic, createDevice, pathOf, type CreatedDevice } from './trackers-kit.js';

const HUGE = '99999999999999999999';
const LEAP = '2026-12-31T23:59:60Z';

describe('out-of-range times are refused, never a 500 (issue #31, F5)', () => {
  let t: TestApp;
  let user: TestUser;
  let key: Record<string, string>;
  let device: CreatedDevice;

  before(async () => {
    t = await buildTestApp();
    t.clock.set('2026-06-01T12:00:00.000Z');
    user = await signUp(t.app, { name: 'Tim Range' });
    key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    device = await createDevice(t, key);
  });
  after(() => t.close());

  const refused = (res: LightMyRequestResponse, status: number, field: string) => {
    assert.equal(res.statusCode, status, res.body);
    const b = body<{ code: string; details: { field: string }[] }>(res);
    assert.equal(b.code, status === 400 ? 'bad_request' : 'validation_failed');
    assert.deepEqual(b.details.map((d) => d.field), [field]);
  };

  test('tracker timestamps beyond the date range, on all four protocols (OsmAnd with and without alarm=sos)', async () => {
    const osmand = pathOf(device.osmand_url);
    for (const extra of ['', '&alarm=sos']) {
      for (const method of ['GET', 'POST'] as const) refused(await t.app.inject({ method, url: `${osmand}&lat=52.5&lon=13.4&timestamp=${HUGE}${extra}` }), 400, 'timestamp');
    }
    refused(await t.app.inject({ url: `/v1/trackers/gpslogger?token=${device.token}&lat=52.5&lon=13.4&time=${HUGE}` }), 400, 'time');
    refused(await t.app.inject({ method: 'POST', url: '/v1/trackers/traccar', payload: { device_id: device.token, location: { timestamp: Number(HUGE), coords: { latitude: 52.5, longitude: 13.4 } } } }), 400, 'location[0].timestamp');
    refused(await t.app.inject({ method: 'POST', url: '/v1/trackers/traccar', payload: { device_id: device.token, location: { timestamp: '+275760-09-13T00:00:00.001Z', coords: { latitude: 52.5, longitude: 13.4 } } } }), 400, 'location[0].timestamp');
    const owntracks = { method: 'POST' as const, url: '/v1/trackers/owntracks', headers: { authorization: basic('tim', device.token) } };
    refused(await t.app.inject({ ...owntracks, payload: { _type: 'location', lat: 52.5, lon: 13.4, tst: Number(HUGE) } }), 400, 'tst');
    // Year 10000 (as milliseconds): a real JavaScript date, but not one the stored time text can hold in order.
    refused(await t.app.inject({ ...owntracks, payload: { _type: 'location', lat: 52.5, lon: 13.4, tst: 253402300800000 } }), 400, 'tst');
    // Nothing was recorded.
    const signals = body<{ signals: unknown[] }>(await t.app.inject({ url: '/v1/signals', headers: key }));
    assert.deepEqual(signals.signals, []);
  });

  test('a leap second in POST /v1/signals and in GET /v1/bookings?from= is a 422', async () => {
    refused(await t.app.inject({ method: 'POST', url: '/v1/signals', headers: key, payload: { type: 'note', note: 'late', recorded_at: LEAP } }), 422, 'recorded_at');
    refused(await t.app.inject({ url: `/v1/bookings?from=${encodeURIComponent(LEAP)}`, headers: key }), 422, 'from');
    refused(await t.app.inject({ url: `/v1/bookings?to=${encodeURIComponent(LEAP)}`, headers: key }), 422, 'to');
    // A real second just before is fine.
    assert.equal((await t.app.inject({ url: `/v1/bookings?from=${encodeURIComponent('2026-12-31T23:59:59Z')}`, headers: key })).statusCode, 200);
  });

  test('the ordinary forms still work: epoch seconds, milliseconds and ISO time', async () => {
    const osmand = pathOf(device.osmand_url);
    for (const ts of ['1780315200', '1780315200000', '2026-06-01T12:00:00Z']) {
      const res = await t.app.inject({ url: `${osmand}&lat=52.5&lon=13.4&timestamp=${encodeURIComponent(ts)}` });
      assert.equal(res.statusCode, 200, `${ts}: ${res.body}`);
    }
  });
});
