import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { AppError } from '../lib/errors.js';
import { sessionTokenOf } from '../modules/auth/index.js';
import { routeOf } from './route.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Public routes that start or end a session: checked too (login CSRF, forced logout). */
const SESSION_ROUTES = new Set(['/v1/auth/login', '/v1/auth/magic-link/verify', '/v1/auth/logout', '/v1/auth/password-reset/verify']);

export const crossSiteRefused = () => new AppError(403, 'forbidden', 'Cross-site request refused');

/**
 * Whether a browser sent this request from Muster's own origin. Sec-Fetch-Site decides when
 * present (`same-origin`, or `none` for a user's own navigation); else Origin must be PUBLIC_URL's
 * origin. A request with neither header is not from a browser that could be tricked: allowed.
 */
export function sameOrigin(request: FastifyRequest, ownOrigin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== '') return site === 'same-origin' || site === 'none';
  const origin = request.headers.origin;
  if (origin === undefined || origin === '') return true;
  return origin === ownOrigin;
}

/**
 * CSRF: an unsafe request that a cookie authenticates must come from Muster's own origin, or it
 * is 403. Requests with an API key carry no ambient credential and are never checked; public
 * routes (booking, token links) ignore the cookie, so a cross-site post there gains nothing.
 * Runs after authentication (it needs to know how the caller was authenticated).
 */
export default fp(
  (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    const ownOrigin = new URL(ctx.config.publicUrl).origin;
    // Synchronous: most requests (reads, or writes with a key) are decided by a comparison or two.
    app.addHook('onRequest', (request, _reply, done) => {
      if (!UNSAFE.has(request.method)) return done();
      const url = routeOf(request).url;
      const byCookie = request.actor?.via === 'session';
      const sessionRoute = url !== undefined && SESSION_ROUTES.has(url) && (url !== '/v1/auth/logout' || sessionTokenOf(request) !== undefined);
      if (!byCookie && !sessionRoute) return done();
      done(sameOrigin(request, ownOrigin) ? undefined : crossSiteRefused());
    });
  },
  { name: 'csrf', dependencies: ['auth'] },
);
