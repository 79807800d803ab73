import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/** One counted request: how many the bucket has seen in the current window, and when that window ends. */
export interface RateLimitHit {
  count: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number;
}

/**
 * Counts requests per bucket in fixed windows aligned to the clock (window = floor(now / windowMs)),
 * so every instance sharing a store agrees on the window without talking to each other.
 */
export interface RateLimitStore {
  hit(bucket: string, windowMs: number, now: number): Promise<RateLimitHit>;
  /** The same count without a promise, for a store in this process (the request hook stays synchronous). */
  hitSync?(bucket: string, windowMs: number, now: number): RateLimitHit;
}

const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
const resetOf = (now: number, windowMs: number) => (windowOf(now, windowMs) + 1) * windowMs - now;

/** Counters in this process (one instance). Old windows are dropped once per window. */
export function memoryRateLimitStore(): RateLimitStore {
  const counters = new Map<string, { window: number; count: number }>();
  let swept = 0;
  const hitSync = (bucket: string, windowMs: number, now: number): RateLimitHit => {
    const window = windowOf(now, windowMs);
    if (window !== swept) {
      for (const [k, v] of counters) if (v.window < window) counters.delete(k);
      swept = window;
    }
    const c = counters.get(bucket);
    let count = 1;
    if (!c) counters.set(bucket, { window, count });
    else if (c.window !== window) {
      c.window = window;
      c.count = 1;
    } else count = ++c.count;
    return { count, resetMs: resetOf(now, windowMs) };
  };
  return { hitSync, hit: (bucket, windowMs, now) => Promise.resolve(hitSync(bucket, windowMs, now)) };
}

/** INCR and PEXPIRE of one window's key, atomically: one command and one reply where MULTI took four of each. */
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
`;

type HitCommand = (key: string, ttlMs: string) => Promise<number>;

/**
 * Counters in Redis, shared by every instance: INCR and PEXPIRE in one script on a key that names
 * the window. When Redis fails the request is allowed (fail open) and the outage is logged once:
 * a limiter must not take the service down with it.
 */
export function redisRateLimitStore(redis: Redis, prefix: string, log: FastifyBaseLogger): RateLimitStore {
  redis.defineCommand('musterRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  const hitCommand = (redis as unknown as { musterRateHit: HitCommand }).musterRateHit.bind(redis);
  let failing = false;
  return {
    hit: async (bucket, windowMs, now) => {
      const window = windowOf(now, windowMs);
      const key = `${prefix}rl:${bucket}:${window}`;
      try {
        const value = await hitCommand(key, String(windowMs * 2));
        if (failing) log.warn('rate limits: redis answers again');
        failing = false;
        return { count: Number(value), resetMs: resetOf(now, windowMs) };
      } catch (err) {
        if (!failing) log.warn({ err: (err as Error).message }, 'rate limits: redis failed; allowing requests until it answers');
        failing = true;
        return { count: 0, resetMs: resetOf(now, windowMs) };
      }
    },
  };
}
