import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { listInboundEmails } from './inbound-log.service.js';
import { InboundEmailList, ListInboundQuery } from './inbound.schemas.js';

export const inboundEmailRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/inbound-emails',
    {
      schema: {
        tags: ['Integrations'],
        summary: 'Mail the inbound listener accepted (org admins): failed ones with their error, automatic mail kept as ignored',
        querystring: ListInboundQuery,
        response: { 200: InboundEmailList },
      },
    },
    (request) => listInboundEmails(ctx, actorOf(request), request.query),
  );
};
