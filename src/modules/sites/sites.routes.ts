import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import { CreateSiteBody, DeletedSite, Site, SiteList, SiteParams, UpdateSiteBody } from './sites.schemas.js';
import * as service from './sites.service.js';

const tags = ['Sites'];

export const sitesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const sites = '/v1/orgs/:org_slug/sites';
  app.post(
    sites,
    { schema: { tags, summary: 'Create a site, a circle or a polygon (admins and owners)', params: OrgParams, body: CreateSiteBody, response: { 201: Site } } },
    async (request, reply) => reply.status(201).send(await service.createSite(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(sites, { schema: { tags, summary: 'The org’s sites (members)', params: OrgParams, response: { 200: SiteList } } }, (request) =>
    service.listSites(ctx, actorOf(request), request.params.org_slug),
  );
  app.get(`${sites}/:id`, { schema: { tags, summary: 'One site (members)', params: SiteParams, response: { 200: Site } } }, (request) =>
    service.getSite(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
  app.patch(
    `${sites}/:id`,
    { schema: { tags, summary: 'Rename a site or change its shape (admins and owners)', params: SiteParams, body: UpdateSiteBody, response: { 200: Site } } },
    (request) => service.updateSite(ctx, actorOf(request), request.params.org_slug, request.params.id, request.body),
  );
  app.delete(`${sites}/:id`, { schema: { tags, summary: 'Delete a site (admins and owners)', params: SiteParams, response: { 200: DeletedSite } } }, (request) =>
    service.deleteSite(ctx, actorOf(request), request.params.org_slug, request.params.id),
  );
};
