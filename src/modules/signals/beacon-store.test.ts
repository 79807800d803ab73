import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { MINUTE, iso } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { startRedisServer, type RedisServer } from '../../../test/cluster/redis-server.js';
import type { BeaconStore } from './beacon-store.js';
import { boundingBox } from '../dispatch/geo.js';
import type { Box, DeviceKey, Ping } from './beacons.repository.js';
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

    test('positions in a box: exactly the devices a scan of every device finds, near the poles and the antimeridian too', async () => {
      // Latitudes and longitudes weighted to the awkward places: the poles (beyond a Redis geo set's
      // ±85.05°), the antimeridian, the exact edges, and one small region where most boxes fall.
      const lat = fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ min: 84, max: 90, noNaN: true }), fc.double({ min: -90, max: -84, noNaN: true }), fc.constantFrom(-90, 90, 85.05112878, -85.05112878, 0), fc.double({ min: 52, max: 53, noNaN: true }));
      const lng = fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: 175, max: 180, noNaN: true }), fc.double({ min: -180, max: -175, noNaN: true }), fc.constantFrom(-180, 180, 0), fc.double({ min: 4, max: 5, noNaN: true }));
      const fate = fc.constantFrom('on', 'on', 'moved', 'off', 'left');
      const devices = fc.array(fc.record({ lat, lng, lat2: lat, lng2: lng, fate }), { minLength: 1, maxLength: 20 });
      // Boxes as the responder search makes them (boundingBox), corners at devices' own positions (edges are inclusive), or any rectangle.
      const box = fc.oneof(
        fc.record({ lat, lng, r: fc.double({ min: 10, max: 5_000_000, noNaN: true }) }).map(({ lat, lng, r }) => ({ make: 'radius' as const, lat, lng, r })),
        fc.record({ i: fc.nat(), j: fc.nat() }).map(({ i, j }) => ({ make: 'corners' as const, i, j })),
        fc.record({ a: lat, b: lat, c: lng, d: lng }).map(({ a, b, c, d }) => ({ make: 'rect' as const, box: { minLat: Math.min(a, b), maxLat: Math.max(a, b), minLng: Math.min(c, d), maxLng: Math.max(c, d) } })),
      );
      await fc.assert(
        fc.asyncProperty(devices, fc.array(box, { minLength: 1, maxLength: 6 }), async (devs, boxes) => {
          t.clock.advance(MINUTE);
          const since = iso(t.clock.now());
          const where = new Map<string, { lat: number; lng: number }>();
          for (const d of devs) {
            const key = device();
            await store.recordPing(t.ctx.db, key, ping({ deviceId: key.deviceKey, lat: d.lat, lng: d.lng }));
            if (d.fate === 'moved') {
              t.clock.advance(1);
              await store.recordPing(t.ctx.db, key, ping({ deviceId: key.deviceKey, lat: d.lat2, lng: d.lng2 }));
            }
            if (d.fate === 'off') await store.switchOff(t.ctx.db, key);
            if (d.fate === 'left') await store.recordPing(t.ctx.db, key, ping({ orgId: bobOrg, deviceId: key.deviceKey }));
            if (d.fate === 'on' || d.fate === 'moved') where.set(key.deviceKey, d.fate === 'moved' ? { lat: d.lat2, lng: d.lng2 } : d);
          }
          const at = devs.map((d) => (d.fate === 'moved' ? { lat: d.lat2, lng: d.lng2 } : d));
          for (const b of boxes) {
            const rect: Box =
              b.make === 'radius'
                ? boundingBox(b.lat, b.lng, b.r)
                : b.make === 'rect'
                  ? b.box
                  : (() => {
                      const [p, q] = [at[b.i % at.length]!, at[b.j % at.length]!];
                      return { minLat: Math.min(p.lat, q.lat), maxLat: Math.max(p.lat, q.lat), minLng: Math.min(p.lng, q.lng), maxLng: Math.max(p.lng, q.lng) };
                    })();
            const inside = [...where].filter(([, p]) => p.lat >= rect.minLat && p.lat <= rect.maxLat && p.lng >= rect.minLng && p.lng <= rect.maxLng).map(([k]) => k);
            const found = (await store.positions(t.ctx.db, annOrg, 'live', since, rect)).map((p) => p.device_id!);
            assert.deepEqual(found.sort(), inside.sort(), JSON.stringify(rect));
          }
          // Without a box: every device still on in the org.
          assert.deepEqual((await store.positions(t.ctx.db, annOrg, 'live', since)).map((p) => p.device_id!).sort(), [...where.keys()].sort());
        }),
        { numRuns: Number(process.env.RUNS ?? 60) },
      );
    });
  });
}

