import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { createDevice, type CreatedDevice } from '../../../test/trackers-kit.js';
import type { ObservedFix } from './positions.js';

describe('position observers: every accepted fix with a position, from the field path and the tracker protocols alike', () => {
  let t: TestApp;
  let u: TestUser;
  let d: CreatedDevice;
  const seen: ObservedFix[] = [];

  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Pia Field' });
    d = await createDevice(t, { cookie: u.cookie }, { name: 'Pia van' });
    t.ctx.positions.add((_ctx, fix) => seen.push(fix));
    t.ctx.positions.add(() => {
      throw new Error('a broken observer never fails the beacon path');
    });
  });
  after(() => t.close());

  const signal = (body: object) => t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: u.cookie }, payload: body });

  test('a field terminal beacon turning on, then moving: each fix once, with its device and accuracy', async () => {
    seen.length = 0;
    assert.equal((await signal({ type: 'beacon', lat: 51.5, lng: -0.12, accuracy: 8, meta: { device_id: 'phone-1' } })).statusCode, 201);
    assert.equal((await signal({ type: 'beacon', lat: 51.501, lng: -0.121, meta: { device_id: 'phone-1' } })).statusCode, 201);
    assert.deepEqual(
      seen.map((f) => [f.userId, f.deviceId, f.lat, f.lng, f.accuracy, f.mode]),
      [
        [u.id, 'phone-1', 51.5, -0.12, 8, 'live'],
        [u.id, 'phone-1', 51.501, -0.121, null, 'live'],
      ],
    );
    assert.ok(seen.every((f) => typeof f.orgId === 'number' && !Number.isNaN(Date.parse(f.at))));
  });

  test('a beacon without a position, or a note, is not a fix', async () => {
    seen.length = 0;
    assert.equal((await signal({ type: 'beacon', meta: { device_id: 'phone-2' } })).statusCode, 201);
    assert.equal((await signal({ type: 'note', note: 'at the gate', lat: 51.5, lng: -0.12 })).statusCode, 201);
    assert.deepEqual(seen, []);
  });

  test("an OsmAnd tracker's fix, as the tracker's device", async () => {
    seen.length = 0;
    const ts = Math.floor(t.clock.now().getTime() / 1000) - 1;
    const res = await t.app.inject({ method: 'GET', url: `/v1/trackers/osmand?id=${d.token}&timestamp=${ts}&lat=48.8566&lon=2.3522&accuracy=12` });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      seen.map((f) => [f.userId, f.deviceId, f.lat, f.lng, f.accuracy, f.at]),
      [[u.id, d.device_id, 48.8566, 2.3522, 12, new Date(ts * 1000).toISOString()]],
    );
  });
});
