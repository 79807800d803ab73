import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import type { Actor } from '../lib/actor.js';
import { unauthorized } from '../lib/errors.js';
import { resolveActor } from '../modules/auth/credentials.js';

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
  async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    await app.register(cookie);
    app.decorateRequest('actor', null);
    app.addHook('onRequest', async (request) => {
      // Unknown routes fall through to the 404 handler; public routes skip the lookup.
      if (!request.routeOptions.url || request.routeOptions.config.public) return;
      request.actor = await resolveActor(ctx, request);
      if (!request.actor) throw unauthorized();
    });
  },
  { name: 'auth' },
);

/** The actor of an authenticated route (the hook has already refused anonymous calls). */
export function actorOf(request: { actor: Actor | null }): Actor {
  if (!request.actor) throw unauthorized();
  return request.actor;
}
