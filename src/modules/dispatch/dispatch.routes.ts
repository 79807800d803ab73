import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { findVisible, Incident, IncidentParams, Timeline, TimelineEvent, timelineOf } from '../incidents/index.js';
import { OrgParams } from '../orgs/index.js';
import { acknowledge, reportProgress, undoArrival } from './acknowledge.js';
import { DispatchSettings, ProgressBody, UpdateDispatchSettings } from './dispatch.schemas.js';
import { nearestResponders } from './responders.js';
import { ResponderList, RespondersQuery } from './responders.schemas.js';
import { getDispatchSettings, updateDispatchSettings } from './settings.js';

const tags = ['Dispatch'];

export const dispatchRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  for (const base of ['/v1/tickets', '/v1/incidents']) {
    app.get(
      `${base}/:id/timeline`,
      { schema: { tags, summary: "An incident's timeline, oldest first", params: IncidentParams, response: { 200: Timeline } } },
      async (request) => {
        const incident = await findVisible(ctx, actorOf(request), request.params.id);
        return { events: await timelineOf(ctx, incident.id) };
      },
    );
    app.get(
      `${base}/:id/responders`,
      { schema: { tags, summary: 'Members with a live position, nearest first', params: IncidentParams, querystring: RespondersQuery, response: { 200: ResponderList } } },
      (request) => nearestResponders(ctx, actorOf(request), request.params.id, request.query),
    );
    app.post(
      `${base}/:id/acknowledge`,
      { schema: { tags, summary: 'Acknowledge (the assignee, anyone paged for it, or an org admin or owner); idempotent', params: IncidentParams, response: { 200: Incident } } },
      (request) => acknowledge(ctx, actorOf(request), request.params.id),
    );
    app.post(
      `${base}/:id/progress`,
      {
        config: { idempotent: 201 },
        schema: { tags, summary: 'En route or on scene, with the position (the assignee, or an org admin or owner)', params: IncidentParams, body: ProgressBody, response: { 201: TimelineEvent } },
      },
      async (request, reply) => reply.status(201).send(await reportProgress(ctx, actorOf(request), request.params.id, request.body, request.idempotency)),
    );
    app.post(
      `${base}/:id/arrival/undo`,
      {
        schema: { tags, summary: 'Take back an automatic arrival (on_scene from position): records on_scene_undone (the assignee, or an org admin or owner)', params: IncidentParams, response: { 201: TimelineEvent } },
      },
      async (request, reply) => reply.status(201).send(await undoArrival(ctx, actorOf(request), request.params.id)),
    );
  }
  app.get(
    '/v1/orgs/:org_slug/dispatch',
    { schema: { tags, summary: "The org's acknowledgement timeouts", params: OrgParams, response: { 200: DispatchSettings } } },
    (request) => getDispatchSettings(ctx, actorOf(request), request.params.org_slug),
  );
  app.patch(
    '/v1/orgs/:org_slug/dispatch',
    { schema: { tags, summary: 'Change the acknowledgement timeouts (org admins and owners)', params: OrgParams, body: UpdateDispatchSettings, response: { 200: DispatchSettings } } },
    (request) => updateDispatchSettings(ctx, actorOf(request), request.params.org_slug, request.body),
  );
};
