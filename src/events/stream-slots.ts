import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/**
 * The cap on concurrent live streams per user (STREAM_LIMIT_PER_USER). A stream takes a slot
 * when it opens and gives it back when it closes.
 */
export interface StreamSlots {
  /** One of the user's slots, as the function that gives it back; undefined when all are taken. */
  acquire(userId: number): Promise<(() => void) | undefined>;
  /** Gives back every slot this instance holds (shutdown). */
  close(): Promise<void>;
}

/** Streams of this instance only (no Redis). A limit of 0 means no cap. */
export function memoryStreamSlots(limit: number): StreamSlots {
  const open = new Map<number, number>();
  return {
    acquire: (userId) => {
      const n = open.get(userId) ?? 0;
      if (limit > 0 && n >= limit) return Promise.resolve(undefined);
      open.set(userId, n + 1);
      let held = true;
      return Promise.resolve(() => {
        if (!held) return;
        held = false;
        const left = (open.get(userId) ?? 1) - 1;
        if (left > 0) open.set(userId, left);
        else open.delete(userId);
      });
    },
    close: () => {
      open.clear();
      return Promise.resolve();
    },
  };
}

/**
 * Drops expired entries, counts, and adds one entry when under the limit: one atomic step, so
 * concurrent opens on any number of instances never pass the limit together.
 */
const ACQUIRE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

type AcquireCommand = (key: string, now: string, expiry: string, limit: string, member: string, ttl: string) => Promise<number>;

export interface RedisStreamSlotsOptions {
  prefix: string;
  limit: number;
  /** An entry not refreshed for this long is taken as a stream of a dead instance and no longer counts. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * Streams counted across every instance: one sorted set per user in Redis whose members are this
 * instance's open streams, scored by when they expire. Each instance refreshes its own entries
 * every third of the TTL, so the streams of an instance that died stop counting within the TTL.
 * While Redis is unreachable, a stream is counted against the limit on this instance only (and
 * enters the shared count at the next refresh once Redis is back).
 */
export function redisStreamSlots(redis: Redis, log: FastifyBaseLogger, options: RedisStreamSlotsOptions): StreamSlots {
  const ttlMs = options.ttlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const instance = randomUUID();
  const local = memoryStreamSlots(options.limit);
  /** This instance's entries: member -> user key. */
  const held = new Map<string, string>();
  let seq = 0;
  redis.defineCommand('musterStreamSlot', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
  const acquireCommand = (redis as unknown as { musterStreamSlot: AcquireCommand }).musterStreamSlot.bind(redis);
  const keyOf = (userId: number) => `${options.prefix}streams:${userId}`;
  const warn = (what: string) => (err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, what);

  const refresh = () => {
    if (held.size === 0) return;
    const expiry = String(now() + ttlMs);
    const pipeline = redis.pipeline();
    for (const [member, key] of held) pipeline.zadd(key, expiry, member).pexpire(key, ttlMs);
    pipeline.exec().catch(warn('redis refresh of stream slots failed'));
  };
  const timer = setInterval(refresh, Math.max(1, Math.floor(ttlMs / 3)));
  timer.unref();

  return {
    acquire: async (userId) => {
      if (options.limit === 0) return () => {};
      // This instance's own count first: it never lets more through than the limit, Redis or not.
      const releaseLocal = await local.acquire(userId);
      if (!releaseLocal) return undefined;
      const key = keyOf(userId);
      const member = `${instance}:${++seq}`;
      const t = now();
      try {
        const ok = await acquireCommand(key, String(t), String(t + ttlMs), String(options.limit), member, String(ttlMs));
        if (ok !== 1) {
          releaseLocal();
          return undefined;
        }
      } catch (err) {
        warn('redis stream slot check failed: counting this instance only')(err);
      }
      held.set(member, key);
      return () => {
        if (!held.delete(member)) return;
        releaseLocal();
        redis.zrem(key, member).catch(warn('redis release of a stream slot failed: it expires by itself'));
      };
    },
    close: async () => {
      clearInterval(timer);
      const entries = [...held];
      held.clear();
      if (entries.length === 0) return;
      const pipeline = redis.pipeline();
      for (const [member, key] of entries) pipeline.zrem(key, member);
      await pipeline.exec().catch(warn('redis release of stream slots at shutdown failed: they expire by themselves'));
    },
  };
}
