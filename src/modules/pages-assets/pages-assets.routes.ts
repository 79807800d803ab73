import type { FastifyPluginAsync } from 'fastify';
import { PAGES_CSS, PAGES_CSS_PATH } from './pages-css.js';

/** The server-rendered pages' stylesheet (public, cached for a day). */
export const pagesAssetsRoutes: FastifyPluginAsync = async (app) => {
  app.get(PAGES_CSS_PATH, { config: { public: true }, schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('text/css; charset=utf-8').send(PAGES_CSS),
  );
};
