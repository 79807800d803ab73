import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import * as members from './members.service.js';
import {
  AddMemberBody,
  CreateOrgBody,
  Deleted,
  Invited,
  Member,
  MemberList,
  MemberParams,
  Org,
  OrgList,
  OrgParams,
  Removed,
  UpdateMemberBody,
  UpdateOrgBody,
} from './orgs.schemas.js';
import * as orgs from './orgs.service.js';

const tags = ['Organizations'];

/** `memberRemoved`: what else goes when a member leaves (app.ts: their devices are switched off, modules/signals). */
export const orgsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext; memberRemoved?: members.MemberRemoved }> = async (app, { ctx, memberRemoved }) => {
  app.post(
    '/v1/orgs',
    { schema: { tags, summary: 'Create an org (agency or enterprise plan)', body: CreateOrgBody, response: { 201: Org } } },
    async (request, reply) => reply.status(201).send(await orgs.createOrg(ctx, actorOf(request), request.body)),
  );
  app.get('/v1/orgs', { schema: { tags, summary: "The caller's orgs", response: { 200: OrgList } } }, (request) =>
    orgs.listOrgs(ctx, actorOf(request)),
  );
  app.get('/v1/orgs/:org_slug', { schema: { tags, summary: 'One org', params: OrgParams, response: { 200: Org } } }, (request) =>
    orgs.getOrg(ctx, actorOf(request), request.params.org_slug),
  );
  app.patch(
    '/v1/orgs/:org_slug',
    { schema: { tags, summary: 'Rename or describe an org (owners)', params: OrgParams, body: UpdateOrgBody, response: { 200: Org } } },
    (request) => orgs.updateOrg(ctx, actorOf(request), request.params.org_slug, request.body),
  );
  app.delete(
    '/v1/orgs/:org_slug',
    { schema: { tags, summary: 'Delete an org and everything in it (owners)', params: OrgParams, response: { 200: Deleted } } },
    (request) => orgs.deleteOrg(ctx, actorOf(request), request.params.org_slug),
  );

  app.get(
    '/v1/orgs/:org_slug/members',
    { schema: { tags, summary: 'Members, and pending invites for admins', params: OrgParams, response: { 200: MemberList } } },
    (request) => members.listMembers(ctx, actorOf(request), request.params.org_slug),
  );
  app.post(
    '/v1/orgs/:org_slug/members',
    {
      schema: {
        tags,
        summary: 'Add a registered user, or invite an email (admins; owners to make owners)',
        params: OrgParams,
        body: AddMemberBody,
        response: { 201: Type.Union([Member, Invited]) },
      },
    },
    async (request, reply) => {
      const r = await members.addMember(ctx, actorOf(request), request.params.org_slug, request.body);
      return reply.status(r.status).send(r.body);
    },
  );
  app.patch(
    '/v1/orgs/:org_slug/members/:user_id',
    { schema: { tags, summary: "Change a member's role (admins; owners for owners)", params: MemberParams, body: UpdateMemberBody, response: { 200: Member } } },
    (request) => members.updateMember(ctx, actorOf(request), request.params.org_slug, request.params.user_id, request.body.role),
  );
  app.delete(
    '/v1/orgs/:org_slug/members/:user_id',
    { schema: { tags, summary: 'Remove a member (admins), or leave', params: MemberParams, response: { 200: Removed } } },
    (request) => members.removeMember(ctx, actorOf(request), request.params.org_slug, request.params.user_id, memberRemoved),
  );
};
