import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import { wantsCsv, wantsFresh } from './incident-report.routes.js';
import { oncallReport, oncallReportCsv, oncallReportFileName } from './oncall-report.js';
import { OncallReport, OncallReportQuery } from './oncall-report.schemas.js';

const tags = ['Reports'];

export const oncallReportRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/orgs/:org_slug/reports/oncall',
    {
      schema: {
        tags,
        summary: 'Per person over a range: hours on call, pages, at night and on weekends in their zone, acknowledged, MTTA, escalated past (admins and owners)',
        params: OrgParams,
        querystring: OncallReportQuery,
        response: { 200: { description: 'The report, as JSON or CSV (RFC 4180)', content: { 'application/json': { schema: OncallReport }, 'text/csv': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const report = await oncallReport(ctx, actorOf(request), request.params.org_slug, request.query, wantsFresh(request.headers['cache-control']));
      if (!wantsCsv(request, request.query.format)) return report;
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${oncallReportFileName(report)}"`).send(oncallReportCsv(report));
    },
  );
};
