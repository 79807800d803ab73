import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { CHANNELS } from '../../events/channels.js';
import { eventStream, IncidentStreamEvent, SignalStreamEvent } from './catalog.js';
import { openLiveStream } from './live-stream.js';

/** The live streams (Server-Sent Events), one per channel of the event catalog. */
export const streamsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  for (const base of ['/v1/tickets', '/v1/incidents']) {
    app.get(
      `${base}/stream`,
      { schema: { tags: ['Incidents'], summary: 'Live incident events (Server-Sent Events)', response: { 200: eventStream(IncidentStreamEvent) } } },
      async (request, reply) => openLiveStream(ctx, request, reply, CHANNELS.incidents),
    );
  }
  app.get(
    '/v1/signals/stream',
    { schema: { tags: ['Signals'], summary: 'Live signals of your orgs (Server-Sent Events)', response: { 200: eventStream(SignalStreamEvent) } } },
    async (request, reply) => openLiveStream(ctx, request, reply, CHANNELS.signals),
  );
};
