import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE, iso } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { startRedisServer, type RedisServer } from '../../../test/cluster/redis-server.js';
import type { BeaconStore } from './beacon-store.js';
import type { DeviceKey, Ping } from './beacons.repository.js';
import { sweepSilentBeacons } from './beacons.service.js';

// One contract, two stores: memory over the database (no REDIS_URL) and Redis (REDIS_URL set). The Redis
// store is what several instances share; each promise below is what keeps beacon_on and
// beacon_off exactly-once when pings of one device land on different instances.

let redisServer: RedisServer;
before(async () => {
  redisServer = await startRedisServer();
});
after(async () => {
  await redisServer.clean();
  await redisServer.stop();
});

for (const kind of ['memory', 'redis'] as const) {
  describe(`beacon store: ${kind}`, () => {
    let t: TestApp;
    let store: BeaconStore;
    let ann: TestUser;
    let bob: TestUser;
    let annOrg: number;
    let bobOrg: number;
    let seq = 0;

    before(async () => {
      t = await buildTestApp(kind === 'redis' ? { REDIS_URL: redisServer.url, REDIS_PREFIX: `${redisServer.prefix}${kind}:` } : {});
      store = t.ctx.beacons;
      ann = await signUp(t.app, { name: 'Ann' });
      bob = await signUp(t.app, { name: 'Bob' });
      const orgOf = async (u: TestUser) =>
        body<{ orgs: { id: number; primary: boolean }[] }>(await t.app.inject({ url: '/v1/orgs', headers: { cookie: u.cookie } })).orgs.find((o) => o.primary)!.id;
      annOrg = await orgOf(ann);
      bobOrg = await orgOf(bob);
      if (kind === 'redis') {
        const deadline = Date.now() + 5_000;
        while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      }
    });
    after(() => t.close());

    const device = (user = ann, mode: 'live' | 'test' = 'live'): DeviceKey => ({ mode, userId: user.id, deviceKey: `dev:${++seq}:a b` });
    const ping = (fields: Partial<Ping> = {}): Ping => ({
      orgId: annOrg,
      deviceId: 'phone',
      lat: 52.1,
      lng: 4.3,
      accuracy: 7,
      meta: '{"device_id":"phone"}',
      positionAt: iso(t.clock.now()),
      now: iso(t.clock.now()),
      ...fields,
    });

    test(`is the ${kind} store; /readyz and /healthz report Redis as ${kind === 'redis' ? 'ok' : 'disabled'}`, async () => {
      assert.equal(store.kind, kind);
      const redis = kind === 'redis' ? 'ok' : 'disabled';
      assert.deepEqual(body(await t.app.inject({ url: '/readyz' })), { status: 'ready', database: t.ctx.database.dialect, redis });
      assert.deepEqual(body(await t.app.inject({ url: '/healthz' })), { status: 'ok', redis });
    });

    test('of 25 concurrent pings of a device that is off, exactly one turns it on; all but older ones move it', async () => {
      const key = device();
      const results = await Promise.all(Array.from({ length: 25 }, (_, i) => store.recordPing(t.ctx.db, key, ping({ lat: i }))));
      assert.equal(results.filter((r) => r.turnedOn).length, 1);
      const again = await store.recordPing(t.ctx.db, key, ping());
      assert.deepEqual(again, { turnedOn: false, moved: true });
    });

    test('a position taken before the stored one does not replace it, but the device counts as seen', async () => {
      const key = device();
      await store.recordPing(t.ctx.db, key, ping({ lat: 1, lng: 1 }));
      t.clock.advance(MINUTE);
      const late = await store.recordPing(t.ctx.db, key, ping({ lat: 9, lng: 9, positionAt: iso(new Date(t.clock.now().getTime() - 2 * MINUTE)) }));
      assert.deepEqual(late, { turnedOn: false, moved: false });
      const shown = (await store.active(t.ctx.db, { orgIds: [annOrg], mode: 'live' })).find((b) => b.device_key === key.deviceKey)!;
      assert.deepEqual([shown.lat, shown.lng], [1, 1]);
      assert.equal(shown.last_seen_at, iso(t.clock.now()));
    });

    test('of 10 concurrent switch-offs exactly one returns the state; the next ping turns the device on again', async () => {
      const key = device();
      await store.recordPing(t.ctx.db, key, ping({ lat: 3.5, lng: -1.25, accuracy: null, deviceId: null, meta: '{}' }));
      const offs = await Promise.all(Array.from({ length: 10 }, () => store.switchOff(t.ctx.db, key)));
      const done = offs.filter((s) => s !== undefined);
      assert.equal(done.length, 1);
      const s = done[0]!;
      assert.deepEqual(
        [s.user_id, s.org_id, s.device_key, s.device_id, s.lat, s.lng, s.accuracy, s.meta, s.livemode, s.active],
        [ann.id, annOrg, key.deviceKey, null, 3.5, -1.25, null, '{}', 1, 0],
      );
      assert.equal(await store.switchOff(t.ctx.db, key), undefined, 'already off');
      assert.equal((await store.recordPing(t.ctx.db, key, ping())).turnedOn, true);
    });

    test('active devices: only the orgs and mode asked for, with the owner’s name, most recently seen first', async () => {
      const older = device();
      const newer = device();
      const bobs = device(bob);
      const testMode = device(ann, 'test');
      await store.recordPing(t.ctx.db, older, ping({ deviceId: 'older' }));
      t.clock.advance(1_000);
      await store.recordPing(t.ctx.db, newer, ping({ deviceId: 'newer' }));
      await store.recordPing(t.ctx.db, bobs, ping({ orgId: bobOrg, deviceId: 'bobs' }));
      await store.recordPing(t.ctx.db, testMode, ping({ deviceId: 'test-mode' }));

      const annLive = (await store.active(t.ctx.db, { orgIds: [annOrg], mode: 'live' })).filter((b) => [older, newer].some((k) => k.deviceKey === b.device_key));
      assert.deepEqual(
        annLive.map((b) => [b.device_id, b.user_name, b.org_id]),
        [
          ['newer', 'Ann', annOrg],
          ['older', 'Ann', annOrg],
        ],
      );
      const keysOf = async (orgIds: number[], mode: 'live' | 'test') => (await store.active(t.ctx.db, { orgIds, mode })).map((b) => b.device_key);
      assert.ok(!(await keysOf([annOrg], 'live')).includes(bobs.deviceKey), 'another org');
      assert.ok(!(await keysOf([annOrg], 'live')).includes(testMode.deviceKey), 'another mode');
      assert.ok((await keysOf([annOrg], 'test')).includes(testMode.deviceKey), 'its own mode');
      assert.ok((await keysOf([bobOrg], 'live')).includes(bobs.deviceKey), 'its own org');
      assert.deepEqual(await keysOf([], 'live'), []);

      // A device that pings into another org moves there.
      t.clock.advance(1_000);
      await store.recordPing(t.ctx.db, older, ping({ orgId: bobOrg, deviceId: 'older' }));
      assert.ok(!(await keysOf([annOrg], 'live')).includes(older.deviceKey), 'gone from the org it left');
      assert.ok((await keysOf([bobOrg], 'live')).includes(older.deviceKey), 'listed in the org it pings into');
      await store.switchOff(t.ctx.db, older);
      assert.ok(!(await keysOf([bobOrg], 'live')).includes(older.deviceKey), 'off devices are not listed');
    });

    test('silent devices are found by their last ping; a device seen since the listing is not switched off', async () => {
      for (const k of await store.silent(t.ctx.db, iso(new Date(t.clock.now().getTime() + 1)), 10_000)) await store.switchOff(t.ctx.db, k);
      const quiet = device();
      const chatty = device(ann, 'test');
      await store.recordPing(t.ctx.db, quiet, ping());
      await store.recordPing(t.ctx.db, chatty, ping());
      t.clock.advance(MINUTE);
      const before = iso(t.clock.now());
      await store.recordPing(t.ctx.db, chatty, ping({ now: iso(t.clock.now()) }));
      const silent = await store.silent(t.ctx.db, before, 100);
      assert.deepEqual(silent, [quiet]);
      t.clock.advance(1);
      const listed = await store.silent(t.ctx.db, iso(t.clock.now()), 100);
      assert.equal(listed.length, 2);
      assert.equal(await store.switchOff(t.ctx.db, chatty, before), undefined, 'seen at `before`, so not silent before it');
      assert.ok(await store.switchOff(t.ctx.db, quiet, before), 'the silent one goes off');
    });

    test('positions (the responder search): active devices of one org and mode with a position, seen since a time, inside a box', async () => {
      for (const k of await store.silent(t.ctx.db, iso(new Date(t.clock.now().getTime() + 1)), 10_000)) await store.switchOff(t.ctx.db, k);
      const since = iso(t.clock.now());
      const [near, far, noFix, other, testMode, off] = [device(), device(), device(), device(bob), device(ann, 'test'), device()];
      await store.recordPing(t.ctx.db, near, ping({ deviceId: 'near', lat: 1, lng: 1 }));
      await store.recordPing(t.ctx.db, far, ping({ deviceId: null, lat: 40, lng: 40 }));
      await store.recordPing(t.ctx.db, noFix, ping({ deviceId: 'no-fix', lat: null, lng: null }));
      await store.recordPing(t.ctx.db, other, ping({ orgId: bobOrg, deviceId: 'bobs' }));
      await store.recordPing(t.ctx.db, testMode, ping({ deviceId: 'test-mode' }));
      await store.recordPing(t.ctx.db, off, ping({ deviceId: 'off' }));
      await store.switchOff(t.ctx.db, off);
      const all = await store.positions(t.ctx.db, annOrg, 'live', since);
      assert.deepEqual(
        all.map((p) => [p.user_id, p.device_id, p.lat, p.lng, p.last_seen_at]).sort((a, b) => Number(a[2]) - Number(b[2])),
        [
          [ann.id, 'near', 1, 1, since],
          [ann.id, null, 40, 40, since],
        ],
      );
      assert.deepEqual((await store.positions(t.ctx.db, annOrg, 'live', since, { minLat: 0, maxLat: 2, minLng: 0, maxLng: 2 })).map((p) => p.device_id), ['near']);
      assert.deepEqual((await store.positions(t.ctx.db, annOrg, 'test', since)).map((p) => p.device_id), ['test-mode']);
      assert.deepEqual(await store.positions(t.ctx.db, annOrg, 'live', iso(new Date(t.clock.now().getTime() + 1))), [], 'seen before the cut-off');
    });
  });
}

