import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { acceptInviteLink, describeInvite } from './invites.service.js';
import { RoleSchema } from './orgs.schemas.js';

const tags = ['Organizations'];

// base64url of 24 random bytes is 32 characters; a little slack, nothing longer is ever ours.
const TokenParams = Type.Object({ token: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) });

const InviteView = Type.Object({
  org: Type.Object({ name: Type.String(), slug: Type.String() }),
  email: Type.String(),
  role: RoleSchema,
  expires_at: Type.String(),
});

const Accepted = Type.Object({
  org: Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() }),
  role: RoleSchema,
  email_verified: Type.Boolean(),
});

/** The API behind an invite email's link `{PUBLIC_URL}/invites/<token>` (its page comes with the web front end). */
export const invitesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/invites/:token',
    { config: { public: true }, schema: { tags, summary: 'What an invite link offers (org, email, role)', params: TokenParams, response: { 200: InviteView } } },
    async (request, reply) => {
      // The token is a secret in the path: keep it out of caches and referrers.
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      return describeInvite(ctx, request.params.token);
    },
  );

  app.post(
    '/v1/invites/:token/accept',
    {
      schema: {
        tags,
        summary: 'Accept an invite as the signed-in user of the invited address (proves it)',
        params: TokenParams,
        response: { 200: Accepted },
      },
    },
    (request) => acceptInviteLink(ctx, actorOf(request), request.params.token),
  );
};
