import { Type, type Static } from '@sinclair/typebox';

const Instant = Type.String({ format: 'date-time', maxLength: 40, description: 'ISO 8601 with an offset' });

export const GROUPINGS = ['day', 'week', 'month', 'priority', 'source', 'integration', 'assignee', 'team'] as const;

/** The query every report takes: the range, the zone, the format (reportFrame in incident-report.ts checks them). */
export const ReportRange = {
  from: Instant,
  to: Instant,
  tz: Type.Optional(Type.String({ maxLength: 64, description: "an IANA time zone (default the org owner's)" })),
  format: Type.Optional(Type.Literal('csv', { description: 'CSV instead of JSON (as `Accept: text/csv`)' })),
};

export const IncidentReportQuery = Type.Object({
  from: ReportRange.from,
  to: ReportRange.to,
  group_by: Type.Optional(Type.String({ maxLength: 20, description: `one of ${GROUPINGS.join(', ')} (default day)` })),
  tz: ReportRange.tz,
  format: ReportRange.format,
});
export type IncidentReportQuery = Static<typeof IncidentReportQuery>;

const Seconds = Type.Object(
  { p50: Type.Union([Type.Number(), Type.Null()]), p90: Type.Union([Type.Number(), Type.Null()]), mean: Type.Union([Type.Number(), Type.Null()]) },
  { title: 'ReportSeconds', description: 'nearest-rank percentiles and the mean, in seconds; null when no incident of the row has one' },
);

export const IncidentReportRow = Type.Object(
  {
    key: Type.Union([Type.String(), Type.Null()], { description: 'the period (YYYY-MM-DD, its Monday for a week, YYYY-MM), the priority or source, or the id of the integration, assignee or team; null: none' }),
    label: Type.Union([Type.String(), Type.Null()], { description: 'the name of the integration, assignee or team; for the others the key' }),
    incidents: Type.Integer(),
    acknowledged: Type.Integer(),
    resolved: Type.Integer(),
    mtta_seconds: Seconds,
    mttr_seconds: Seconds,
    sla_met_percent: Type.Union([Type.Number(), Type.Null()], { description: 'of the incidents whose SLA came due (or that were resolved before it did), those resolved in time; null when none' }),
    escalated_percent: Type.Union([Type.Number(), Type.Null()]),
    reopened: Type.Integer(),
  },
  { title: 'IncidentReportRow' },
);

export const IncidentReport = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    tz: Type.String(),
    group_by: Type.String(),
    livemode: Type.Boolean(),
    as_of: Type.String({ format: 'date-time', description: 'the instant the figures are of: now, or for a report that takes long to compute its stored answer (docs/reports.md, "Stored answers")' }),
    rows: Type.Array(IncidentReportRow),
    totals: IncidentReportRow,
  },
  { title: 'IncidentReport' },
);
export type IncidentReport = Static<typeof IncidentReport>;
export type IncidentReportRow = Static<typeof IncidentReportRow>;
