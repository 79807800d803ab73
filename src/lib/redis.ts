import type { FastifyBaseLogger } from 'fastify';
import type * as IORedis from 'ioredis';
import { lazyRequire } from './lazy-require.js';

type Redis = IORedis.Redis;
// ioredis (45 modules) loads with the first connection: an instance without REDIS_URL never needs
// it. A bad REDIS_URL is still refused at start, by loadConfig.
const ioredis = lazyRequire<typeof IORedis>('ioredis');

export type RedisStatus = 'ok' | 'down' | 'disabled';

/**
 * Reconnects forever, backing off to at most 2 s between tries: an instance outlives a Redis
 * restart and picks it up again without a restart of its own.
 */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/**
 * The one command connection of an instance; subscribers open their own with `subscriber()`.
 * Commands fail fast while Redis is unreachable instead of queueing, so callers can degrade
 * (streams to local delivery, beacon state to "not tracked") and recover when it returns.
 * Auto-pipelining: the commands of one turn of the event loop (concurrent requests' rate-limit
 * counts, beacon and event scripts) go out in one write and their replies come back in one read,
 * in order; a beacon load of 10 connections sent about 0.45 segments a beacon instead of 3
 * (bench/beacons-redis.bench.ts).
 */
export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const { Redis } = ioredis();
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false, retryStrategy, connectTimeout: 2_000, enableAutoPipelining: true });
  watch(redis, log, 'commands');
  return redis;
}

/**
 * A second connection for SUBSCRIBE (a subscribed connection takes no other commands). The caller
 * subscribes on every `ready`: ioredis' own resubscription leaves its promise unhandled, so a
 * connection lost again mid-resubscribe (Redis flapping) would crash the process.
 */
export function subscriberOf(redis: Redis, log: FastifyBaseLogger): Redis {
  const sub = redis.duplicate({ enableOfflineQueue: false, maxRetriesPerRequest: null, retryStrategy, autoResubscribe: false, enableAutoPipelining: false });
  watch(sub, log, 'subscriber');
  return sub;
}

/** Logs errors once per outage instead of once per retry. */
function watch(redis: Redis, log: FastifyBaseLogger, role: string): void {
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log.warn({ err: err.message, role }, 'redis unreachable: degrading until it returns');
  });
  redis.on('ready', () => {
    if (down) log.warn({ role }, 'redis is back');
    down = false;
  });
}

/** `ok` while the connection is ready, `down` otherwise, `disabled` without REDIS_URL. */
export function redisStatus(redis: Redis | null): RedisStatus {
  if (!redis) return 'disabled';
  return redis.status === 'ready' ? 'ok' : 'down';
}
