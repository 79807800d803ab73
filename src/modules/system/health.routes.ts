import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { redisStatus } from '../../lib/redis.js';

const tags = ['Operations'];
const RedisState = Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('disabled')], {
  description: '`disabled` without REDIS_URL; `down` while Redis is unreachable: the instance keeps serving, streams reach only its own clients',
});
const Health = Type.Object({ status: Type.String(), redis: RedisState });
const Ready = Type.Object({ status: Type.String(), database: Type.String(), redis: RedisState });

export const healthRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // Probes arrive every few seconds from load balancers and orchestrators: logged only when they fail.
  app.get('/healthz', { logLevel: 'warn', config: { public: true }, schema: { tags, summary: 'Liveness: the process answers', response: { 200: Health } } }, () => ({
    status: 'ok',
    redis: redisStatus(ctx.redis),
  }));

  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      config: { public: true },
      schema: { tags, summary: 'Readiness: the database answers (Redis being down is reported, not fatal)', response: { 200: Ready } },
    },
    async (request) => {
      try {
        await ctx.database.ping();
        return { status: 'ready', database: ctx.database.dialect, redis: redisStatus(ctx.redis) };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        throw new AppError(503, 'not_ready', 'Database unavailable');
      }
    },
  );
};
