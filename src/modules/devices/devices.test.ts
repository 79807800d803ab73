import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../../lib/crypto.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { beaconOf, createDevice, pathOf } from '../../../test/trackers-kit.js';
import { sharedOrg } from '../../../test/world.js';

interface DeviceView {
  id: number;
  name: string;
  org_id: number;
  device_id: string;
  livemode: boolean;
  osmand_url: string;
  active: boolean;
  last_position: { lat: number; lng: number; recorded_at: string } | null;
  last_seen_at: string | null;
}

describe('/v1/devices', () => {
  let t: TestApp;
  let root: TestUser;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
  });
  after(() => t.close());

  const list = async (headers: Record<string, string>) => {
    const res = await t.app.inject({ url: '/v1/devices', headers });
    assert.equal(res.statusCode, 200, res.body);
    return body<{ devices: DeviceView[] }>(res).devices;
  };
  const fix = (token: string, lat = 52.37, lon = 4.89) => t.app.inject({ url: `/v1/trackers/osmand?id=${token}&lat=${lat}&lon=${lon}` });

  test('creates a device: token shown once and stored hashed, spec device id, URLs for every app', async () => {
    const u = await signUp(t.app, { name: 'Ada Field' });
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Ada phone' });
    assert.match(d.token, /^mdt_[A-Za-z0-9_-]{43}$/);
    assert.match(d.device_id, /^dev-[0-9a-f]{6}-[0-9a-f]{8}$/);
    assert.equal(d.livemode, true);
    assert.equal(d.user_id, u.id);
    assert.equal(d.osmand_url, `http://muster.test/v1/trackers/osmand?id=${d.token}`);
    assert.equal(d.owntracks_url, `http://muster.test/v1/trackers/owntracks?token=${d.token}`);
    assert.ok(d.gpslogger_url.startsWith(`http://muster.test/v1/trackers/gpslogger?token=${d.token}&lat=%LAT&lon=%LON`));
    assert.equal(d.traccar_json_url, 'http://muster.test/v1/trackers/traccar');
    assert.deepEqual(d.owntracks_config, {
      _type: 'configuration',
      mode: 3,
      url: 'http://muster.test/v1/trackers/owntracks',
      auth: true,
      username: d.device_id,
      password: d.token,
      deviceId: d.device_id,
      tid: 'AP',
    });
    const row = await t.ctx.db.selectFrom('devices').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
    assert.equal(row.token_hash, sha256(d.token));
    assert.equal(JSON.stringify(row).includes(d.token), false);
    const listed = await t.app.inject({ url: '/v1/devices', headers: { cookie: u.cookie } });
    assert.equal(listed.body.includes(d.token), false, 'the token is never listed');
    assert.equal(body<{ devices: DeviceView[] }>(listed).devices[0]!.osmand_url, 'http://muster.test/v1/trackers/osmand?id={token}');
  });

  test('the token is not an API credential: it reads nothing', async () => {
    const u = await signUp(t.app);
    const d = await createDevice(t, { cookie: u.cookie });
    for (const headers of [{ 'x-api-key': d.token }, { authorization: `Bearer ${d.token}` }]) {
      for (const url of ['/v1/auth/me', '/v1/signals/beacons', '/v1/devices', '/v1/signals']) {
        assert.equal((await t.app.inject({ url, headers })).statusCode, 401, url);
      }
    }
  });

  test('the list shows last position and last seen; an org admin sees every device of the org, a member only theirs', async () => {
    const crew = await signUp(t.app, { name: 'Crew' });
    const other = await signUp(t.app, { name: 'Other' });
    const boss = await signUp(t.app, { name: 'Devices Ops Boss' });
    const org = await sharedOrg(t.app, { by: boss, lift: root, name: 'Devices Ops', members: [{ user: crew, role: 'member' }, { user: other, role: 'member' }] });
    const d = await createDevice(t, { cookie: crew.cookie }, { org_id: org.id, device_id: 'crew-van' });
    assert.equal((await fix(d.token, 51.5, -0.12)).statusCode, 200);
    const mine = (await list({ cookie: crew.cookie })).find((x) => x.id === d.id)!;
    assert.equal(mine.active, true);
    assert.deepEqual({ lat: mine.last_position?.lat, lng: mine.last_position?.lng }, { lat: 51.5, lng: -0.12 });
    assert.equal(mine.last_seen_at, t.clock.now().toISOString());
    assert.ok((await list({ cookie: boss.cookie })).some((x) => x.id === d.id), 'the owner of the org sees it');
    assert.ok(!(await list({ cookie: other.cookie })).some((x) => x.id === d.id), 'another member does not');
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: other.cookie } })).statusCode, 404);
  });

  test('a test-mode credential makes a test device, which stays in test mode', async () => {
    const u = await signUp(t.app);
    const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
    const d = await createDevice(t, testKey);
    assert.equal(d.livemode, false);
    assert.equal((await fix(d.token)).statusCode, 200);
    assert.ok(await beaconOf(t, testKey, d.device_id), 'the test key sees its beacon');
    assert.equal(await beaconOf(t, { cookie: u.cookie }, d.device_id), undefined, 'live does not');
    assert.ok(!(await list({ cookie: u.cookie })).some((x) => x.id === d.id));
    assert.ok((await list(testKey)).some((x) => x.id === d.id));
  });

  test('PATCH renames and moves to another org of the owner; the old org sees the device switched off', async () => {
    const u = await signUp(t.app);
    const boss = await signUp(t.app, { name: 'Move Ops Boss' });
    const org = await sharedOrg(t.app, { by: boss, lift: root, name: 'Move Ops', members: [{ user: u, role: 'member' }] });
    const d = await createDevice(t, { cookie: u.cookie });
    await fix(d.token);
    const patch = (payload: object, cookie = u.cookie) => t.app.inject({ method: 'PATCH', url: `/v1/devices/${d.id}`, headers: { cookie }, payload });
    const moved = await patch({ name: 'Truck 3', org_id: org.id });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual([body(moved).name, body(moved).org_id, body(moved).active], ['Truck 3', org.id, false]);
    assert.equal(await beaconOf(t, { cookie: u.cookie }, d.device_id), undefined);
    await fix(d.token);
    assert.equal((await beaconOf(t, { cookie: boss.cookie }, d.device_id))?.org_id, org.id, 'its next fix lands in the new org');
    const outsider = await signUp(t.app);
    assert.equal((await patch({ org_id: (await createDevice(t, { cookie: outsider.cookie })).org_id })).statusCode, 403, 'not an org of the owner');
    assert.equal((await patch({})).statusCode, 422);
    assert.equal((await patch({ name: 'x' }, outsider.cookie)).statusCode, 404);
  });

  test('DELETE revokes: 401 in every protocol from then on, the device switched off with beacon_off', async () => {
    const u = await signUp(t.app);
    const d = await createDevice(t, { cookie: u.cookie });
    assert.equal((await fix(d.token)).statusCode, 200);
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie } });
    assert.equal(del.statusCode, 200, del.body);
    assert.deepEqual(body(del), { id: d.id, revoked: true });
    assert.equal(await beaconOf(t, { cookie: u.cookie }, d.device_id), undefined);
    const orgId = d.org_id;
    const audit = await t.app.inject({ url: `/v1/audit?org_id=${orgId}`, headers: { cookie: u.cookie } });
    assert.deepEqual(
      body<{ entries: { action: string; device_id: string }[] }>(audit).entries.filter((e) => e.device_id === d.device_id).map((e) => e.action),
      ['beacon_off', 'beacon_on'],
    );
    const requests = [
      { url: `/v1/trackers/osmand?id=${d.token}&lat=1&lon=2` },
      { url: `/?id=${d.token}&lat=1&lon=2` },
      { method: 'POST' as const, url: '/', payload: { device_id: d.token, location: { timestamp: t.clock.now().toISOString(), coords: { latitude: 1, longitude: 2 } } } },
      { method: 'POST' as const, url: pathOf(d.owntracks_url), payload: { _type: 'location', lat: 1, lon: 2, tst: 1 } },
      { url: `/v1/trackers/gpslogger?token=${d.token}&lat=1&lon=2` },
    ];
    for (const r of requests) {
      const res = await t.app.inject(r);
      assert.equal(res.statusCode, 401, `${r.url}: ${res.body}`);
      assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
    }
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie } })).statusCode, 404, 'twice is 404');
    assert.ok(!(await list({ cookie: u.cookie })).some((x) => x.id === d.id));
  });

  test('validates its input and needs a credential', async () => {
    const u = await signUp(t.app);
    const headers = { cookie: u.cookie };
    const bad = await t.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: ' ', device_id: 'has space', org_id: 0 } });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(body<{ details: { field: string }[] }>(bad).details.map((x) => x.field).sort(), ['device_id', 'name', 'org_id']);
    assert.equal((await t.app.inject({ url: '/v1/devices' })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/devices', payload: { name: 'x' } })).statusCode, 401);
    const other = await signUp(t.app);
    const foreign = await createDevice(t, { cookie: other.cookie });
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: 'x', org_id: foreign.org_id } })).statusCode, 403);
    await createDevice(t, headers, { device_id: 'same-id' });
    const dup = await t.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: 'x', device_id: 'same-id' } });
    assert.equal(dup.statusCode, 409);
  });
});
