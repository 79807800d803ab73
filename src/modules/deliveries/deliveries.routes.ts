import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { IdParams, Nullable, OkResponse, PagingQuery } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import * as service from './deliveries.service.js';
import { vapidKeys } from './senders/push.js';

const Delivery = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  topic: Type.String(),
  recipient: Type.String(),
  status: Type.String({ description: 'pending, sending, sent, failed, skipped or suppressed (test mode)' }),
  attempts: Type.Integer(),
  next_attempt_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  attempt_log: Type.Array(
    Type.Object({ attempt: Type.Integer(), outcome: Type.String(), status_code: Nullable(Type.Integer()), error: Nullable(Type.String()), duration_ms: Type.Integer(), at: Type.String() }),
  ),
}, { title: 'Delivery', description: 'An email, webhook, push or phone alert with its attempts' });
const PushSubscription = Type.Object({
  endpoint: Type.String({ maxLength: 2048, pattern: '^https?://' }),
  keys: Type.Object({ p256dh: Type.String({ minLength: 1, maxLength: 200 }), auth: Type.String({ minLength: 1, maxLength: 100 }) }),
});
const FeedUrl = Type.Object({ url: Type.String() });

export const deliveriesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/deliveries',
    {
      schema: {
        tags: ['Deliveries'],
        summary: 'Your emails, webhooks, pushes and phone alerts with their attempts',
        querystring: PagingQuery,
        response: { 200: Type.Object({ deliveries: Type.Array(Delivery), page: Type.Integer(), limit: Type.Integer(), has_more: Type.Boolean() }) },
      },
    },
    (request) => service.listDeliveries(ctx, actorOf(request), request.query),
  );
  app.post(
    '/v1/deliveries/:id/retry',
    { schema: { tags: ['Deliveries'], summary: 'Send a failed delivery again', params: IdParams, response: { 200: Type.Object({ id: Type.Integer(), status: Type.String() }) } } },
    (request) => service.retryDelivery(ctx, actorOf(request), request.params.id),
  );

  app.get(
    '/v1/push/public-key',
    { config: { public: true }, schema: { tags: ['Push'], summary: 'The VAPID public key for PushManager.subscribe', response: { 200: Type.Object({ public_key: Type.String() }) } } },
    async () => ({ public_key: (await vapidKeys(ctx)).publicKey }),
  );
  app.post(
    '/v1/push/subscriptions',
    { schema: { tags: ['Push'], summary: "Register this browser's push subscription", body: PushSubscription, response: { 201: OkResponse } } },
    async (request, reply) => reply.status(201).send(await service.subscribePush(ctx, actorOf(request), request.body)),
  );
  app.delete(
    '/v1/push/subscriptions',
    { schema: { tags: ['Push'], summary: 'Remove a push subscription', body: Type.Object({ endpoint: Type.String({ maxLength: 2048 }) }), response: { 200: OkResponse } } },
    (request) => service.unsubscribePush(ctx, actorOf(request), request.body.endpoint),
  );

  app.get('/v1/calendar', { schema: { tags: ['Calendar'], summary: 'Your private calendar feed link', response: { 200: FeedUrl } } }, (request) =>
    service.calendarFeedUrl(ctx, actorOf(request)),
  );
  app.post('/v1/calendar/rotate', { schema: { tags: ['Calendar'], summary: 'Revoke the feed link and make a new one', response: { 200: FeedUrl } } }, (request) =>
    service.rotateCalendarFeed(ctx, actorOf(request)),
  );
};
