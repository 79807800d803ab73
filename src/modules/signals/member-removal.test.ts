import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, testDialect, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { startRedisServer, type RedisServer } from '../../../test/cluster/redis-server.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { beacons, createDevice, pathOf } from '../../../test/trackers-kit.js';
import { sharedOrg } from '../../../test/world.js';

// Issue #31 F12: a member removed from an org stayed on its map (GET /v1/signals/beacons) and its
// device list (an `active` device in GET /v1/devices) until the 5-minute silence timeout, though
// their fixes were already refused. Now they are switched off at once, as a device moved to another
// org is, in both modes, with either beacon store (memory without Redis, Redis with it).

let redisServer: RedisServer;
before(async () => {
  redisServer = await startRedisServer();
});
after(async () => {
  await redisServer.clean();
  await redisServer.stop();
});

interface DeviceView {
  id: number;
  user_id: number;
  active: boolean;
}

for (const kind of ['memory', 'redis'] as const) {
  describe(`a removed member leaves the org’s map at once (${kind} beacon store, ${testDialect})`, () => {
    let t: TestApp;
    let admin: TestUser;
    let stream: SseClient | undefined;

    before(async () => {
      t = await buildTestApp(kind === 'redis' ? { REDIS_URL: redisServer.url, REDIS_PREFIX: `${redisServer.prefix}${kind}:` } : {});
      admin = await signUp(t.app, { name: 'Admin' }); // the first user: instance admin
      if (kind === 'redis') {
        const deadline = Date.now() + 5_000;
        while (t.ctx.redis!.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      }
    });
    after(async () => {
      await stream?.close();
      await t.close();
    });

    const beacon = (headers: Headers, orgId: number, deviceId: string) =>
      t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { type: 'beacon', org_id: orgId, lat: 52.37, lng: 4.89, meta: { device_id: deviceId } } });
    const devices = async (headers: Headers) => {
      const res = await t.app.inject({ url: '/v1/devices', headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ devices: DeviceView[] }>().devices;
    };

    test('their beacons (live and test) and their tracker leave the map and the device list with the removal, with beacon_off', async () => {
      const mia = await signUp(t.app, { name: 'Mia Member' });
      const owner = await signUp(t.app, { name: `Crew ${kind} Boss` });
      const org = await sharedOrg(t.app, { by: owner, lift: admin, name: `Crew ${kind}`, members: [{ user: mia, role: 'member' }] });
      const boss = { cookie: owner.cookie };
      const bossTest = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
      const miaTest = { 'x-api-key': (await createKey(t.app, mia.cookie, 'test')).key };
      const phone = await createDevice(t, { cookie: mia.cookie }, { name: 'Mia van', org_id: org.id });
      stream = await connectSse(await listen(t), '/v1/signals/stream', boss);
      await stream.waitForEvent('connected');

      assert.equal((await beacon({ cookie: mia.cookie }, org.id, 'mia-phone')).statusCode, 201);
      assert.equal((await beacon(miaTest, org.id, 'mia-test-phone')).statusCode, 201);
      assert.equal((await t.app.inject({ url: `${pathOf(phone.osmand_url)}&lat=52.1&lon=4.3` })).statusCode, 200);
      const bossBeacon = await beacon(boss, org.id, 'boss-phone');
      assert.equal(bossBeacon.statusCode, 201);
      assert.deepEqual((await beacons(t, boss)).map((b) => b.device_id).sort(), ['boss-phone', 'mia-phone', phone.device_id].sort());
      assert.deepEqual((await beacons(t, bossTest)).map((b) => b.device_id), ['mia-test-phone']);
      assert.equal((await devices(boss)).find((d) => d.id === phone.id)?.active, true);

      const removed = await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/members/${mia.id}`, headers: boss });
      assert.equal(removed.statusCode, 200, removed.body);

      // At once, with no clock moved: gone from the map in both modes, and from the org's device list.
      assert.deepEqual((await beacons(t, boss)).map((b) => b.device_id), ['boss-phone']);
      assert.deepEqual(await beacons(t, bossTest), []);
      assert.equal((await devices(boss)).find((d) => d.id === phone.id), undefined, 'not the org’s device any more');
      for (const device of ['mia-phone', phone.device_id]) {
        await stream.waitForEvent('beacon_off', (p) => p.device_id === device && p.user_id === mia.id);
      }
      const audit = await t.app.inject({ url: `/v1/audit?org_id=${org.id}`, headers: boss });
      const offs = audit.json<{ entries: { action: string; user_id: number; meta: { reason?: string } }[] }>().entries.filter((e) => e.action === 'beacon_off' && e.user_id === mia.id);
      assert.deepEqual(offs.map((e) => e.meta.reason), ['removed', 'removed']);

      // Their fixes stay refused and turn nothing back on.
      assert.equal((await beacon({ cookie: mia.cookie }, org.id, 'mia-phone')).statusCode, 403);
      assert.notEqual((await t.app.inject({ url: `${pathOf(phone.osmand_url)}&lat=52.2&lon=4.4` })).statusCode, 200);
      assert.deepEqual((await beacons(t, boss)).map((b) => b.device_id), ['boss-phone']);
    });

    test('beacons racing the removal never leave the member on the map', async () => {
      const max = await signUp(t.app, { name: 'Max Member' });
      const owner = await signUp(t.app, { name: `Race ${kind} Boss` });
      const org = await sharedOrg(t.app, { by: owner, lift: admin, name: `Race ${kind}`, members: [{ user: max, role: 'member' }] });
      const boss = { cookie: owner.cookie };
      // Five phones keep turning new devices on (the path that writes) before, during and after the removal.
      let removed = false;
      let n = 0;
      const statuses: number[] = [];
      const phone = async () => {
        for (let after = 0; after < 3; after += removed ? 1 : 0) {
          const res = await beacon({ cookie: max.cookie }, org.id, `max-${(n += 1)}`);
          assert.ok([201, 403].includes(res.statusCode), res.body);
          statuses.push(res.statusCode);
        }
      };
      const phones = Array.from({ length: 5 }, phone);
      while (!statuses.includes(201)) await new Promise((r) => setImmediate(r));
      const removal = await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/members/${max.id}`, headers: boss });
      removed = true;
      assert.equal(removal.statusCode, 200, removal.body);
      await Promise.all(phones);
      assert.ok(statuses.includes(201) && statuses.includes(403), `the beacons raced the removal: ${statuses.join(',')}`);
      assert.deepEqual((await beacons(t, boss)).filter((b) => b.user_id === max.id), []);
      assert.deepEqual((await devices(boss)).filter((d) => d.user_id === max.id), []);
    });
  });
}
