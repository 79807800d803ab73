import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { AppError, notFound } from '../../lib/errors.js';
import { metricsOf } from './metrics.js';
import { routeOf } from '../../plugins/route.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether an Authorization header carries the metrics token (compared in constant time). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/**
 * GET /metrics (Prometheus text format) when METRICS_TOKEN is set, and the one histogram observe
 * per request. Registered with fastify-plugin semantics (`skip-override`) so the hook sees every
 * route of the app. Without METRICS_TOKEN nothing is added to the request path.
 */
export const metricsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const token = ctx.config.ops.metricsToken;

  if (token) {
    // The series is found by the route pattern and method strings Fastify holds (RequestHistogram).
    const histogram = metricsOf(ctx).httpDuration;
    app.addHook('onResponse', (request, reply, done) => {
      histogram.observe(request.method, routeOf(request).url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }

  app.get(
    '/metrics',
    {
      logLevel: 'warn',
      config: { public: true },
      schema: {
        tags: ['Operations'],
        summary: 'Prometheus metrics (text format); needs METRICS_TOKEN as a Bearer token, 404 when it is unset',
        response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) },
      },
    },
    async (request, reply) => {
      if (!token) throw notFound();
      if (!bearerMatches(request.headers.authorization, token)) throw new AppError(401, 'unauthorized', 'Unauthorized');
      const { registry } = metricsOf(ctx);
      const text = await registry.metrics();
      return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
    },
  );
};
(metricsRoutes as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
