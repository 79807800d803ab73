import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { startRedisServer, type RedisServer } from '../../test/cluster/redis-server.js';
import { connectRedis } from '../lib/redis.js';
import { memoryStreamSlots, redisStreamSlots, type RedisStreamSlotsOptions, type StreamSlots } from './stream-slots.js';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('stream slots in memory', () => {
  test('a user holds at most `limit` streams; a released slot is free again; users do not share', async () => {
    const slots = memoryStreamSlots(2);
    const one = await slots.acquire(1);
    const two = await slots.acquire(1);
    assert.ok(one && two);
    assert.equal(await slots.acquire(1), undefined, 'the third is refused');
    assert.ok(await slots.acquire(2), 'another user has slots of their own');
    one();
    one(); // twice is harmless: it gives back one slot, not two
    assert.ok(await slots.acquire(1));
    assert.equal(await slots.acquire(1), undefined);
  });

  test('a limit of 0 means no cap', async () => {
    const slots = memoryStreamSlots(0);
    for (let i = 0; i < 100; i++) assert.ok(await slots.acquire(1));
  });
});

describe('stream slots across instances (Redis)', () => {
  let server: RedisServer;
  const opened: { redis: Redis; slots: StreamSlots }[] = [];
  let user = 0;

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const o of opened) {
      await o.slots.close();
      o.redis.disconnect();
    }
    await server.clean();
    await server.stop();
  });

  async function instance(options: Partial<RedisStreamSlotsOptions> = {}) {
    const redis = connectRedis(server.url, log);
    await until(() => redis.status === 'ready', 'the connection is ready');
    const slots = redisStreamSlots(redis, log, { prefix: server.prefix, limit: 3, ...options });
    opened.push({ redis, slots });
    return { redis, slots };
  }

  test('the limit counts the streams of every instance; a release on one frees a slot for the other', async () => {
    const a = await instance();
    const b = await instance();
    const u = ++user;
    const onA = [await a.slots.acquire(u), await a.slots.acquire(u)];
    assert.ok(onA.every(Boolean));
    assert.ok(await b.slots.acquire(u));
    assert.equal(await b.slots.acquire(u), undefined, 'B refuses the fourth: A holds two');
    assert.equal(await a.slots.acquire(u), undefined);
    onA[0]!();
    await until(async () => (await a.redis.zcard(`${server.prefix}streams:${u}`)) === 2, 'the release reached Redis');
    assert.ok(await b.slots.acquire(u), 'the slot A gave back');
  });

  test('concurrent opens on two instances never pass the limit together', async () => {
    const a = await instance({ limit: 5 });
    const b = await instance({ limit: 5 });
    const u = ++user;
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).slots.acquire(u)));
    assert.equal(results.filter(Boolean).length, 5);
  });

  test('the streams of an instance that died stop counting once their entries expire', async () => {
    let now = Date.now();
    const clock = () => now;
    const dying = await instance({ ttlMs: 1_000, now: clock });
    const b = await instance({ ttlMs: 1_000, now: clock });
    const u = ++user;
    for (let i = 0; i < 3; i++) assert.ok(await dying.slots.acquire(u));
    dying.redis.disconnect(); // gone without giving anything back
    assert.equal(await b.slots.acquire(u), undefined, 'still counted within the TTL');
    now += 1_001;
    assert.ok(await b.slots.acquire(u), 'counted no longer');
  });

  test('a live instance keeps its entries from expiring', async () => {
    const a = await instance({ ttlMs: 300, limit: 1 });
    const u = ++user;
    assert.ok(await a.slots.acquire(u));
    const key = `${server.prefix}streams:${u}`;
    const first = Number((await a.redis.zrange(key, '0', '-1', 'WITHSCORES'))[1]);
    await until(async () => Number((await a.redis.zrange(key, '0', '-1', 'WITHSCORES'))[1]) > first + 300, 'the entry was refreshed past its first expiry');
    const b = await instance({ ttlMs: 300, limit: 1 });
    assert.equal(await b.slots.acquire(u), undefined, 'the refreshed stream still counts');
  });
});
