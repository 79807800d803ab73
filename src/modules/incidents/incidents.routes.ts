import { notFoundPage } from '../pages-assets/index.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { actorOf } from '../../lib/actor.js';
import {
  CreateIncidentBody,
  CreateReplyBody,
  DeletedIncident,
  Incident,
  IncidentList,
  IncidentParams,
  ListIncidentsQuery,
  Reply,
  ReplyList,
  StatusPage,
  TokenParams,
  UpdateIncidentBody,
} from './incidents.schemas.js';
import * as incidents from './incidents.service.js';
import * as replies from './replies.service.js';
import { renderStatusPage } from './status-page.js';

const tags = ['Incidents'];
const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * A page built anew is answered like any other object (serialised by the route's schema, after the
 * preSerialization hooks); its serialised bytes are then handed to the list cache here.
 */
const pendingPages = new WeakMap<FastifyRequest, (serialised: string) => Buffer>();
const keepListPage: onSendHookHandler = (request, reply, payload, done) => {
  const keep = pendingPages.get(request);
  if (keep !== undefined && reply.statusCode === 200 && typeof payload === 'string') return done(null, keep(payload));
  done(null, payload);
};

/** Status pages hold a secret link: never cached, never indexed, never leaked through Referer. */
function privatePage(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('x-robots-tag', 'noindex, nofollow');
}

export const incidentsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // `/v1/tickets` and `/v1/incidents` are the same resource with the same bodies.
  for (const base of ['/v1/tickets', '/v1/incidents']) {
    app.post(base, { config: { idempotent: 201 }, schema: { tags, summary: 'Create an incident', body: CreateIncidentBody, response: { 200: Incident, 201: Incident } } }, async (request, reply) => {
      const { view, created } = await incidents.createIncident(ctx, actorOf(request), request.body, request.idempotency);
      // A repeat of an open incident's source_ref answers that incident with 200 (dedup.ts).
      return reply.status(created ? 201 : 200).send(view);
    },
    );
    app.get(
      base,
      { schema: { tags, summary: 'List incidents, newest first', querystring: ListIncidentsQuery, response: { 200: IncidentList } }, onSend: keepListPage },
      async (request, reply) => {
        const page = await incidents.listIncidents(ctx, actorOf(request), request.query);
        // A page the list cache holds goes out as its bytes (the type provider types send() as the schema's object).
        if (page.body) return reply.type(JSON_UTF8).send(page.body as never);
        pendingPages.set(request, page.keep);
        return page.view;
      },
    );
    app.get(`${base}/:id`, { schema: { tags, summary: 'One incident', params: IncidentParams, response: { 200: Incident } } }, (request) =>
      incidents.getIncident(ctx, actorOf(request), request.params.id),
    );
    app.patch(
      `${base}/:id`,
      { schema: { tags, summary: 'Change status, priority, description or assignee', params: IncidentParams, body: UpdateIncidentBody, response: { 200: Incident } } },
      (request) => incidents.updateIncident(ctx, actorOf(request), request.params.id, request.body),
    );
    app.delete(
      `${base}/:id`,
      { schema: { tags, summary: 'Delete an incident and its replies (org admins)', params: IncidentParams, response: { 200: DeletedIncident } } },
      (request) => incidents.deleteIncident(ctx, actorOf(request), request.params.id),
    );
    app.get(`${base}/:id/replies`, { schema: { tags, summary: 'Replies, oldest first', params: IncidentParams, response: { 200: ReplyList } } }, (request) =>
      replies.listReplies(ctx, actorOf(request), request.params.id),
    );
    app.post(
      `${base}/:id/replies`,
      { schema: { tags, summary: 'Reply (internal unless public)', params: IncidentParams, body: CreateReplyBody, response: { 201: Reply } } },
      async (request, reply) => reply.status(201).send(await replies.addReply(ctx, actorOf(request), request.params.id, request.body)),
    );
    app.get(
      `${base}/status/:token`,
      { config: { public: true }, schema: { tags, summary: 'Public status of an incident', params: TokenParams, response: { 200: StatusPage } } },
      async (request, reply) => {
        privatePage(reply);
        return replies.statusPage(ctx, request.params.token);
      },
    );
  }

  app.get('/incidents/status/:token', { config: { public: true }, schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    privatePage(reply);
    const page = await replies.statusPage(ctx, request.params.token).catch((err: unknown) => {
      if (err instanceof AppError && err.status === 404) return undefined;
      throw err;
    });
    if (!page) return reply.status(404).type('text/html; charset=utf-8').send(notFoundPage('Incident status', 'There is no status page at this address. Check the link you were sent.'));
    return reply.type('text/html; charset=utf-8').send(renderStatusPage(page));
  });
};
