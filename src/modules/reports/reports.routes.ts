import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { VisitsParams, VisitsQuery, VisitsReportSchema } from './reports.schemas.js';
import { visitsCsv, visitsReport } from './reports.service.js';

const tags = ['Reports'];

export const reportsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/orgs/:org_slug/reports/visits',
    {
      schema: {
        tags,
        summary: 'Visits per person and site and per incident (admins and owners): JSON, or CSV with Accept: text/csv',
        params: VisitsParams,
        querystring: VisitsQuery,
        response: {
          200: {
            description: 'Each visit with its arrival, departure and duration',
            content: { 'application/json': { schema: VisitsReportSchema }, 'text/csv': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const report = await visitsReport(ctx, actorOf(request), request.params.org_slug, request.query);
      if (/text\/csv/.test(request.headers.accept ?? '')) {
        return reply.header('content-disposition', 'attachment; filename="visits.csv"').type('text/csv; charset=utf-8').send(visitsCsv(report));
      }
      return report;
    },
  );
};
