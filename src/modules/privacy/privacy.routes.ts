import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { guardOf } from '../auth/index.js';
import { clearSessionCookie } from '../auth/index.js';
import { MemberParams } from '../orgs/index.js';
import { DeleteMeBody, DeletedMe, ExportResponse, MemberSignalsDeleted } from './privacy.schemas.js';
import { deleteMe, deleteMemberSignals, exportMe } from './privacy.service.js';

/** A person's data (issue #22): export, account deletion, and an owner erasing a member's signals. */
export const privacyRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/auth/me/export',
    { schema: { tags: ['Authentication'], summary: 'Everything Muster holds about you, as one JSON document (no secrets)', response: { 200: ExportResponse } } },
    async (request, reply) => {
      const actor = actorOf(request);
      const archive = await exportMe(ctx, actor);
      void reply.header('content-disposition', `attachment; filename="muster-export-${actor.userId}.json"`).header('cache-control', 'no-store');
      return archive;
    },
  );

  app.delete(
    '/v1/auth/me',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Delete your account (password, or an emailed sign-in code); 409 while you are the only owner of an org with other members',
        body: DeleteMeBody,
        response: { 200: DeletedMe },
      },
    },
    async (request, reply) => {
      const result = await deleteMe(ctx, guardOf(ctx, reply), actorOf(request), request.body);
      clearSessionCookie(reply, { secure: ctx.config.secureCookies });
      return result;
    },
  );

  app.delete(
    '/v1/orgs/:org_slug/members/:user_id/signals',
    {
      schema: {
        tags: ['Organizations'],
        summary: "Delete one person's signals in the org and their photos, on their request (owners)",
        params: MemberParams,
        response: { 200: MemberSignalsDeleted },
      },
    },
    (request) => deleteMemberSignals(ctx, actorOf(request), request.params.org_slug, request.params.user_id),
  );
};
