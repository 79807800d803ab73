import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import { incidentReport, incidentReportCsv } from './incident-report.js';
import { IncidentReport, IncidentReportQuery } from './incident-report.schemas.js';

const tags = ['Reports'];

/** CSV when asked for by `?format=csv` or an Accept header that prefers text/csv to JSON. */
export function wantsCsv(request: FastifyRequest, format: string | undefined): boolean {
  if (format === 'csv') return true;
  const accept = request.headers.accept ?? '';
  return /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/** `Cache-Control: no-cache` (or `no-store`) on the request: the answer is computed for it, never a stored one (stored-results.ts). */
export const wantsFresh = (cacheControl: string | undefined) => /\bno-(cache|store)\b/i.test(cacheControl ?? '');

export const incidentReportRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/orgs/:org_slug/reports/incidents',
    {
      schema: {
        tags,
        summary: 'Incidents opened in a range: counts, MTTA, MTTR, SLA met, escalated, reopened; by period or attribute (admins and owners)',
        params: OrgParams,
        querystring: IncidentReportQuery,
        response: { 200: { description: 'The report, as JSON or CSV (RFC 4180)', content: { 'application/json': { schema: IncidentReport }, 'text/csv': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const report = await incidentReport(ctx, actorOf(request), request.params.org_slug, request.query, wantsFresh(request.headers['cache-control']));
      if (!wantsCsv(request, request.query.format)) return report;
      const name = `incidents-${report.from.slice(0, 10)}-${report.to.slice(0, 10)}-${report.group_by}.csv`;
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`).send(incidentReportCsv(report));
    },
  );
};
