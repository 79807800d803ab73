import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { CreateDeviceBody, CreatedDevice, Device, RevokedDevice, UpdateDeviceBody } from './devices.schemas.js';
import * as service from './devices.service.js';

const tags = ['Devices'];

export const devicesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/devices',
    { schema: { tags, summary: 'Register a tracker app (the token is shown once)', body: CreateDeviceBody, response: { 201: CreatedDevice } } },
    async (request, reply) => reply.status(201).send(await service.createDevice(ctx, actorOf(request), request.body)),
  );
  // GET /v1/devices (tracker apps beside field terminals) is modules/tracks'.
  app.patch(
    '/v1/devices/:id',
    { schema: { tags, summary: 'Rename, or move to another of your orgs', params: IdParams, body: UpdateDeviceBody, response: { 200: Device } } },
    (request) => service.updateDevice(ctx, actorOf(request), request.params.id, request.body),
  );
  app.delete(
    '/v1/devices/:id',
    { schema: { tags, summary: 'Revoke the token and switch the device off', params: IdParams, response: { 200: RevokedDevice } } },
    (request) => service.revokeDevice(ctx, actorOf(request), request.params.id),
  );
};
