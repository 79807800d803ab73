import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import {
  AddTeamMemberBody,
  CreatedTeam,
  CreateTeamBody,
  Deleted,
  OrgParams,
  Removed,
  Team,
  TeamList,
  TeamMember,
  TeamMemberList,
  TeamMemberParams,
  TeamParams,
  UpdateTeamBody,
  UpdateTeamMemberBody,
} from './orgs.schemas.js';
import * as teams from './teams.service.js';

const tags = ['Teams'];
const base = '/v1/orgs/:org_slug/teams';

export const teamsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    base,
    { schema: { tags, summary: 'Create a team (admins; agency or enterprise plan)', params: OrgParams, body: CreateTeamBody, response: { 201: CreatedTeam } } },
    async (request, reply) => reply.status(201).send(await teams.createTeam(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(base, { schema: { tags, summary: "The org's teams", params: OrgParams, response: { 200: TeamList } } }, (request) =>
    teams.listTeams(ctx, actorOf(request), request.params.org_slug),
  );
  app.patch(
    `${base}/:team_slug`,
    { schema: { tags, summary: 'Update a team (admins)', params: TeamParams, body: UpdateTeamBody, response: { 200: Team } } },
    (request) => teams.updateTeam(ctx, actorOf(request), request.params.org_slug, request.params.team_slug, request.body),
  );
  app.delete(
    `${base}/:team_slug`,
    { schema: { tags, summary: 'Delete a team (admins)', params: TeamParams, response: { 200: Deleted } } },
    (request) => teams.deleteTeam(ctx, actorOf(request), request.params.org_slug, request.params.team_slug),
  );

  app.get(
    `${base}/:team_slug/members`,
    { schema: { tags, summary: 'Team members', params: TeamParams, response: { 200: TeamMemberList } } },
    (request) => teams.listTeamMembers(ctx, actorOf(request), request.params.org_slug, request.params.team_slug),
  );
  app.post(
    `${base}/:team_slug/members`,
    {
      schema: { tags, summary: 'Add an org member to the team (admins; members add themselves)', params: TeamParams, body: AddTeamMemberBody, response: { 201: TeamMember } },
    },
    async (request, reply) =>
      reply.status(201).send(await teams.addTeamMember(ctx, actorOf(request), request.params.org_slug, request.params.team_slug, request.body)),
  );
  app.patch(
    `${base}/:team_slug/members/:user_id`,
    {
      schema: { tags, summary: 'Turn a member active or inactive for routing (admins, or the member)', params: TeamMemberParams, body: UpdateTeamMemberBody, response: { 200: TeamMember } },
    },
    (request) =>
      teams.setTeamMemberActive(ctx, actorOf(request), request.params.org_slug, request.params.team_slug, request.params.user_id, request.body.active),
  );
  app.delete(
    `${base}/:team_slug/members/:user_id`,
    { schema: { tags, summary: 'Remove a member from the team (admins, or the member)', params: TeamMemberParams, response: { 200: Removed } } },
    (request) => teams.removeTeamMember(ctx, actorOf(request), request.params.org_slug, request.params.team_slug, request.params.user_id),
  );
};
