import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { beaconOf, createDevice } from '../../../test/trackers-kit.js';
import { sweepSilentBeacons } from '../signals/beacons.service.js';

// Concurrent requests of one device, and a revoke racing them: run on both engines
// (`node scripts/test.mjs --pg` gives each transaction its own PostgreSQL connection).
describe('tracker writes under concurrency, rate limits, silence', () => {
  let t: TestApp;
  let u: TestUser;
  before(async () => {
    t = await buildTestApp({ RATE_LIMIT_DEVICE: '1000' });
    u = await signUp(t.app, { name: 'Racer' });
  });
  after(() => t.close());

  const secs = () => Math.floor(t.clock.now().getTime() / 1000);
  const fix = (token: string, lat: number, ts: number) => t.app.inject({ url: `/v1/trackers/osmand?id=${token}&lat=${lat}&lon=1&timestamp=${ts}` });
  const auditOf = async (orgId: number, deviceId: string) => {
    const res = await t.app.inject({ url: `/v1/audit?org_id=${orgId}&limit=200`, headers: { cookie: u.cookie } });
    return res.json<{ entries: { action: string; device_id: string }[] }>().entries.filter((e) => e.device_id === deviceId).map((e) => e.action);
  };

  test('30 concurrent fixes of one device: one beacon_on, the marker on the newest fix', async () => {
    const d = await createDevice(t, { cookie: u.cookie });
    const base = secs() - 100;
    const order = Array.from({ length: 30 }, (_, i) => (i * 7) % 30); // every index once, not in order
    const results = await Promise.all(order.map((i) => fix(d.token, 10 + i, base + i)));
    assert.deepEqual([...new Set(results.map((r) => r.statusCode))], [200]);
    assert.equal((await beaconOf(t, { cookie: u.cookie }, d.device_id))?.lat, 39);
    assert.deepEqual(await auditOf(d.org_id, d.device_id), ['beacon_on']);
  });

  test('a revoke racing fixes: every fix is 200 or 401, and the device ends switched off and revoked', async () => {
    for (let round = 0; round < 5; round++) {
      const d = await createDevice(t, { cookie: u.cookie });
      assert.equal((await fix(d.token, 5, secs())).statusCode, 200);
      const fixes = Array.from({ length: 12 }, (_, i) => fix(d.token, 6 + i, secs()));
      const revoke = t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie } });
      const [rev, ...done] = await Promise.all([revoke, ...fixes]);
      assert.equal(rev.statusCode, 200, rev.body);
      for (const r of done) assert.ok(r.statusCode === 200 || r.statusCode === 401, `${r.statusCode} ${r.body}`);
      assert.equal(await beaconOf(t, { cookie: u.cookie }, d.device_id), undefined, `round ${round}: still on`);
      assert.equal((await fix(d.token, 1, secs())).statusCode, 401);
      const actions = await auditOf(d.org_id, d.device_id);
      assert.equal(actions[0], 'beacon_off', `round ${round}: ${actions.join(',')}`);
    }
  });

  test('the silence sweeper switches a tracker off like any beacon', async () => {
    const d = await createDevice(t, { cookie: u.cookie });
    assert.equal((await fix(d.token, 3, secs())).statusCode, 200);
    t.clock.advance(t.ctx.config.beaconTimeoutMs + 1000);
    assert.ok((await sweepSilentBeacons(t.ctx)) >= 1);
    assert.equal(await beaconOf(t, { cookie: u.cookie }, d.device_id), undefined);
    assert.equal((await auditOf(d.org_id, d.device_id))[0], 'beacon_off');
  });
});

describe('per-device rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ RATE_LIMIT_DEVICE: '3', RATE_LIMIT_PUBLIC: '2' });
  });
  after(() => t.close());

  test('each device has its own budget; refused tokens count against the address', async () => {
    const u = await signUp(t.app);
    const a = await createDevice(t, { cookie: u.cookie }, { name: 'A' });
    const b = await createDevice(t, { cookie: u.cookie }, { name: 'B' });
    const fix = (token: string) => t.app.inject({ url: `/v1/trackers/osmand?id=${token}&lat=1&lon=1` });
    for (let i = 0; i < 3; i++) assert.equal((await fix(a.token)).statusCode, 200);
    const limited = await fix(a.token);
    assert.equal(limited.statusCode, 429);
    assert.deepEqual(limited.json(), { error: 'Too many requests', code: 'rate_limited' });
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.equal((await fix(b.token)).statusCode, 200, 'another device is not affected');
    const wrong = `mdt_${'C'.repeat(43)}`;
    assert.equal((await fix(wrong)).statusCode, 401);
    assert.equal((await fix(wrong)).statusCode, 401);
    assert.equal((await fix(wrong)).statusCode, 429, 'guessing tokens is throttled per address');
    assert.equal((await fix(b.token)).statusCode, 200, 'a good token still passes');
  });
});
