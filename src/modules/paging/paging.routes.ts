import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import * as policies from './policies.js';
import { Type } from '@sinclair/typebox';
import { verifyPhone } from './phone-proof.js';
import { Incident, IncidentParams } from '../incidents/index.js';
import { escalateByHand, myPages } from './walk.js';
import { Nullable } from '../../lib/schemas.js';
import { PageBody, PageResult, pageByHand } from './manual-page.js';
import { getRules, NotificationRules, PutNotificationRules, putRules } from './rules.js';
import { CreatePolicyBody, DeletedPolicy, Policy, PolicyList, PolicyParams, UpdatePolicyBody } from './policies.schemas.js';

const tags = ['Paging'];
const VerifyPhoneBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$', description: 'the six digits from the SMS' }) });
const VerifiedPhone = Type.Object({ phone: Type.String(), phone_verified: Type.Boolean() }, { title: 'VerifiedPhone' });
const base = '/v1/orgs/:org_slug/escalation-policies';
const MyPages = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          incident_id: Type.Integer(),
          org_id: Type.Integer(),
          title: Type.String(),
          priority: Type.String(),
          location_name: Nullable(Type.String()),
          paged_at: Type.String({ description: 'when you were last paged for it' }),
          level: Nullable(Type.Integer({ description: 'the highest level of its policy that paged you; null when paged by hand only' })),
        },
        { title: 'MyPage' },
      ),
    ),
  },
  { title: 'MyPages' },
);

/** Escalation policies, personal notification rules and phone proof (issue #36). */
export const pagingRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    base,
    { schema: { tags, summary: 'Create an escalation policy (admins and owners)', params: OrgParams, body: CreatePolicyBody, response: { 201: Policy } } },
    async (request, reply) => reply.status(201).send(await policies.createPolicy(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(base, { schema: { tags, summary: "The org's escalation policies", params: OrgParams, response: { 200: PolicyList } } }, (request) =>
    policies.listPolicies(ctx, actorOf(request), request.params.org_slug),
  );
  app.get(`${base}/:id`, { schema: { tags, summary: 'An escalation policy', params: PolicyParams, response: { 200: Policy } } }, (request) =>
    policies.getPolicy(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
  app.patch(
    `${base}/:id`,
    { schema: { tags, summary: 'Change an escalation policy; running escalations keep their copy (admins and owners)', params: PolicyParams, body: UpdatePolicyBody, response: { 200: Policy } } },
    (request) => policies.updatePolicy(ctx, actorOf(request), request.params.org_slug, request.params.id, request.body),
  );
  app.delete(
    `${base}/:id`,
    { schema: { tags, summary: 'Delete an escalation policy; 409 while an integration or the org default uses it (admins and owners)', params: PolicyParams, response: { 200: DeletedPolicy } } },
    (request) => policies.deletePolicy(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );

  app.get('/v1/auth/me/notification-rules', { schema: { tags, summary: 'How you are reached when paged (the defaults until you set yours)', response: { 200: NotificationRules } } }, (request) =>
    getRules(ctx, actorOf(request)),
  );
  app.put(
    '/v1/auth/me/notification-rules',
    { schema: { tags, summary: 'Replace your notification rules', body: PutNotificationRules, response: { 200: NotificationRules } } },
    (request) => putRules(ctx, actorOf(request), request.body),
  );

  app.post(
    '/v1/auth/me/phone/verify',
    { schema: { tags: ['Authentication'], summary: 'Prove your phone number with the code it received by SMS', body: VerifyPhoneBody, response: { 200: VerifiedPhone } } },
    (request) => verifyPhone(ctx, actorOf(request), request.body.code),
  );

  app.get(
    '/v1/auth/me/pages',
    { schema: { tags, summary: 'The open, unacknowledged incidents you were paged for, newest page first (at most 50)', response: { 200: MyPages } } },
    (request) => myPages(ctx, actorOf(request)),
  );

  for (const base of ['/v1/tickets', '/v1/incidents']) {
    app.post(
      `${base}/:id/escalate`,
      { schema: { tags, summary: "Fire the next level of the incident's escalation policy now (admins, owners, the assignee)", params: IncidentParams, response: { 200: Incident } } },
      (request) => escalateByHand(ctx, actorOf(request), request.params.id),
    );
    app.post(
      `${base}/:id/page`,
      { schema: { tags, summary: 'Page more responders by hand: members, or whoever is on call in a schedule (admins, owners, the assignee)', params: IncidentParams, body: PageBody, response: { 201: PageResult } } },
      async (request, reply) => reply.status(201).send(await pageByHand(ctx, actorOf(request), request.params.id, request.body)),
    );
  }
};