describe('the Redis store’s box search (issue #40)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ REDIS_URL: redisServer.url, REDIS_PREFIX: `${redisServer.prefix}box:` });
    const deadline = Date.now() + 5_000;
    while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  });
  after(() => t.close());

  /** Calls of `command` Redis has served since the last CONFIG RESETSTAT (this test's own redis-server). */
  const calls = async (command: string) => Number(/calls=(\d+)/.exec((await t.ctx.redis!.info('commandstats')).split('\n').find((l) => l.startsWith(`cmdstat_${command}:`)) ?? '')?.[1] ?? 0);

  test('reads the hashes of the devices in the box only, not every device of the org', async () => {
    const u = await signUp(t.app, { name: 'Box' });
    const org = body<{ orgs: { id: number; primary: boolean }[] }>(await t.app.inject({ url: '/v1/orgs', headers: { cookie: u.cookie } })).orgs.find((o) => o.primary)!.id;
    const now = iso(t.clock.now());
    const ping = (lat: number, lng: number): Ping => ({ orgId: org, deviceId: null, lat, lng, accuracy: null, meta: '{}', positionAt: now, now });
    // 300 devices spread over 3 x 3 degrees of the Netherlands and Germany, and 4 in a square kilometre of Amsterdam.
    for (let i = 0; i < 300; i++) await t.ctx.beacons.recordPing(t.ctx.db, { mode: 'live', userId: u.id, deviceKey: `far-${i}` }, ping(50 + ((i * 0.618034) % 1) * 3, 6 + ((i * 0.754878) % 1) * 3));
    for (let i = 0; i < 4; i++) await t.ctx.beacons.recordPing(t.ctx.db, { mode: 'live', userId: u.id, deviceKey: `near-${i}` }, ping(52.37 + i * 0.001, 4.89 + i * 0.001));
    await t.ctx.redis!.config('RESETSTAT');
    const found = await t.ctx.beacons.positions(t.ctx.db, org, 'live', now, boundingBox(52.37, 4.89, 5_000));
    assert.equal(found.length, 4);
    assert.equal(await calls('hmget'), 4, 'one hash read per device in the box');
    assert.equal(await calls('smembers'), 0, 'the org’s set of every device is not read');
  });
});

describe('the Redis store\'s hash through the ping script\'s cases', () => {
  let t: TestApp;
  let u: TestUser;
  let v: TestUser;
  before(async () => {
    t = await buildTestApp({ REDIS_URL: redisServer.url, REDIS_PREFIX: `${redisServer.prefix}hash:` });
    u = await signUp(t.app, { name: 'Hal' });
    v = await signUp(t.app, { name: 'Ivy' });
    const deadline = Date.now() + 5_000;
    while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  });
  after(() => t.close());

  test('a turn-on clears the switch-off TTL and takes the ping\'s org even when its position is older; a later ping keeps both', async () => {
    const redis = t.ctx.redis!;
    const prefix = `${redisServer.prefix}hash:`;
    const orgOf = async (x: TestUser) => body<{ orgs: { id: number; primary: boolean }[] }>(await t.app.inject({ url: '/v1/orgs', headers: { cookie: x.cookie } })).orgs.find((o) => o.primary)!.id;
    const [first, second] = [await orgOf(u), await orgOf(v)];
    const key: DeviceKey = { mode: 'live', userId: u.id, deviceKey: 'hash-case' };
    const hash = `${prefix}beacon:live:${u.id}:hash-case`;
    const at = (ms: number) => iso(new Date(t.clock.now().getTime() + ms));
    const ping = (fields: Partial<Ping>): Ping => ({ orgId: first, deviceId: 'hash-case', lat: 1, lng: 2, accuracy: 3, meta: '{}', positionAt: at(0), now: at(0), ...fields });
    const orgSet = (org: number) => redis.smembers(`${prefix}beacons:org:live:${org}`);
    const member = `live:${u.id}:hash-case`;

    assert.deepEqual(await t.ctx.beacons.recordPing(t.ctx.db, key, ping({})), { turnedOn: true, moved: true });
    assert.equal(await redis.ttl(hash), -1);
    assert.ok((await t.ctx.beacons.switchOff(t.ctx.db, key)) !== undefined);
    assert.ok((await redis.pttl(hash)) > 0, 'a switched-off device\'s hash expires');
    assert.ok(!(await orgSet(first)).includes(member));

    // On again from the other org with a position older than the stored one: on, in that org, the old position kept.
    const back = await t.ctx.beacons.recordPing(t.ctx.db, key, ping({ orgId: second, lat: 9, positionAt: at(-60_000), now: at(1_000) }));
    assert.deepEqual(back, { turnedOn: true, moved: true });
    assert.equal(await redis.ttl(hash), -1, 'the turn-on removed the TTL');
    assert.deepEqual(await redis.hmget(hash, 'on', 'org', 'lat', 'seen'), ['1', String(second), '1', at(1_000)]);
    assert.deepEqual([(await orgSet(first)).includes(member), (await orgSet(second)).includes(member)], [false, true]);
    assert.equal(await redis.zscore(`${prefix}beacons:seen`, member), String(Date.parse(at(1_000))));

    // A later ping that is older still: seen, not moved, still on in that org, no TTL.
    assert.deepEqual(await t.ctx.beacons.recordPing(t.ctx.db, key, ping({ lat: 7, positionAt: at(-120_000), now: at(2_000) })), { turnedOn: false, moved: false });
    assert.deepEqual(await redis.hmget(hash, 'on', 'org', 'lat', 'seen', 'seenms'), ['1', String(second), '1', at(2_000), String(Date.parse(at(2_000)))]);
    assert.equal(await redis.ttl(hash), -1);
    // And a newer one from the first org moves it back there.
    assert.deepEqual(await t.ctx.beacons.recordPing(t.ctx.db, key, ping({ lat: 5, positionAt: at(3_000), now: at(3_000) })), { turnedOn: false, moved: true });
    assert.deepEqual(await redis.hmget(hash, 'org', 'lat', 'pos'), [String(first), '5', at(3_000)]);
    assert.deepEqual([(await orgSet(first)).includes(member), (await orgSet(second)).includes(member)], [true, false]);
  });
});

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
