import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { ErrorResponse } from '../lib/schemas.js';

/**
 * OpenAPI 3.1 generated from the route schemas. Every route with a schema gets the shared error
 * body for 4xx/5xx, and public routes are marked as needing no credential.
 */
export default fp(
  async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    app.addSchema(ErrorResponse);
    app.addHook('onRoute', (route) => {
      // The interactive docs page and its assets are public.
      if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true };
      if (!route.schema || route.schema.hide) return;
      const schema: FastifySchema & { security?: unknown } = route.schema;
      const response = (schema.response ?? {}) as Record<string, unknown>;
      response['4xx'] ??= { $ref: 'ErrorResponse#' };
      response['5xx'] ??= { $ref: 'ErrorResponse#' };
      schema.response = response;
      if (route.config?.public) schema.security = [];
    });

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Muster API',
          version: '1.0.0',
          description:
            'Signals, incidents and assignments for field teams. Authenticate with an API key (`x-api-key` or `Authorization: Bearer`) or the `muster_session` cookie. `sk_test_` keys see only test data.',
        },
        servers: [{ url: ctx.config.publicUrl }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
            bearer: { type: 'http', scheme: 'bearer' },
            session: { type: 'apiKey', in: 'cookie', name: 'muster_session' },
          },
        },
        security: [{ apiKey: [] }, { bearer: [] }, { session: [] }],
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

    app.get('/v1/openapi.json', { schema: { hide: true }, config: { public: true } }, () => app.swagger());
  },
  { name: 'openapi' },
);
