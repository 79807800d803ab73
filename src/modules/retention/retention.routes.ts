import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../plugins/auth.js';
import { OrgParams } from '../orgs/orgs.schemas.js';
import { RetentionResponse } from './retention.schemas.js';
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
