import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import { RetentionResponse } from '../orgs/index.js';
import { getRetention } from './retention.service.js';

/** GET /v1/orgs/:org_slug/retention; it is set through PATCH /v1/orgs/:org_slug {retention}. */
export const retentionRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/orgs/:org_slug/retention',
    {
      schema: {
        tags: ['Organizations'],
        summary: "How long the org keeps signals, audit entries, uploads and closed incidents (members); owners change it with PATCH /v1/orgs/:org_slug {retention}",
        params: OrgParams,
        response: { 200: RetentionResponse },
      },
    },
    (request) => getRetention(ctx, actorOf(request), request.params.org_slug),
  );
};
