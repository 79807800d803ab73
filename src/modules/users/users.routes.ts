import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { InstanceSettings, ListUsersQuery, ListUsersResponse, UpdateInstanceSettingsBody } from './users.schemas.js';
import { getInstanceSettings, updateInstanceSettings } from './instance-settings.js';
import * as service from './users.service.js';

const tags = ['Users'];

export const usersRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/users',
    { schema: { tags, summary: 'List users (instance admins)', querystring: ListUsersQuery, response: { 200: ListUsersResponse } } },
    (request) => service.listUsers(ctx, actorOf(request), request.query),
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
};
