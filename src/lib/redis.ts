import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * The one Redis connection of an instance (commands); subscribers open their own with `duplicate()`.
 * Commands fail fast while Redis is unreachable instead of queueing, so callers can degrade.
 */
export function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis error'));
  return redis;
}
