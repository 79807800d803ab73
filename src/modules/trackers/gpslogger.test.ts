import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { beaconOf, createDevice, pathOf, type CreatedDevice } from '../../../test/trackers-kit.js';

// GPSLogger for Android fills its custom URL's placeholders before each request
// (mendhak/gpslogger, CustomUrlManager.getFormattedTextblock): %LAT, %LON, %TIME (ISO 8601, UTC),
// %TIMESTAMP (epoch s), %ACC, %ALT, %SPD (m/s), %DIR, %BATT, %AID (the Android id), %HDOP (may
// be empty), %ISCHARGING (true/false)... `fill` does the same to the URL Muster hands out.
function fill(template: string, v: Record<string, string>): string {
  return template.replace(/%([A-Z]+)/g, (_, name: string) => v[name] ?? '');
}

describe('GPSLogger custom URL', () => {
  let t: TestApp;
  let u: TestUser;
  let d: CreatedDevice;
  let stream: SseClient;

  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Gil Logger' });
    d = await createDevice(t, { cookie: u.cookie }, { name: 'Gil tablet' });
    stream = await connectSse(await listen(t), '/v1/signals/stream', { cookie: u.cookie });
    await stream.waitFor((f) => f.data !== undefined);
  });
  after(async () => {
    await stream.close();
    await t.close();
  });

  const beacon = () => beaconOf(t, { cookie: u.cookie }, d.device_id);

  test('the filled gpslogger_url, sent as GET, becomes a beacon on the list and the stream', async () => {
    t.clock.advance(60_000);
    const time = new Date(t.clock.now().getTime() - 2000).toISOString();
    const url = fill(pathOf(d.gpslogger_url), { LAT: '51.5074', LON: '-0.1278', TIME: time, ACC: '12.0', ALT: '45.0', SPD: '3.5', DIR: '120.0', BATT: '85.0', AID: 'a1b2c3d4e5f6a7b8', HDOP: '0.8', ISCHARGING: 'true' });
    const res = await t.app.inject({ url });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, '');
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.lng, b?.accuracy, b?.created_at], [51.5074, -0.1278, 12, time]);
    assert.deepEqual(b?.meta, { device_id: d.device_id, protocol: 'gpslogger', speed: 3.5, heading: 120, altitude: 45, battery: 85, charging: true, hdop: 0.8, android_id: 'a1b2c3d4e5f6a7b8' });
    await stream.waitForEvent('signal.beacon', (p) => (p.meta as { device_id?: string }).device_id === d.device_id && p.lat === 51.5074);
  });

  test('empty placeholders are tolerated (no accuracy, speed, time: now)', async () => {
    t.clock.advance(60_000);
    const res = await t.app.inject({ url: fill(pathOf(d.gpslogger_url), { LAT: '51.6', LON: '-0.2' }) });
    assert.equal(res.statusCode, 200, res.body);
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.accuracy, b?.created_at], [51.6, null, t.clock.now().toISOString()]);
    assert.deepEqual(b?.meta, { device_id: d.device_id, protocol: 'gpslogger' });
  });

  test('POST with %ALL as a form body (token in the URL)', async () => {
    t.clock.advance(60_000);
    const ts = Math.floor(t.clock.now().getTime() / 1000) - 1;
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/trackers/gpslogger?token=${d.token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `lat=41.74108695983887&lon=-91.84490871429443&sat=0&desc=&alt=1387.0&acc=6.0&dir=170.8125&prov=gps&spd_kph=0.0&spd=0.0&timestamp=${ts}&batt=77.0&ischarging=false&hdop=1.4&vdop=1.9&pdop=2.3`,
    });
    assert.equal(res.statusCode, 200, res.body);
    const b = await beacon();
    assert.deepEqual([b?.lat, b?.lng, b?.created_at, b?.meta.provider], [41.74108695983887, -91.84490871429443, new Date(ts * 1000).toISOString(), 'gps']);
    assert.deepEqual([b?.meta.hdop, b?.meta.charging], [1.4, false], 'hdop and ischarging are kept, as docs/trackers.md says');
  });

  test('refusals: 401 wrong token, 400 empty position, out of range', async () => {
    const bad = fill(pathOf(d.gpslogger_url), { LAT: '1', LON: '2' }).replace(d.token, `mdt_${'B'.repeat(43)}`);
    assert.equal((await t.app.inject({ url: bad })).statusCode, 401);
    assert.equal((await t.app.inject({ url: fill(pathOf(d.gpslogger_url), {}) })).statusCode, 400);
    assert.equal((await t.app.inject({ url: fill(pathOf(d.gpslogger_url), { LAT: '1', LON: '200' }) })).statusCode, 400);
  });
});
