// The hook on every timeline event costs nothing for an org without subscriptions: the org's
// subscriptions come from each instance's memory, dropped on every instance (through the Redis bus)
// when they change, and not trusted while an instance may be missing those notices.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { EventBus } from '../../events/bus.js';
import { createRedisBus } from '../../events/redis-bus.js';
import { iso } from '../../lib/clock.js';
import { connectRedis } from '../../lib/redis.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { startRedisServer, type RedisServer } from '../../../test/cluster/redis-server.js';
import { until } from '../../../test/peers.js';
import { buildWorld, type World } from '../../../test/world.js';
import { SubscriptionCache } from './cache.js';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

describe('the subscription cache', () => {
  let t: TestApp;
  let w: World<'owner'>;
  let reads = 0;
  let orgId: number;
  before(async () => {
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' }, { onQuery: (sql) => void (/incident_subscriptions/.test(sql) && (reads += 1)) });
    w = await buildWorld(t, { people: { owner: { name: 'Olga Owner' } }, org: { by: 'owner', personal: true } });
    orgId = w.org!.id;
  });
  after(() => t.close());

  const as = () => w.as(w.people.owner);
  const incident = (title: string) => w.ok<{ Id: number }>(as(), 'POST', '/v1/tickets', { title, org_id: orgId, priority: 'high' });
  const webhooks = () => t.ctx.db.selectFrom('outbox').select(['recipient', 'topic']).where('kind', '=', 'webhook').orderBy('id').execute();

  test('an org without subscriptions: one read, then none for any event; a new subscription is seen at once', async () => {
    reads = 0;
    const first = await incident('First');
    assert.equal(reads, 1, 'the first event of the org reads its subscriptions once');
    await incident('Second');
    await w.ok(as(), 'PATCH', `/v1/tickets/${first.Id}`, { status: 'resolved' });
    await w.ok(as(), 'PATCH', `/v1/tickets/${first.Id}`, { priority: 'low' });
    assert.equal(reads, 1, 'then none: created, resolved and a priority change read nothing');

    const sub = await w.ok<{ id: number }>(as(), 'POST', `/v1/orgs/${w.org!.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['incident.created'], format: 'standard' });
    reads = 0;
    await incident('Third');
    assert.equal(reads, 1, 'the change dropped the entry: read again');
    assert.deepEqual(await webhooks(), [{ recipient: 'http://127.0.0.1:9/hook', topic: 'incident.created' }]);
    await incident('Fourth');
    assert.equal(reads, 1);
    assert.equal((await webhooks()).length, 2);

    await w.ok(as(), 'DELETE', `/v1/orgs/${w.org!.slug}/webhooks/${sub.id}`);
    await incident('Fifth');
    assert.equal((await webhooks()).length, 2, 'deleted: seen at once, nothing queued');
  });

  describe('two instances on one Redis', () => {
    let server: RedisServer;
    const opened: { redis: Redis; bus: EventBus }[] = [];
    before(async () => {
      server = await startRedisServer();
    });
    after(async () => {
      for (const o of opened) {
        await o.bus.close();
        o.redis.disconnect();
      }
      await server.clean();
      await server.stop();
    });
    async function instance() {
      const redis = connectRedis(server.url, log);
      const bus = createRedisBus(redis, log, { prefix: server.prefix, replayMs: 60_000, replayMax: 1_000 });
      opened.push({ redis, bus });
      await until(() => bus.accessEpoch?.() !== undefined, 'the bus hears the other instances');
      return { bus, cache: new SubscriptionCache(bus) };
    }
    const insert = (url: string) =>
      t.ctx.db
        .insertInto('incident_subscriptions')
        .values({ org_id: orgId, livemode: 1, url, format: 'chat', events: '["incident.created"]', secret: null, description: null, disabled_at: null, disabled_reason: null, created_by: null, created_at: iso(t.clock.now()), updated_at: iso(t.clock.now()) })
        .execute();
    const urls = async (cache: SubscriptionCache) => (await cache.ofOrg(t.ctx.db, orgId)).map((s) => s.url);

    test("a change on A reaches B's memory through the bus; while B may miss notices it serves nothing from memory", async () => {
      const a = await instance();
      const b = await instance();
      const before = await urls(b.cache);
      await insert('https://hooks.example.com/one');
      assert.deepEqual(await urls(b.cache), before, 'B serves from memory: a row written behind its back (no notice) is not seen');
      a.bus.publishAccess({ subscriptionsOf: orgId });
      await until(async () => (await urls(b.cache)).includes('https://hooks.example.com/one'), "A's notice reaches B");

      await server.stop();
      await until(() => b.bus.accessEpoch?.() === undefined, 'B knows it is not hearing the others');
      await insert('https://hooks.example.com/two');
      assert.ok((await urls(b.cache)).includes('https://hooks.example.com/two'), 'not hearing: read from the database every time');
      await server.start();
      await until(() => b.bus.accessEpoch?.() !== undefined, 'B hears again');
      await insert('https://hooks.example.com/three');
      assert.ok((await urls(b.cache)).includes('https://hooks.example.com/three'), 'memory held before the gap was dropped');
      await t.ctx.db.deleteFrom('incident_subscriptions').where('org_id', '=', orgId).execute();
    });
  });
});