describe('beacons over HTTP with REDIS_URL', () => {
  let t: TestApp;
  let u: TestUser;
  before(async () => {
    t = await buildTestApp({ REDIS_URL: redisServer.url, REDIS_PREFIX: `${redisServer.prefix}http:` });
    u = await signUp(t.app, { name: 'Rae' });
  });
  after(() => t.close());

  const actions = async () => {
    const org = body<{ orgs: { id: number; primary: boolean }[] }>(await t.app.inject({ url: '/v1/orgs', headers: { cookie: u.cookie } })).orgs.find((o) => o.primary)!.id;
    const res = await t.app.inject({ url: `/v1/audit?org_id=${org}`, headers: { cookie: u.cookie } });
    return body<{ entries: { action: string }[] }>(res).entries.map((e) => e.action);
  };

  test('30 concurrent pings write one beacon_on; the state is in Redis, not the database; silence writes one beacon_off', async () => {
    const res = await Promise.all(
      Array.from({ length: 30 }, (_, i) => t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: u.cookie }, payload: { type: 'beacon', lat: i, lng: 1, meta: { device_id: 'r1' } } })),
    );
    assert.deepEqual([...new Set(res.map((r) => r.statusCode))], [201]);
    assert.deepEqual(await actions(), ['beacon_on']);
    assert.equal((await t.ctx.db.selectFrom('beacon_states').selectAll().execute()).length, 0, 'no beacon row in the database');
    const list = body<{ beacons: { device_id: string }[] }>(await t.app.inject({ url: '/v1/signals/beacons', headers: { cookie: u.cookie } }));
    assert.deepEqual(
      list.beacons.map((b) => b.device_id),
      ['r1'],
    );

    t.clock.advance(t.ctx.config.beaconTimeoutMs + 1);
    const sweeps = await Promise.all([sweepSilentBeacons(t.ctx), sweepSilentBeacons(t.ctx), sweepSilentBeacons(t.ctx)]);
    assert.equal(
      sweeps.reduce((a, b) => a + b, 0),
      1,
    );
    assert.deepEqual(await actions(), ['beacon_off', 'beacon_on']);
  });
});
