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
  /**
   * Counts one request against `bucket`, whose limit is `limit` (the store may use it to decide how far
   * ahead it counts). Answers at once when this process knows the count (the memory store always; the Redis
   * store from counts it reserved), else a promise.
   */
  hit(bucket: string, windowMs: number, now: number, limit: number): RateLimitHit | Promise<RateLimitHit>;
}

const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
const resetOf = (now: number, windowMs: number) => (windowOf(now, windowMs) + 1) * windowMs - now;

/** A per-bucket state of one window, dropped once that window is over (checked once per window). */
function perWindow<S extends { window: number }>() {
  const states = new Map<string, S>();
  let swept = 0;
  return (bucket: string, window: number, make: (window: number) => S): S => {
    if (window !== swept) {
      for (const [k, v] of states) if (v.window < window) states.delete(k);
      swept = window;
    }
    let state = states.get(bucket);
    if (!state || state.window !== window) states.set(bucket, (state = make(window)));
    return state;
  };
}

/** Counters in this process (one instance). */
export function memoryRateLimitStore(): RateLimitStore {
  const counter = perWindow<{ window: number; count: number }>();
  const fresh = (window: number) => ({ window, count: 0 });
  return {
    hit: (bucket, windowMs, now) => {
      const c = counter(bucket, windowOf(now, windowMs), fresh);
      return { count: ++c.count, resetMs: resetOf(now, windowMs) };
    },
  };
}

/** INCRBY and PEXPIRE of one window's key, atomically: the last of the counts reserved. */
const RESERVE_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
`;

type ReserveCommand = (key: string, ttlMs: string, count: string) => Promise<number>;

/** Counts reserved at once at most (a block), and the share of what is left under the limit a block may take. */
const MAX_BLOCK = 64;
const BLOCK_SHARE = 8;

/** An instance's counts of one bucket and window: reserved blocks not yet handed out, in order. */
interface Reserved {
  window: number;
  /** Reserved counts not yet handed out: [first, last] ranges, ascending. */
  ranges: [number, number][];
  /** The highest count Redis answered in this window: the bucket's count as far as this instance knows. */
  known: number;
  /** The size of the last block: each next one doubles (a busy client reserves more, a quiet one one at a time). */
  size: number;
  /** The reservation on its way (one at a time). */
  pending: Promise<void> | undefined;
}

/**
 * Counters in Redis, shared by every instance, counted ahead in blocks. A bucket's first request in a
 * window reserves one count (INCRBY and PEXPIRE in one script on a key that names the window, awaited);
 * each next reservation doubles, up to 64 counts and at most an eighth of what is left under the limit,
 * and is made in the background once half of the block is handed out, so a busy client's requests are
 * counted in this process, in order, without a round trip each. Near the limit (16 or fewer left) every
 * count is reserved alone, as one INCR a request was. Each count is reserved once, by one instance, so the
 * requests allowed in a window never exceed the limit; counts another instance reserved and has not used
 * are not free for this one, so a client switching instances may be refused early by what the instance it
 * left holds: at most half a block and the next one (32 + 64 counts, and each block at most an eighth of what
 * was left when it was reserved). Once this instance knows the count is past the limit it refuses the rest
 * of the window without asking Redis. When Redis fails the request is allowed (fail open) and the outage is
 * logged once: a limiter must not take the service down with it.
 */
export function redisRateLimitStore(redis: Redis, prefix: string, log: FastifyBaseLogger): RateLimitStore {
  redis.defineCommand('musterRateReserve', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
  const reserveCommand = (redis as unknown as { musterRateReserve: ReserveCommand }).musterRateReserve.bind(redis);
  const held = perWindow<Reserved>();
  const fresh = (window: number): Reserved => ({ window, ranges: [], known: 0, size: 0, pending: undefined });
  let failing = false;

  const nextSize = (r: Reserved, limit: number) => Math.max(1, Math.min(r.size * 2, MAX_BLOCK, Math.floor((limit - r.known) / BLOCK_SHARE)));
  /** Reserves the next block of `bucket`'s counts in `r`'s window (the key and its lifetime built only here, not per request). */
  const reserve = (r: Reserved, bucket: string, windowMs: number, limit: number): Promise<void> => {
    const size = nextSize(r, limit);
    r.size = size;
    r.pending = reserveCommand(`${prefix}rl:${bucket}:${r.window}`, String(windowMs * 2), String(size))
      .then(
        (value) => {
          const last = Number(value);
          r.ranges.push([last - size + 1, last]);
          r.known = Math.max(r.known, last);
          if (failing) log.warn('rate limits: redis answers again');
          failing = false;
        },
        (err: unknown) => {
          if (!failing) log.warn({ err: (err as Error).message }, 'rate limits: redis failed; allowing requests until it answers');
          failing = true;
          throw err;
        },
      )
      .finally(() => {
        r.pending = undefined;
      });
    return r.pending;
  };

  /** The next reserved count, or undefined when none is left. */
  const take = (r: Reserved): number | undefined => {
    const range = r.ranges[0];
    if (!range) return undefined;
    const count = range[0]++;
    if (range[0] > range[1]) r.ranges.shift();
    return count;
  };
  const left = (r: Reserved) => r.ranges.reduce((n, [first, last]) => n + last - first + 1, 0);

  return {
    hit: (bucket, windowMs, now, limit) => {
      const window = windowOf(now, windowMs);
      const r = held(bucket, window, fresh);
      const resetMs = resetOf(now, windowMs);
      const counted = (count: number): RateLimitHit => {
        // A busy client (its blocks past one count) with half its block handed out: the next block is reserved
        // before it is needed. Never near the limit, where counts go one at a time, as they are needed.
        if (r.pending === undefined && r.size >= 2 && left(r) * 2 <= r.size && nextSize(r, limit) >= 2) reserve(r, bucket, windowMs, limit).catch(() => undefined);
        return { count, resetMs };
      };
      const ready = take(r);
      if (ready !== undefined) return counted(ready);
      if (r.known >= limit && r.pending === undefined) return { count: r.known + 1, resetMs };
      return (async (): Promise<RateLimitHit> => {
        try {
          for (;;) {
            await (r.pending ?? reserve(r, bucket, windowMs, limit));
            const count = take(r);
            if (count !== undefined) return counted(count);
            if (r.known >= limit && r.pending === undefined) return { count: r.known + 1, resetMs };
          }
        } catch {
          return { count: 0, resetMs };
        }
      })();
    },
  };
}
