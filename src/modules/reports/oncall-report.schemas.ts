import { Type, type Static } from '@sinclair/typebox';
import { ReportRange } from './incident-report.schemas.js';

export const OncallReportQuery = Type.Object(ReportRange);
export type OncallReportQuery = Static<typeof OncallReportQuery>;

export const OncallReportRow = Type.Object(
  {
    user_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null in the totals' }),
    name: Type.Union([Type.String(), Type.Null()], { description: '"Deleted user" for an account deleted since; null in the totals' }),
    timezone: Type.Union([Type.String(), Type.Null()], { description: "the person's zone, which night and weekend are judged in; null for a deleted account and in the totals" }),
    hours_on_call: Type.Number({ description: 'hours on call in any schedule of the org up to now (two schedules at once count once), two decimals' }),
    pages: Type.Integer({ description: 'times paged (once per person and level or page by hand, whatever the notifications)' }),
    night_pages: Type.Integer({ description: 'pages from 22:00 to 07:00 in the person\'s zone' }),
    weekend_pages: Type.Integer({ description: "pages on a Saturday or Sunday in the person's zone" }),
    acknowledged: Type.Integer({ description: 'pages the person answered by acknowledging the incident' }),
    mtta_seconds: Type.Union([Type.Number(), Type.Null()], { description: 'mean seconds from a page to its acknowledgement; null when none acknowledged' }),
    escalated_past: Type.Integer({ description: 'pages of a level the escalation moved past (next level or round, or the end) without their acknowledgement' }),
  },
  { title: 'OncallReportRow' },
);

export const OncallReport = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    tz: Type.String(),
    livemode: Type.Boolean(),
    as_of: Type.String({ format: 'date-time', description: 'the instant the figures are of: now, or for a report that takes long to compute its stored answer (docs/reports.md, "Stored answers")' }),
    rows: Type.Array(OncallReportRow),
    totals: OncallReportRow,
  },
  { title: 'OncallReport' },
);
export type OncallReport = Static<typeof OncallReport>;
export type OncallReportRow = Static<typeof OncallReportRow>;
