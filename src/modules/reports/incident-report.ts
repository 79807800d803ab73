// GET /v1/orgs/:org_slug/reports/incidents (issue #39): the incidents opened in a range, grouped by
// period in a zone or by an attribute, with how fast they were acknowledged and resolved, the SLA
// met, escalations and reopenings. Figures come from the database (incident-report.repository.ts);
// this file checks the question, finds the zone's offsets and names the rows. Definitions, with a
// worked example, in docs/reports.md.
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { DAY } from '../../lib/clock.js';
import { invalidField } from '../../lib/errors.js';
import { isTimeZone } from '../../lib/timezone.js';
import { orgAccess } from '../orgs/index.js';
import { toCsv } from './csv.js';
import { incidentReport as queryReport, type Grouping, type ReportRow } from './incident-report.repository.js';
import { integrationNames, ownerTimeZone, teamNames, userNames } from './labels.repository.js';
import { offsetsOver, periodKeys } from './periods.js';
import { storedAnswer } from './stored-results.js';
import { GROUPINGS, type IncidentReport, type IncidentReportQuery, type IncidentReportRow } from './incident-report.schemas.js';

/** The longest range a report covers. */
export const MAX_REPORT_DAYS = 400;

/** Admins and owners; the credential's mode picks live or test incidents. */
export async function reportAccess(ctx: AppContext, actor: Actor, orgSlug: string) {
  return (await orgAccess(ctx, actor, { slug: orgSlug }, { role: 'admin' })).org;
}

/** `from`, `to` (to after from, at most 400 days) and the zone (valid IANA; default the org owner's, else UTC). */
export async function reportFrame(ctx: AppContext, orgId: number, q: { from: string; to: string; tz?: string | undefined }) {
  const from = Date.parse(q.from);
  const to = Date.parse(q.to);
  if (!(to > from)) throw invalidField('to', 'must be after from');
  if (to - from > MAX_REPORT_DAYS * DAY) throw invalidField('to', `must be at most ${MAX_REPORT_DAYS} days after from`);
  if (q.tz !== undefined && !isTimeZone(q.tz)) throw invalidField('tz', 'is not a known IANA time zone');
  const owner = q.tz === undefined ? await ownerTimeZone(ctx.db, orgId) : undefined;
  const tz = q.tz ?? (owner && isTimeZone(owner) ? owner : 'UTC');
  return { from, to, tz };
}

const round = (n: number | null, digits = 1) => (n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits);
const percent = (part: number, whole: number) => (whole === 0 ? null : round((100 * part) / whole));

function toRow(r: ReportRow, label: string | null): IncidentReportRow {
  return {
    key: r.key,
    label,
    incidents: r.incidents,
    acknowledged: r.acknowledged,
    resolved: r.resolved,
    mtta_seconds: { p50: round(r.mtta_p50, 3), p90: round(r.mtta_p90, 3), mean: round(r.mtta_mean, 3) },
    mttr_seconds: { p50: round(r.mttr_p50, 3), p90: round(r.mttr_p90, 3), mean: round(r.mttr_mean, 3) },
    sla_met_percent: percent(r.sla_met, r.sla_due),
    escalated_percent: percent(r.escalated, r.incidents),
    reopened: r.reopened,
  };
}

const ZERO: Omit<ReportRow, 'key'> = { incidents: 0, acknowledged: 0, resolved: 0, reopened: 0, escalated: 0, sla_due: 0, sla_met: 0, mtta_mean: null, mtta_p50: null, mtta_p90: null, mttr_mean: null, mttr_p50: null, mttr_p90: null };

export async function incidentReport(ctx: AppContext, actor: Actor, orgSlug: string, q: IncidentReportQuery, fresh = false): Promise<IncidentReport> {
  const org = await reportAccess(ctx, actor, orgSlug);
  const group = (q.group_by ?? 'day') as Grouping;
  if (!GROUPINGS.includes(group)) throw invalidField('group_by', `must be one of ${GROUPINGS.join(', ')}`);
  const { from, to, tz } = await reportFrame(ctx, org.id, q);
  const livemode = actor.mode === 'live' ? 1 : 0;
  const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  const key = JSON.stringify({ ...range, tz, group_by: group });
  const question = { from, to, tz, group, orgId: org.id, livemode } as const;
  const { report, asOf } = await storedAnswer(ctx, { orgId: org.id, livemode, kind: 'incidents', question: key }, fresh, (now) => figures(ctx, question, now));
  return { ...range, tz, group_by: group, livemode: livemode === 1, as_of: asOf, ...report };
}

/** The rows (every period of a period grouping, else the keys with incidents) and totals of a question, as of `now`. */
async function figures(
  ctx: AppContext,
  q: { from: number; to: number; tz: string; group: Grouping; orgId: number; livemode: 0 | 1 },
  now: Date,
): Promise<Pick<IncidentReport, 'rows' | 'totals'>> {
  const { from, to, tz, group, orgId } = q;
  const range = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  const { rows, totals } = await queryReport(ctx.database, { orgId, livemode: q.livemode, ...range, dueBy: now.toISOString(), group, offsets: offsetsOver(tz, from, to) });
  if (group === 'day' || group === 'week' || group === 'month') {
    const byKey = new Map(rows.map((r) => [r.key, r]));
    return { rows: periodKeys(group, tz, from, to).map((k) => toRow(byKey.get(k) ?? { ...ZERO, key: k }, k)), totals: toRow(totals, null) };
  }
  const ids = rows.flatMap((r) => (r.key === null ? [] : [Number(r.key)]));
  const names = group === 'assignee' ? await userNames(ctx.db, ids) : group === 'team' ? await teamNames(ctx.db, orgId, ids) : group === 'integration' ? await integrationNames(ctx.db, orgId, ids) : undefined;
  const out = rows
    .map((r) => toRow(r, r.key === null ? null : names ? (names.get(Number(r.key)) ?? null) : r.key))
    .sort((a, b) => b.incidents - a.incidents || String(a.key).localeCompare(String(b.key)));
  return { rows: out, totals: toRow(totals, null) };
}

const CSV_HEADER = [
  'key', 'label', 'incidents', 'acknowledged', 'resolved',
  'mtta_p50_seconds', 'mtta_p90_seconds', 'mtta_mean_seconds', 'mttr_p50_seconds', 'mttr_p90_seconds', 'mttr_mean_seconds',
  'sla_met_percent', 'escalated_percent', 'reopened',
] as const;

/** The report as CSV: a header row, a row per key, then the totals (key `total`). */
export function incidentReportCsv(report: IncidentReport): string {
  const line = (r: IncidentReportRow, key: string | null) => [
    key, r.label, r.incidents, r.acknowledged, r.resolved,
    r.mtta_seconds.p50, r.mtta_seconds.p90, r.mtta_seconds.mean, r.mttr_seconds.p50, r.mttr_seconds.p90, r.mttr_seconds.mean,
    r.sla_met_percent, r.escalated_percent, r.reopened,
  ];
  return toCsv(CSV_HEADER, [...report.rows.map((r) => line(r, r.key)), line(report.totals, 'total')]);
}
