// GET /v1/orgs/:org_slug/reports/oncall (issue #39): per person, over a range, the hours on call
// (from the schedules' history, modules/oncall) and the pages (from paging's record of them, counted
// in the database by oncall-report.repository.ts): at night and on weekends in the person's own
// zone, acknowledged and how fast, escalated past. The range, zone and access are the incident
// report's (reportAccess, reportFrame). Definitions, with a worked example, in docs/reports.md.
import { DateTime } from 'luxon';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { isTimeZone } from '../../lib/timezone.js';
import { hoursOnCall } from '../oncall/index.js';
import { toCsv } from './csv.js';
import { reportAccess, reportFrame } from './incident-report.js';
import { userProfiles } from './labels.repository.js';
import { pageFigures, pagedZones, type PageFigures, type PagesQuery } from './oncall-report.repository.js';
import type { OncallReport, OncallReportQuery, OncallReportRow } from './oncall-report.schemas.js';
import { offsetsOver } from './periods.js';
import { storedAnswer } from './stored-results.js';

/** What an account deleted since is called (as in the schedules' shifts). */
const DELETED_USER = 'Deleted user';

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const mean = (sum: number, n: number) => (n === 0 ? null : round(sum / n, 3));

type Counts = Omit<PageFigures, 'user_id'>;
const NONE: Counts = { pages: 0, night_pages: 0, weekend_pages: 0, acknowledged: 0, mtta_sum: 0, escalated_past: 0 };

function toRow(who: Pick<OncallReportRow, 'user_id' | 'name' | 'timezone'>, hours: number, c: Counts): OncallReportRow {
  return {
    ...who,
    hours_on_call: round(hours, 2),
    pages: c.pages,
    night_pages: c.night_pages,
    weekend_pages: c.weekend_pages,
    acknowledged: c.acknowledged,
    mtta_seconds: mean(c.mtta_sum, c.acknowledged),
    escalated_past: c.escalated_past,
  };
}

export async function oncallReport(ctx: AppContext, actor: Actor, orgSlug: string, q: OncallReportQuery, fresh = false): Promise<OncallReport> {
  const org = await reportAccess(ctx, actor, orgSlug);
  const { from, to, tz } = await reportFrame(ctx, org.id, q);
  const livemode = actor.mode === 'live' ? 1 : 0;
  const range = { orgId: org.id, livemode, from: new Date(from).toISOString(), to: new Date(to).toISOString() } as const;
  const question = JSON.stringify({ from: range.from, to: range.to, tz });
  const { report, asOf } = await storedAnswer(ctx, { orgId: org.id, livemode, kind: 'oncall', question }, fresh, (now) => figures(ctx, range, now.getTime()));
  return { from: range.from, to: range.to, tz, livemode: livemode === 1, as_of: asOf, ...report };
}

/** The rows and totals of the range, as of `now`. */
async function figures(ctx: AppContext, range: PagesQuery, now: number): Promise<Pick<OncallReport, 'rows' | 'totals'>> {
  const from = Date.parse(range.from);
  const to = Date.parse(range.to);
  // Hours served: the schedules are shared by both modes, and a shift still ahead is not served yet.
  const servedTo = Math.min(to, now);
  const hours = servedTo > from ? await hoursOnCall(ctx, range.orgId, from, servedTo) : new Map<number, number>();

  // Pages: the zones of the people paged, each with its offsets over the range, then one statement.
  const zones = (await pagedZones(ctx.db, range)).map((zone) => ({ zone, offsets: offsetsOver(isTimeZone(zone) ? zone : 'UTC', from, to) }));
  const pages = new Map((await pageFigures(ctx.database, range, zones)).map((p) => [p.user_id, p]));

  const ids = [...new Set([...hours.keys(), ...pages.keys()])];
  const people = await userProfiles(ctx.db, ids);
  const rows = ids
    .map((id) => {
      const p = people.get(id);
      return toRow({ user_id: id, name: p?.name ?? DELETED_USER, timezone: p?.timezone ?? null }, hours.get(id) ?? 0, pages.get(id) ?? NONE);
    })
    .sort((a, b) => b.pages - a.pages || a.name!.localeCompare(b.name!) || a.user_id! - b.user_id!);

  const sum = (k: keyof Counts) => [...pages.values()].reduce((s, p) => s + p[k], 0);
  const totalCounts: Counts = { pages: sum('pages'), night_pages: sum('night_pages'), weekend_pages: sum('weekend_pages'), acknowledged: sum('acknowledged'), mtta_sum: sum('mtta_sum'), escalated_past: sum('escalated_past') };
  const totalHours = [...hours.values()].reduce((s, h) => s + h, 0);
  return { rows, totals: toRow({ user_id: null, name: null, timezone: null }, totalHours, totalCounts) };
}

const CSV_HEADER = ['user_id', 'name', 'timezone', 'hours_on_call', 'pages', 'night_pages', 'weekend_pages', 'acknowledged', 'mtta_seconds', 'escalated_past'] as const;

/** The report as CSV: a header row, a row per person, then the totals (user_id `total`). */
export function oncallReportCsv(report: OncallReport): string {
  const line = (r: OncallReportRow, id: number | string | null) => [id, r.name, r.timezone, r.hours_on_call, r.pages, r.night_pages, r.weekend_pages, r.acknowledged, r.mtta_seconds, r.escalated_past];
  return toCsv(CSV_HEADER, [...report.rows.map((r) => line(r, r.user_id)), line(report.totals, 'total')]);
}

/** The CSV's file name: the days of `from` and `to` in the report's zone (the CSV's only times). */
export function oncallReportFileName(report: OncallReport): string {
  const day = (iso: string) => DateTime.fromISO(iso, { zone: report.tz }).toISODate();
  return `oncall-${day(report.from)}-${day(report.to)}.csv`;
}
