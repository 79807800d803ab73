import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import type { Actor } from '../lib/actor.js';
import { unauthorized } from '../lib/errors.js';
import { heldActor, resolveActor } from '../modules/auth/index.js';
import { routeOf } from './route.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every authenticated route; null on public routes. */
    actor: Actor | null;
  }
  interface FastifyContextConfig {
    /** The route needs no credential (public pages, login, health). */
    public?: boolean;
  }
}

/** Every route is authenticated unless its config says `public: true`. */
export default fp(
  (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    app.decorateRequest('actor', null);
    app.addHook('onRequest', (request, _reply, done) => {
      // Unknown routes fall through to the 404 handler; public routes skip the lookup.
      const route = routeOf(request);
      if (!route.url || route.config.public) return done();
      // A key or session held in memory is resolved without a promise; the rest is read.
      const held = heldActor(ctx, request);
      if (held !== undefined) {
        request.actor = held;
        return done(held ? undefined : unauthorized());
      }
      resolveActor(ctx, request).then(
        (actor) => {
          request.actor = actor;
          done(actor ? undefined : unauthorized());
        },
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    });
  },
  { name: 'auth' },
);
