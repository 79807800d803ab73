import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../plugins/auth.js';
import { findVisible } from '../incidents/incidents.service.js';
import { IncidentParams } from '../incidents/incidents.schemas.js';
import { Timeline } from './timeline.schemas.js';
import { timelineOf } from './timeline.js';

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
  }
};
