import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import {
  CreatedIntegration,
  CreateIntegrationBody,
  Integration,
  IntegrationEventList,
  IntegrationList,
  ListIntegrationsQuery,
  RevokedIntegration,
  UpdateIntegrationBody,
} from './integrations.schemas.js';
import * as service from './integrations.service.js';
import * as maintenance from './maintenance.js';
import { CreateWindowBody, DeletedWindow, ListWindowsQuery, MaintenanceWindow, UpdateWindowBody, WindowList, WindowParams } from './maintenance.schemas.js';
import { OrgParams } from '../orgs/index.js';

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
  app.get(
    '/v1/integrations/:id/events',
    { schema: { tags, summary: 'The last 100 payloads it received (7 days), with what came of each', params: IdParams, response: { 200: IntegrationEventList } } },
    (request) => service.integrationEvents(ctx, actorOf(request), request.params.id),
  );

  const windows = '/v1/orgs/:org_slug/maintenance-windows';
  app.post(
    windows,
    { schema: { tags, summary: 'Plan a maintenance window (admins and owners): covered integrations open and page nothing', params: OrgParams, body: CreateWindowBody, response: { 201: MaintenanceWindow } } },
    async (request, reply) => reply.status(201).send(await maintenance.createWindow(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(
    windows,
    { schema: { tags, summary: 'Current and upcoming maintenance windows (or those overlapping from..to)', params: OrgParams, querystring: ListWindowsQuery, response: { 200: WindowList } } },
    (request) => maintenance.listWindows(ctx, actorOf(request), request.params.org_slug, request.query),
  );
  app.patch(
    `${windows}/:id`,
    { schema: { tags, summary: 'Change a maintenance window (admins and owners)', params: WindowParams, body: UpdateWindowBody, response: { 200: MaintenanceWindow } } },
    (request) => maintenance.updateWindow(ctx, actorOf(request), request.params.org_slug, request.params.id, request.body),
  );
  app.delete(
    `${windows}/:id`,
    { schema: { tags, summary: 'End an active window now, or delete one not begun (admins and owners)', params: WindowParams, response: { 200: DeletedWindow } } },
    (request) => maintenance.deleteWindow(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
};
