import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { AllDevices, TrackParams, TrackQuery, TrackResponse } from './tracks.schemas.js';
import * as service from './tracks.service.js';

const tags = ['Devices'];

/** GET /v1/devices (tracker apps and field terminals) and GET /v1/devices/:id/track. */
export const tracksRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/devices',
    { schema: { tags, summary: 'Your tracker apps and field terminals (an org admin: all of the org), with last position', response: { 200: AllDevices } } },
    (request) => service.listAllDevices(ctx, actorOf(request)),
  );
  app.get(
    '/v1/devices/:id/track',
    {
      schema: {
        tags,
        summary: "A device's stored track (orgs that keep tracks): JSON, or GeoJSON with Accept: application/geo+json",
        params: TrackParams,
        querystring: TrackQuery,
        response: {
          200: {
            description: 'The track, thinned to at most 5,000 points with every stop kept',
            content: { 'application/json': { schema: TrackResponse }, 'application/geo+json': { schema: Type.Object({}, { additionalProperties: true }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const track = await service.getTrack(ctx, actorOf(request), request.params.id, request.query);
      if (/application\/geo\+json/.test(request.headers.accept ?? '')) {
        return reply.type('application/geo+json').send(JSON.stringify(service.trackGeoJson(track)));
      }
      return track;
    },
  );
};
