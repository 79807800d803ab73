import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';

const tags = ['Operations'];
const Health = Type.Object({ status: Type.String() });
const Ready = Type.Object({ status: Type.String(), database: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/healthz', { config: { public: true }, schema: { tags, summary: 'Liveness: the process answers', response: { 200: Health } } }, () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    { config: { public: true }, schema: { tags, summary: 'Readiness: the database answers', response: { 200: Ready } } },
    async (request) => {
      try {
        await ctx.database.ping();
        return { status: 'ready', database: ctx.database.dialect };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        throw new AppError(503, 'not_ready', 'Database unavailable');
      }
    },
  );
};
