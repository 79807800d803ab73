import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { AppError } from '../lib/errors.js';
import { memoryRateLimitStore, redisRateLimitStore, type RateLimitHit, type RateLimitStore } from '../lib/rate-limit-store.js';
import { routeOf } from './route.js';

export type RateLimitGroup = 'api' | 'auth' | 'booking' | 'public' | 'device';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts one request against `bucket` with `group`'s limit; 429 when over it (thrown at once, or
     * the promise's rejection). Undefined when it was counted in this process; a promise when the
     * counters are in Redis. For routes that count themselves.
     */
    rateLimitHit(reply: FastifyReply, group: RateLimitGroup, bucket: string): Promise<void> | undefined;
  }
  interface FastifyContextConfig {
    /** The route counts its own requests with rateLimitHit (tracker apps: per device, once the token is known). */
    ownRateLimit?: boolean;
  }
}

/** Sign-in and sign-up: the strict per-IP group. */
const AUTH_ROUTES = new Set([
  'POST /v1/auth/login',
  'POST /v1/auth/magic-link',
  'POST /v1/auth/magic-link/verify',
  'POST /v1/users',
  'POST /v1/auth/password-reset',
  'POST /v1/auth/password-reset/verify',
  'POST /v1/auth/verify-email',
  'POST /v1/auth/verify-email/resend',
]);
const BOOKING_PREFIXES = ['/v1/book/', '/v1/assign/', '/book/'];
const UNLIMITED = new Set(['/healthz', '/readyz']);

/**
 * The group a request counts against, or null when it is not limited: health checks, live streams
 * (one long request each), unknown routes, and public GETs outside /v1 (pages, assets, uploads, feeds).
 */
export function rateLimitGroup(request: FastifyRequest): RateLimitGroup | null {
  // Decided by the route (its pattern and config) and the method alone: once per route and method,
  // kept by the route's config object (a route may answer several methods with one config).
  const route = routeOf(request);
  const config = route.config as object | undefined;
  if (config === undefined) return groupOf(request.method, route);
  let byMethod = groups.get(config);
  if (byMethod === undefined) groups.set(config, (byMethod = new Map<string, RateLimitGroup | null>()));
  let group = byMethod.get(request.method);
  if (group === undefined) byMethod.set(request.method, (group = groupOf(request.method, route)));
  return group;
}
const groups = new WeakMap<object, Map<string, RateLimitGroup | null>>();

function groupOf(method: string, route: FastifyRequest['routeOptions']): RateLimitGroup | null {
  const url = route.url;
  if (!url || UNLIMITED.has(url) || url.endsWith('/stream') || route.config.ownRateLimit) return null;
  if (AUTH_ROUTES.has(`${method} ${url}`)) return 'auth';
  if (!route.config.public) return 'api';
  if (method === 'POST' && BOOKING_PREFIXES.some((p) => url.startsWith(p))) return 'booking';
  if (method === 'GET' && !url.startsWith('/v1/')) return null;
  return 'public';
}

/** Credentials count per user and mode (every key and the session of one user share it); the rest per client IP. */
function bucketOf(request: FastifyRequest, group: RateLimitGroup): string {
  const a = request.actor;
  return group === 'api' && a ? `api:user:${a.userId}:${a.mode}` : `${group}:ip:${request.ip}`;
}

/**
 * Fixed-window rate limits (config.rateLimit), counted after authentication so a key's requests
 * are charged to its user and mode. Limited responses carry RateLimit-Limit, -Remaining and
 * -Reset; a refused one is 429 `rate_limited` with an integer Retry-After. Counters live in
 * Redis when REDIS_URL is set (shared by every instance), else in this process.
 */
export default fp(
  (app: FastifyInstance, { ctx, store }: { ctx: AppContext; store?: RateLimitStore }) => {
    const counters = store ?? (ctx.redis ? redisRateLimitStore(ctx.redis, ctx.config.redisPrefix, ctx.log) : memoryRateLimitStore());
    const { windowMs } = ctx.config.rateLimit;

    /** Sets the headers of a counted request; the 429 error when it is over the limit. */
    const answer = (reply: FastifyReply, limit: number, { count, resetMs }: RateLimitHit): AppError | undefined => {
      const reset = Math.max(1, Math.ceil(resetMs / 1000));
      reply.header('ratelimit-limit', String(limit));
      reply.header('ratelimit-remaining', String(Math.max(0, limit - count)));
      reply.header('ratelimit-reset', String(reset));
      if (count <= limit) return undefined;
      reply.header('retry-after', String(reset));
      return new AppError(429, 'rate_limited', 'Too many requests');
    };
    // Synchronous when the store knows the count (no promise per request); else awaits Redis.
    const hit = (reply: FastifyReply, group: RateLimitGroup, bucket: string): Promise<void> | undefined => {
      const limit = ctx.config.rateLimit[group];
      if (limit === 0) return undefined;
      const counted = counters.hit(bucket, windowMs, ctx.clock.nowMs(), limit);
      if (!(counted instanceof Promise)) {
        const refused = answer(reply, limit, counted);
        if (refused) throw refused;
        return undefined;
      }
      return counted.then((c) => {
        const refused = answer(reply, limit, c);
        if (refused) throw refused;
      });
    };
    app.decorate('rateLimitHit', hit);

    app.addHook('onRequest', (request, reply, done) => {
      const group = rateLimitGroup(request);
      const limit = group ? ctx.config.rateLimit[group] : 0;
      if (!group || limit === 0) return done();
      const counted = counters.hit(bucketOf(request, group), windowMs, ctx.clock.nowMs(), limit);
      if (!(counted instanceof Promise)) return done(answer(reply, limit, counted));
      counted.then(
        (c) => done(answer(reply, limit, c)),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    });
  },
  { name: 'rate-limit', dependencies: ['auth'] },
);
