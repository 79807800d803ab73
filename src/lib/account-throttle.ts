import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import type { AppContext } from '../context.js';
import { sha256 } from './crypto.js';
import { AppError } from './errors.js';

/**
 * Which door of an account a try goes through. Passwords and emailed codes are counted apart, so
 * someone hammering the password of an account cannot stop its owner from signing in with a
 * magic code or a reset code (and the other way round).
 */
export type ThrottleDoor = 'password' | 'code';

/** Fixed windows like the rate limits; `take` counts a try, `refund` gives back one that succeeded. */
export interface FailureStore {
  take(bucket: string, windowMs: number, now: number): Promise<{ count: number; resetMs: number; key: string }>;
  refund(key: string): Promise<void>;
}

const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
const resetOf = (now: number, windowMs: number) => (windowOf(now, windowMs) + 1) * windowMs - now;

function memoryStore(): FailureStore {
  const counts = new Map<string, number>();
  let current = -1;
  return {
    take: (bucket, windowMs, now) => {
      const window = windowOf(now, windowMs);
      // Windows only move forward: drop every older one at once.
      if (window !== current) {
        for (const k of counts.keys()) if (!k.endsWith(`:${window}`)) counts.delete(k);
        current = window;
      }
      const key = `${bucket}:${window}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      return Promise.resolve({ count, resetMs: resetOf(now, windowMs), key });
    },
    refund: (key) => {
      const n = counts.get(key);
      if (n !== undefined) counts.set(key, Math.max(0, n - 1));
      return Promise.resolve();
    },
  };
}

// Decrement only a live key: a refund after the window ended must not leave a key without expiry.
const REFUND = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('decr', KEYS[1]) end return 0`;

/** Shared by every instance; fails open like the rate limits (a Redis outage must not lock everyone out). */
function redisStore(redis: Redis, prefix: string, log: FastifyBaseLogger): FailureStore {
  let failing = false;
  return {
    take: async (bucket, windowMs, now) => {
      const key = `${prefix}acct:${bucket}:${windowOf(now, windowMs)}`;
      try {
        const res = await redis.multi().incr(key).pexpire(key, windowMs * 2).exec();
        const [err, value] = res?.[0] ?? [new Error('empty MULTI reply'), null];
        if (err) throw err;
        failing = false;
        return { count: Number(value), resetMs: resetOf(now, windowMs), key };
      } catch (err) {
        if (!failing) log.warn({ err: (err as Error).message }, 'account throttle: redis failed; allowing tries until it answers');
        failing = true;
        return { count: 0, resetMs: resetOf(now, windowMs), key };
      }
    },
    refund: async (key) => {
      await redis.eval(REFUND, 1, key).catch(() => undefined);
    },
  };
}

/** The instance's store of failed tries (built once, in context.ts): in Redis when there is one, shared by every instance. */
export function createFailureStore(redis: Redis | null, prefix: string, log: FastifyBaseLogger): FailureStore {
  return redis ? redisStore(redis, prefix, log) : memoryStore();
}

/**
 * Runs one sign-in try for an account (its normalised email) under the per-account limit
 * (RATE_LIMIT_ACCOUNT failures per RATE_LIMIT_ACCOUNT_WINDOW_MS, per door). The try is counted
 * before it runs, so concurrent tries cannot all slip under the limit, and given back when it
 * does not end in a 401: only failures stay counted. Over the limit: 429 with Retry-After, before
 * the password or code is looked at. Unknown emails are counted alike, so a 429 reveals nothing.
 */
export async function throttled<T>(ctx: AppContext, reply: FastifyReply, door: ThrottleDoor, email: string, run: () => Promise<T>): Promise<T> {
  const { account: limit, accountWindowMs } = ctx.config.rateLimit;
  if (limit === 0) return run();
  const store = ctx.accountThrottle;
  const hit = await store.take(`${door}:${sha256(email)}`, accountWindowMs, ctx.clock.now().getTime());
  if (hit.count > limit) {
    reply.header('retry-after', String(Math.max(1, Math.ceil(hit.resetMs / 1000))));
    throw new AppError(429, 'rate_limited', 'Too many requests');
  }
  try {
    const result = await run();
    await store.refund(hit.key);
    return result;
  } catch (err) {
    if (!(err instanceof AppError && err.status === 401)) await store.refund(hit.key);
    throw err;
  }
}
