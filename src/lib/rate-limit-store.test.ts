import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import fc from 'fast-check';
import { startRedisServer, type RedisServer } from '../../test/cluster/redis-server.js';
import { memoryRateLimitStore, redisRateLimitStore, type RateLimitHit, type RateLimitStore } from './rate-limit-store.js';
import { connectRedis } from './redis.js';

// The rate-limit counters in Redis count ahead in blocks (rate-limit-store.ts): these pin what that may and may
// not change against one INCR a request. A redis-server of the test's own: its command counts are this test's.
const WINDOW = 60_000;
const silent = { warn: () => {}, error: () => {}, info: () => {} } as unknown as FastifyBaseLogger;

describe('rate-limit counters in Redis, counted ahead in blocks', () => {
  let server: RedisServer;
  const connections: Redis[] = [];
  let t0: number;
  let n = 0;
  let bucket: string;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const c of connections) c.disconnect();
    await server.stop();
  });
  beforeEach(() => {
    t0 = Math.floor(Date.now() / WINDOW) * WINDOW + 1_000; // a window's start: every hit of a test in one window
    bucket = `api:user:${++n}:live`;
  });

  /** A connection as an instance makes (commands fail fast until it is ready), once ready. */
  const connected = async () => {
    const redis = connectRedis(server.url, silent);
    connections.push(redis);
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    return redis;
  };
  /** A store as an instance has one: its own connection, the prefix shared. */
  const instance = async (): Promise<RateLimitStore> => redisRateLimitStore(await connected(), server.prefix, silent);
  /** Scripts Redis ran so far: the reservations (one INCR a request ran one too). */
  const reservations = async () => {
    const stats = await (await connected()).info('commandstats');
    return ['evalsha', 'eval'].reduce((n, c) => n + Number(new RegExp(`cmdstat_${c}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
  };
  const hit = async (store: RateLimitStore, limit: number, b = bucket, at = t0) => {
    const r = store.hit(b, WINDOW, at, limit);
    return { ...(await r), waited: r instanceof Promise } as RateLimitHit & { waited: boolean };
  };

  test('one instance, a busy client: counts 1, 2, 3 ... in order, refused past the limit, a round trip per block, not per request', async () => {
    const store = await instance();
    const before = await reservations();
    const counts: number[] = [];
    let waited = 0;
    for (let i = 0; i < 700; i++) {
      const h = await hit(store, 600);
      counts.push(h.count);
      if (h.waited) waited += 1;
    }
    assert.deepEqual(counts.slice(0, 600), Array.from({ length: 600 }, (_, i) => i + 1), 'the first 600 counted 1 to 600');
    assert.ok(counts.slice(600).every((c) => c > 600), 'the rest refused');
    const made = (await reservations()) - before;
    // Blocks double up to 64 and shrink to an eighth of what is left as the limit nears, then go one by one for the
    // last 16: under 60 reservations for the 600 counts (one INCR a request made 700), none for the 100 refused.
    assert.ok(made < 60, `${made} reservations for 700 requests`);
    assert.ok(waited <= made, `${waited} requests waited on Redis`);
    // Past the limit nothing more is reserved: the key holds exactly the limit.
    assert.equal(await (await connected()).get(`${server.prefix}rl:${bucket}:${Math.floor(t0 / WINDOW)}`), '600');
  });

  test('two instances taking turns: exactly the limit is allowed, each count once', async () => {
    const a = await instance();
    const b = await instance();
    const allowed: number[] = [];
    for (let i = 0; i < 400; i++) {
      for (const store of [a, b]) {
        const h = await hit(store, 600);
        if (h.count <= 600) allowed.push(h.count);
      }
    }
    assert.equal(allowed.length, 600);
    assert.deepEqual([...allowed].sort((x, y) => x - y), Array.from({ length: 600 }, (_, i) => i + 1));
  });

  test('a client moving from one instance to another is refused at most a block and a half early, never late', async () => {
    const a = await instance();
    const b = await instance();
    let allowedA = 0;
    let allowedB = 0;
    for (let i = 0; i < 300; i++) if ((await hit(a, 600)).count <= 600) allowedA += 1;
    for (let i = 0; i < 400; i++) if ((await hit(b, 600)).count <= 600) allowedB += 1;
    assert.equal(allowedA, 300);
    assert.ok(allowedA + allowedB <= 600, 'never more than the limit');
    assert.ok(allowedA + allowedB >= 600 - 96, `at most half a block and the next (32 + 64) early: ${allowedA + allowedB} allowed`);
  });

  test('near the limit counts go one at a time: with 16 or fewer left, two instances agree request by request', async () => {
    const a = await instance();
    const b = await instance();
    // Small limits are never counted ahead: each request is one reservation of one, as one INCR was.
    const before = await reservations();
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) remaining.push(10 - (await hit(i % 2 ? b : a, 10)).count);
    assert.deepEqual(remaining, [9, 8, 7, 6, 5, 4]);
    assert.equal((await reservations()) - before, 6);
  });

  test('concurrent requests at a window\'s start share reservations and are each counted once', async () => {
    const store = await instance();
    const hits = await Promise.all(Array.from({ length: 100 }, () => hit(store, 50)));
    const allowed = hits.map((h) => h.count).filter((c) => c <= 50);
    assert.deepEqual(allowed.sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i + 1));
  });

  test('any interleaving over three instances: never more than the limit, each count once, and short of it by no more than the blocks left unused', async () => {
    const stores = [await instance(), await instance(), await instance()];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 300 }), fc.array(fc.record({ at: fc.integer({ min: 0, max: 2 }), n: fc.integer({ min: 1, max: 80 }), together: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (limit, runs) => {
        const b = `prop:${++n}`;
        const allowed: number[] = [];
        let requests = 0;
        for (const { at, n: count, together } of runs) {
          const store = stores[at]!;
          const hits = together ? await Promise.all(Array.from({ length: count }, () => hit(store, limit, b))) : [];
          if (!together) for (let i = 0; i < count; i++) hits.push(await hit(store, limit, b));
          requests += count;
          for (const h of hits) if (h.count <= limit) allowed.push(h.count);
        }
        assert.ok(allowed.length <= limit, 'never more than the limit');
        assert.equal(new Set(allowed).size, allowed.length, 'each count once');
        // The brute force: one counter, one request after another, allows min(requests, limit). The two instances not
        // serving the last run may each hold unused counts: half a block and the next block, at most 32 + 64.
        assert.ok(allowed.length >= Math.min(requests, limit) - 2 * 96, `${allowed.length} of min(${requests}, ${limit})`);
        if (runs.every((r) => r.at === runs[0]!.at)) assert.equal(allowed.length, Math.min(requests, limit), 'one instance alone: exactly the brute force');
      }),
      { numRuns: 40 },
    );
  });

  test('a new window starts again from 1', async () => {
    const store = await instance();
    for (let i = 0; i < 20; i++) await hit(store, 600);
    assert.equal((await hit(store, 600, bucket, t0 + WINDOW)).count, 1);
  });

  test('while Redis is down requests are allowed (fail open); when it is back they are counted again', async () => {
    const store = await instance();
    assert.equal((await hit(store, 5)).count, 1);
    await server.stop();
    try {
      const down = await hit(store, 5);
      assert.equal(down.count, 0, 'allowed, not counted');
    } finally {
      await server.start();
    }
    // The connection comes back by itself (retryStrategy); until it is ready requests stay allowed.
    let back: RateLimitHit | undefined;
    for (let i = 0; i < 200 && !(back && back.count > 0); i++) {
      back = await hit(store, 5, bucket, t0 + WINDOW);
      if (back.count === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(back?.count, 1, 'counted again in Redis, from a window Redis had lost');
  });
});

test('the memory store answers at once: 1, 2, 3 ... per bucket and window', () => {
  const store = memoryRateLimitStore();
  const counts = Array.from({ length: 3 }, () => store.hit('b', WINDOW, 0, 10));
  assert.deepEqual(counts.map((c) => (c instanceof Promise ? 'promise' : c.count)), [1, 2, 3]);
  assert.equal((store.hit('other', WINDOW, 0, 10) as RateLimitHit).count, 1);
  assert.equal((store.hit('b', WINDOW, WINDOW, 10) as RateLimitHit).count, 1, 'the next window');
});
