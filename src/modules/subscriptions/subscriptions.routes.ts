import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import * as service from './subscriptions.service.js';
import { CreateSubscriptionBody, DeletedSubscription, Subscription, SubscriptionList, SubscriptionParams, TestResult, UpdateSubscriptionBody } from './subscriptions.schemas.js';

const tags = ['Subscriptions'];
const base = '/v1/orgs/:org_slug/webhooks';

/** Incident subscriptions (issue #37): an org's webhooks for incident events, admins and owners only, in the key's mode. */
export const subscriptionsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    base,
    { schema: { tags, summary: 'Subscribe a URL to incident events (admins and owners; live or test per the key)', params: OrgParams, body: CreateSubscriptionBody, response: { 201: Subscription } } },
    async (request, reply) => reply.status(201).send(await service.createSubscription(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(base, { schema: { tags, summary: "The org's incident subscriptions in the key's mode (admins and owners)", params: OrgParams, response: { 200: SubscriptionList } } }, (request) =>
    service.listSubscriptions(ctx, actorOf(request), request.params.org_slug),
  );
  app.get(`${base}/:id`, { schema: { tags, summary: 'An incident subscription (admins and owners)', params: SubscriptionParams, response: { 200: Subscription } } }, (request) =>
    service.getSubscription(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
  app.patch(
    `${base}/:id`,
    { schema: { tags, summary: 'Change an incident subscription, or turn it on again (admins and owners)', params: SubscriptionParams, body: UpdateSubscriptionBody, response: { 200: Subscription } } },
    (request) => service.updateSubscription(ctx, actorOf(request), request.params.org_slug, request.params.id, request.body),
  );
  app.delete(`${base}/:id`, { schema: { tags, summary: 'Delete an incident subscription (admins and owners)', params: SubscriptionParams, response: { 200: DeletedSubscription } } }, (request) =>
    service.deleteSubscription(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
  app.post(
    `${base}/:id/test`,
    { schema: { tags, summary: 'Send a test event now and answer what the receiver answered (admins and owners)', params: SubscriptionParams, response: { 200: TestResult } } },
    (request) => service.testSubscription(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
};
