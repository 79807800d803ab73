import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../plugins/auth.js';
import {
  AdminUpdateUserBody,
  AdminUser,
  CreateUserBody,
  InstanceSettings,
  ListUsersQuery,
  ListUsersResponse,
  PublicProfile,
  SlugParams,
  UpdateInstanceSettingsBody,
  UserResponse,
} from './users.schemas.js';
import { getInstanceSettings, updateInstanceSettings } from './instance-settings.js';
import * as service from './users.service.js';

const tags = ['Users'];

export const usersRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/users',
    {
      config: { public: true },
      schema: { tags, summary: 'Register', body: CreateUserBody, response: { 201: UserResponse } },
    },
    async (request, reply) => reply.status(201).send(service.toUser(await service.registerUser(ctx, request.body))),
  );

  app.get(
    '/v1/users',
    { schema: { tags, summary: 'List users (instance admins)', querystring: ListUsersQuery, response: { 200: ListUsersResponse } } },
    (request) => service.listUsers(ctx, actorOf(request), request.query),
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

  app.get(
    '/v1/admin/settings',
    { schema: { tags, summary: "The instance's settings: the default plan of new registrations (instance admins)", response: { 200: InstanceSettings } } },
    (request) => getInstanceSettings(ctx, actorOf(request)),
  );
  app.patch(
    '/v1/admin/settings',
    { schema: { tags, summary: 'Change the default plan of new registrations (instance admins)', body: UpdateInstanceSettingsBody, response: { 200: InstanceSettings } } },
    (request) => updateInstanceSettings(ctx, actorOf(request), request.body),
  );

  app.get(
    '/v1/u/:slug',
    {
      config: { public: true },
      schema: { tags, summary: 'Public profile', params: SlugParams, response: { 200: PublicProfile } },
    },
    (request) => service.publicProfile(ctx, request.params.slug),
  );
};
