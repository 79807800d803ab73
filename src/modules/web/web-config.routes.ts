import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { hasUsers } from '../users/index.js';

const WebConfig = Type.Object({
  map_tile_url: Type.String({ description: "tile URL template ({z}/{x}/{y}); '' for no tiles (MAP_TILE_URL)" }),
  map_attribution: Type.String({ description: 'attribution HTML for the tiles (MAP_TILE_ATTRIBUTION)' }),
  first_run: Type.Boolean({ description: 'no account exists yet: the dashboard opens on "Create account" (the first account is the admin)' }),
});

/** What the dashboard needs from the configuration before it draws anything: public, nothing secret. */
export const webConfigRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/web/config',
    {
      config: { public: true },
      schema: { tags: ['Operations'], summary: "The web pages' settings (map tiles)", response: { 200: WebConfig } },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-cache');
      return { map_tile_url: ctx.config.mapTileUrl, map_attribution: ctx.config.mapTileAttribution, first_run: !(await hasUsers(ctx)) };
    },
  );
};
