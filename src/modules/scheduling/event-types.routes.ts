import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { TeamParams } from '../orgs/index.js';
import { CreateEventTypeBody, EventType, EventTypeList, EventTypeParams, UpdateEventTypeBody } from './event-types.schemas.js';
import * as service from './event-types.service.js';

const tags = ['Event types'];
const Deleted = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() });

export const eventTypesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/event-types',
    { schema: { tags, summary: 'Create a personal event type (free 3, starter 10)', body: CreateEventTypeBody, response: { 201: EventType } } },
    async (request, reply) => reply.status(201).send(await service.createPersonal(ctx, actorOf(request), request.body)),
  );
  app.post(
    '/v1/orgs/:org_slug/teams/:team_slug/event-types',
    { schema: { tags, summary: 'Create a team event type (team admins)', params: TeamParams, body: CreateEventTypeBody, response: { 201: EventType } } },
    async (request, reply) =>
      reply.status(201).send(await service.createForTeam(ctx, actorOf(request), request.params.org_slug, request.params.team_slug, request.body)),
  );
  app.get('/v1/event-types', { schema: { tags, summary: 'Your event types and those of your teams', response: { 200: EventTypeList } } }, (request) =>
    service.listEventTypes(ctx, actorOf(request)),
  );
  app.get('/v1/event-types/:id', { schema: { tags, summary: 'One event type', params: EventTypeParams, response: { 200: EventType } } }, (request) =>
    service.getEventType(ctx, actorOf(request), request.params.id),
  );
  app.patch(
    '/v1/event-types/:id',
    { schema: { tags, summary: 'Update an event type', params: EventTypeParams, body: UpdateEventTypeBody, response: { 200: EventType } } },
    (request) => service.updateEventType(ctx, actorOf(request), request.params.id, request.body),
  );
  app.delete(
    '/v1/event-types/:id',
    { schema: { tags, summary: 'Delete an event type (its bookings are kept)', params: EventTypeParams, response: { 200: Deleted } } },
    (request) => service.deleteEventType(ctx, actorOf(request), request.params.id),
  );
};
