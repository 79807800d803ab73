import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteFacts = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** request.routeOptions, read once per request (routeOf). */
    routeFacts: FastifyRequest['routeOptions'] | null;
  }
}

/** Gives every request the slot routeOf() fills; called once, before the hooks that read it. */
export function installRouteFacts(app: FastifyInstance): void {
  app.decorateRequest('routeFacts', null);
}

/**
 * The matched route's options (url pattern, config, schema) of a request. Fastify's
 * `request.routeOptions` is a getter that builds a new object of thirteen fields on every read, and
 * the request hooks (auth, rate limits, CSRF, body defaults, idempotency, metrics) read it about
 * seven times per request: here it is built once and kept on the request.
 */
export function routeOf(request: FastifyRequest): RouteFacts {
  return request.routeFacts ?? (request.routeFacts = request.routeOptions);
}

