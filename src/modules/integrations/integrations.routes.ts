import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import {
  CreatedIntegration,
  CreateIntegrationBody,
  Integration,
  IntegrationList,
  ListIntegrationsQuery,
  RevokedIntegration,
  UpdateIntegrationBody,
} from './integrations.schemas.js';
import * as service from './integrations.service.js';

const tags = ['Integrations'];

export const integrationsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/integrations',
    { schema: { tags, summary: 'Create an incident source (org admins; the key is shown once)', body: CreateIntegrationBody, response: { 201: CreatedIntegration } } },
    async (request, reply) => reply.status(201).send(await service.createIntegration(ctx, actorOf(request), request.body)),
  );
  app.get(
    '/v1/integrations',
    { schema: { tags, summary: 'Integrations of the orgs you administer (without keys)', querystring: ListIntegrationsQuery, response: { 200: IntegrationList } } },
    (request) => service.listIntegrations(ctx, actorOf(request), request.query.org_id),
  );
  app.patch(
    '/v1/integrations/:id',
    { schema: { tags, summary: 'Change name, default assignee, priority mapping or allowed senders', params: IdParams, body: UpdateIntegrationBody, response: { 200: Integration } } },
    (request) => service.updateIntegration(ctx, actorOf(request), request.params.id, request.body),
  );
  app.delete(
    '/v1/integrations/:id',
    { schema: { tags, summary: 'Revoke (its URLs answer 401, its mail bounces)', params: IdParams, response: { 200: RevokedIntegration } } },
    (request) => service.revokeIntegration(ctx, actorOf(request), request.params.id),
  );
};
