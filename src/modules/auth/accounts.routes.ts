import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { IdParams } from '../../lib/schemas.js';
import { AdminUpdateUserBody, AdminUser, CreateUserBody, toUser, UserResponse } from '../users/index.js';
import * as service from './accounts.service.js';

const tags = ['Users'];

/** An account's life: registration, and an instance admin's changes to it (plan, vouching for the address). */
export const accountsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/users',
    {
      config: { public: true },
      schema: { tags, summary: 'Register', body: CreateUserBody, response: { 201: UserResponse } },
    },
    async (request, reply) => reply.status(201).send(toUser(await service.registerUser(ctx, request.body))),
  );

  app.patch(
    '/v1/users/:id',
    {
      schema: {
        tags,
        summary: "Change a user's plan, or mark their email verified (instance admins)",
        params: IdParams,
        body: AdminUpdateUserBody,
        response: { 200: AdminUser },
      },
    },
    (request) => service.adminUpdateUser(ctx, actorOf(request), request.params.id, request.body),
  );
};
