import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { CreateApiKeyBody, CreatedApiKey, ListApiKeysResponse, RevokedApiKey } from './api-keys.schemas.js';
import * as service from './api-keys.service.js';

const tags = ['API keys'];

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/api-keys',
    { schema: { tags, summary: 'Create a key (the secret is shown once)', body: CreateApiKeyBody, response: { 201: CreatedApiKey } } },
    async (request, reply) => reply.status(201).send(await service.createApiKey(ctx, actorOf(request), request.body)),
  );

  app.get('/v1/api-keys', { schema: { tags, summary: 'List active keys', response: { 200: ListApiKeysResponse } } }, (request) =>
    service.listApiKeys(ctx, actorOf(request)),
  );

  app.delete(
    '/v1/api-keys/:id',
    { schema: { tags, summary: 'Revoke a key', params: IdParams, response: { 200: RevokedApiKey } } },
    (request) => service.revokeApiKey(ctx, actorOf(request), request.params.id),
  );
};
